// The ZooKeeper store's session: one zk_link (the single-threaded C client
// driven from the loop) at a time, its server names resolved by asio first;
// what each state change means (connected, connecting again, expired,
// refused, or a session no server takes back within its timeout, which is a
// reset); and the calls that wait for a session until one is up or
// connect_timeout has passed.
#include "zookeeper_store_impl.hpp"

#include <zookeeper/zookeeper.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace baton {
namespace {

std::string state_text(int state) {
  if (state == ZOO_CONNECTING_STATE) return "connecting";
  if (state == ZOO_ASSOCIATING_STATE) return "associating";
  if (state == ZOO_CONNECTED_STATE) return "connected";
  if (state == ZOO_EXPIRED_SESSION_STATE) return "session expired";
  if (state == ZOO_AUTH_FAILED_STATE) return "authentication failed";
  return "not connected";
}

}  // namespace

void zookeeper_store::impl::ensure_link() {
  if (shell.closed() || link) return;
  if (numeric_hosts.empty()) {
    resolve();
    return;
  }
  zk_link_options o;
  o.hosts = numeric_hosts;
  o.session_timeout = session_timeout();
  o.digest = digest;
  o.owner = shell.guard();
  const auto gen = ++link_gen;
  o.on_state = [this, gen](int state) {
    if (gen == link_gen) on_state(state);
  };
  o.on_node_event = [this, gen](int type, const std::string& path) {
    if (gen == link_gen) node_event(type, path);
  };
  // With three servers or more the client's next server is another one
  // (it steps two ahead after a broken connection: with two, it comes
  // back to the one it left). A stalled server is left after
  // command_timeout, within the room a leader's renewals have.
  if (addresses.size() >= 3) o.silence_limit = options.command_timeout;
  o.on_move = [this, gen](const std::string& server, milliseconds silent) {
    if (gen == link_gen) on_move(server, silent);
  };
  std::string error;
  session_up = false;
  last_state_code = 0;
  link = zk_link::open(io, std::move(o), error);
  if (!link) fail_waiters(note_failure({zookeeper_errc::connect_failed, error}));
}

// Names are resolved by asio (off the loop), once per session.
void zookeeper_store::impl::resolve() {
  if (resolving) return;
  resolving = true;
  if (!resolver) resolver = std::make_unique<asio::ip::tcp::resolver>(io);
  auto pending = std::make_shared<std::size_t>(servers.size());
  auto found = std::make_shared<std::vector<server_address_of>>();
  auto errors = std::make_shared<std::string>();
  auto one_done = [this, pending, found, errors] {
    if (--*pending > 0) return;
    resolving = false;
    if (found->empty()) {
      fail_waiters(
          note_failure({zookeeper_errc::connect_failed, "cannot resolve the ZooKeeper servers " +
                                                            options.servers + ":" + *errors}));
      return;
    }
    std::vector<server_address> numeric;
    for (const auto& f : *found) numeric.push_back(f.address);
    numeric_hosts = client_hosts(numeric);
    addresses = std::move(*found);
    ensure_link();
  };
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const auto& s = servers[i];
    if (s.numeric) {
      found->push_back({s, i});
      one_done();
      continue;
    }
    resolver->async_resolve(
        s.host, std::to_string(s.port),
        [w = shell.guard(), found, errors, one_done, host = s.host, i](
            const boost::system::error_code& ec, const asio::ip::tcp::resolver::results_type& r) {
          if (w.expired()) return;
          if (ec) {
            *errors += " " + host + ": " + ec.message();
          } else {
            for (const auto& e : r) {
              found->push_back(
                  {{e.endpoint().address().to_string(), e.endpoint().port(), true}, i});
            }
          }
          one_done();
        });
  }
}

// The link left a server that answered nothing: the calls in flight fail
// with a connection loss that says why, and the server's row too.
void zookeeper_store::impl::on_move(const std::string& server, milliseconds silent) {
  move_reason = "ZooKeeper server " + server + " answered nothing for " +
                std::to_string(silent.count()) + " ms: the session moves to the next server";
  note_failure({zookeeper_errc::connection_lost, move_reason});
}

// A call's failure; a connection loss the link caused by leaving a silent
// server says so.
store_error zookeeper_store::impl::call_failure(int rc, const std::string& what) const {
  auto e = zoo_failure(rc, what);
  if (rc == ZCONNECTIONLOSS && !move_reason.empty())
    e = {e.code, e.message() + " (" + move_reason + ")"};
  return e;
}

void zookeeper_store::impl::on_state(int state) {
  // The watcher and the link's own check may both tell one change.
  if (state == last_state_code) return;
  last_state_code = state;
  if (state == ZOO_CONNECTED_STATE) {
    move_reason.clear();
    lost_timer.cancel();
    session_up = true;
    server_in_use = server_of(addresses, link->connected_server());
    // A server's last error stands until it answers again.
    if (server_in_use) server_errors[*server_in_use].clear();
    // At every connect: another server of the ensemble may grant another
    // timeout (its own min/maxSessionTimeout).
    negotiated = link->negotiated_timeout();
    if (const auto problem = session_timeout_problem(negotiated, ttl())) {
      session_problem = {zookeeper_errc::session_too_short,
                         "ZooKeeper " + options.servers + ": " + *problem};
    } else {
      session_problem = {};
    }
    last_state = "connected";
    run_waiters({});
    if (watching) arm_watch();
    return;
  }
  last_state = state_text(state);
  if (server_in_use && state != ZOO_AUTH_FAILED_STATE) {
    // The server the session was on let it go (it stopped, was cut off,
    // or the connection broke): the client tries the next one.
    server_errors[*server_in_use] =
        move_reason.empty() ? "the connection was lost (" + last_state + ")" : move_reason;
    server_in_use.reset();
  }
  if (state == ZOO_EXPIRED_SESSION_STATE) {
    // A plain expiry: the ensemble has its data; only this session (and
    // its ephemeral nodes) ended.
    session_lost(
        "the ZooKeeper session expired",
        "ZooKeeper expired this node's session: no server heard from it for the "
        "session timeout of " +
            std::to_string((negotiated.count() > 0 ? negotiated : session_timeout()).count()) +
            " ms; the ensemble's data is intact");
    return;
  }
  if (state == ZOO_AUTH_FAILED_STATE) {
    auto e = note_failure({zookeeper_errc::auth_failed,
                           "ZooKeeper " + options.servers +
                               " refused the digest credentials of user " + options.auth_user});
    server_in_use.reset();
    drop_link();
    fail_waiters(e);
    if (watching) shell.set_wakeups(false, e.message());
    return;
  }
  // Connecting again: the watch may miss events until it is armed again,
  // and the registry's and the record's caches are read again by the next
  // acquire.
  watch_armed = false;
  registry_stale = true;
  record_stale = true;
  lease_gone = false;
  if (watching && shell.wakeups_trusted()) {
    const auto alive = shell.guard();
    shell.set_wakeups(false, "the connection to ZooKeeper " + options.servers + " was lost");
    if (alive.expired() || shell.closed()) return;
  }
  if (session_up && !lost_timer_running) {
    // A server that lost its data refuses the old session without ever
    // saying it expired; one that no server takes back within its timeout
    // is gone for the server too.
    lost_timer_running = true;
    const auto timeout = negotiated.count() > 0 ? negotiated : session_timeout();
    lost_timer.expires_after(timeout);
    lost_timer.async_wait(
        [this, w = shell.guard(), gen = link_gen, timeout](const boost::system::error_code& ec) {
          if (w.expired()) return;
          lost_timer_running = false;
          if (ec || gen != link_gen || !link || link->connected()) return;
          session_lost("no ZooKeeper server took the session back within its timeout of " +
                       std::to_string(timeout.count()) +
                       " ms (an ensemble that lost its data refuses it)");
        });
  }
}

// `what`: what happened, when it is known not to be lost data (reset::what).
void zookeeper_store::impl::session_lost(const std::string& why, const std::string& what) {
  lost_timer.cancel();
  lost_timer_running = false;
  drop_link();
  drop_term(false);
  pending_reset = why;
  pending_reset_at = mono_clock::now();
  bool names = false;
  for (const auto& s : servers) names = names || !s.numeric;
  if (names) numeric_hosts.clear();
  const auto alive = shell.guard();
  if (watching) shell.set_wakeups(false, why);
  if (alive.expired() || shell.closed()) return;
  shell.report_reset(store_events::reset{why, false, {}, what});
  if (alive.expired() || shell.closed()) return;
  if (!waiters.empty() || watching) ensure_link();
}

void zookeeper_store::impl::drop_link() {
  if (!link) return;
  auto l = std::move(link);
  link.reset();
  ++link_gen;
  session_up = false;
  server_in_use.reset();
  watch_armed = false;
  arming = false;
  lease_gone = false;
  // The close request is not sent (zk_link::close): a lease node lives
  // until the session expires, as after a crash, rather than vanishing
  // while the leader may still count on it.
  l->close();
}

// Calls `fn` once a session is up (at once when it is), or with the
// failure after `wait` (0 = connect_timeout).
void zookeeper_store::impl::with_session(std::function<void(store_error)> fn, milliseconds wait) {
  if (link && session_up && link->connected()) {
    fn({});
    return;
  }
  const auto id = ++waiter_id;
  if (wait.count() <= 0) wait = options.connect_timeout;
  auto timer = std::make_shared<asio::steady_timer>(io, wait);
  waiters.push_back({id, std::move(fn), timer});
  timer->async_wait([this, w = shell.guard(), id, wait](const boost::system::error_code& ec) {
    if (ec || w.expired()) return;
    for (auto it = waiters.begin(); it != waiters.end(); ++it) {
      if (it->id != id) continue;
      auto waiting = std::move(it->fn);
      waiters.erase(it);
      waiting(note_failure(
          {zookeeper_errc::connect_failed,
           "no ZooKeeper server of " + options.servers + " gave a session within " +
               std::to_string(wait.count()) + " ms (" + last_state + ")"}));
      return;
    }
  });
  ensure_link();
}

void zookeeper_store::impl::run_waiters(const store_error& e) {
  auto all = std::move(waiters);
  waiters.clear();
  for (auto& w : all) {
    w.timer->cancel();
    w.fn(e);
  }
}

}  // namespace baton
