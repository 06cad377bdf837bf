// zookeeper_store: the protocol of lease_nodes.hpp over one session
// (zk_link.hpp) at a time. Every public call is an `op` that completes once:
// by its own steps, by its deadline (connect_timeout + command_timeout), or
// aborted by close(); a call that needs a session waits for one (up to
// connect_timeout), across a replaced session too. Each session registers
// the store once (an ephemeral node under <election>/candidates), on the
// first acquire or renewal that runs on it; an acquire reads the registry's
// names too, in its own round trip, when its children watch fired since the
// last read.
#include "zookeeper_store.hpp"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <fstream>
#include <list>
#include <optional>
#include <stdexcept>
#include <utility>

#include "lease_nodes.hpp"
#include "server_list.hpp"
#include "store/nonce.hpp"
#include "store/store_shell.hpp"
#include "zk_link.hpp"
#include "zookeeper_on_demand.hpp"

namespace baton {
namespace {

namespace asio = boost::asio;
using namespace zookeeper_detail;
using store_detail::store_shell;

store_error zoo_failure(int rc, const std::string& what) {
  return {classify_zoo_result(rc), what + ": " + zoo_result_text(rc)};
}

std::string read_password(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::invalid_argument("zookeeper_store: cannot read the password file " + file);
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty())
    throw std::invalid_argument("zookeeper_store: the password file " + file + " is empty");
  return line;
}

std::string state_text(int state) {
  if (state == ZOO_CONNECTING_STATE) return "connecting";
  if (state == ZOO_ASSOCIATING_STATE) return "associating";
  if (state == ZOO_CONNECTED_STATE) return "connected";
  if (state == ZOO_EXPIRED_SESSION_STATE) return "session expired";
  if (state == ZOO_AUTH_FAILED_STATE) return "authentication failed";
  return "not connected";
}

template <typename... Fs>
struct overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
overloaded(Fs...) -> overloaded<Fs...>;

constexpr int max_attempts = 4;

}  // namespace

// Named, not anonymous: zookeeper_store::impl (declared in the header) holds
// them, and a type with linkage may not hold one without (unity batches
// compile this file as if it were a header, and GCC says so).
namespace zookeeper_detail {

// One public call: its handler runs once, whoever finishes it first.
struct op_base {
  virtual ~op_base() = default;
  virtual void abort() = 0;
  bool done = false;
};

template <typename Answer>
struct op final : op_base {
  op(boost::asio::io_context& io, std::function<void(store_error, Answer)> h)
      : handler(std::move(h)), deadline(io) {}
  void finish(store_error e, Answer a) {
    if (done) return;
    done = true;
    deadline.cancel();
    auto h = std::move(handler);
    h(std::move(e), std::move(a));
  }
  void abort() override { finish(store_detail::store_shell::aborted(), Answer{}); }

  std::function<void(store_error, Answer)> handler;
  boost::asio::steady_timer deadline;
};

}  // namespace zookeeper_detail

using zookeeper_detail::op;
using zookeeper_detail::op_base;

struct zookeeper_store::impl {
  impl(asio::io_context& context, zookeeper_store_options opts, std::vector<server_address> list,
       std::string credentials)
      : io(context),
        options(std::move(opts)),
        shell(context),
        paths(make_paths(options.path, options.identity.election)),
        nonce(store_detail::new_nonce()),
        servers(std::move(list)),
        digest(std::move(credentials)),
        lost_timer(context),
        expiry_timer(context) {
    bool all_numeric = true;
    for (const auto& s : servers) all_numeric = all_numeric && s.numeric;
    if (all_numeric) {
      numeric_hosts = client_hosts(servers);
      for (std::size_t i = 0; i < servers.size(); ++i) addresses.push_back({servers[i], i});
    }
    server_errors.resize(servers.size());
  }

  ~impl() {
    shell.retire();
    drop_link();
  }

  milliseconds ttl() const { return options.identity.ttl; }
  milliseconds session_timeout() const {
    return options.session_timeout.count() > 0 ? options.session_timeout : ttl();
  }
  std::string where() const { return options.servers + " " + paths.election; }

  // Keeps a failure for status(), and for the row of the server the session
  // is on (a failure while no server holds the session is the store's only:
  // the client tries the servers in turn, which one failed is unknown).
  store_error note_failure(store_error e) {
    if (server_in_use) server_errors[*server_in_use] = e.message();
    return shell.note_failure(std::move(e));
  }

  // Runs `fn` on the loop later, unless the store is gone by then.
  void later(std::function<void()> fn) {
    asio::post(io, [w = shell.guard(), fn = std::move(fn)] {
      if (!w.expired()) fn();
    });
  }

  template <typename Answer>
  std::shared_ptr<op<Answer>> start(std::function<void(store_error, Answer)> handler,
                                    const char* what) {
    auto o = std::make_shared<op<Answer>>(io, std::move(handler));
    std::erase_if(ops, [](const std::weak_ptr<op_base>& w) {
      const auto p = w.lock();
      return !p || p->done;
    });
    ops.push_back(o);
    const auto limit = options.connect_timeout + options.command_timeout;
    o->deadline.expires_after(limit);
    o->deadline.async_wait([this, w = shell.guard(), weak_op = std::weak_ptr<op<Answer>>(o), what,
                            limit](const boost::system::error_code& ec) {
      if (ec || w.expired()) return;
      if (auto p = weak_op.lock()) {
        p->finish(note_failure({zookeeper_errc::timeout,
                                std::string(what) + " on ZooKeeper " + where() +
                                    ": no answer within " + std::to_string(limit.count()) + " ms"}),
                  Answer{});
      }
    });
    return o;
  }

  // Every call's prologue: refused once closed; otherwise `body(o)` runs on
  // the loop later (a call never completes inline), unless the call is
  // answered or the store closed by then.
  template <typename Answer, typename Body>
  void begin_call(std::function<void(store_error, Answer)>& handler, const char* what, Body body) {
    if (shell.reject_if_closed(handler)) return;
    auto o = start<Answer>(std::move(handler), what);
    later([this, o, body = std::move(body)]() mutable {
      if (o->done) return;
      if (shell.closed()) return o->abort();
      body(o);
    });
  }

  // The same, for a call that needs the session: `body(o)` once it is up;
  // answered with why not when it does not come up in time.
  template <typename Answer, typename Body>
  void begin_session_call(std::function<void(store_error, Answer)>& handler, const char* what,
                          Body body) {
    begin_call(handler, what,
               [this, body = std::move(body)](std::shared_ptr<op<Answer>> o) mutable {
                 with_session([o, body = std::move(body)](store_error e) mutable {
                   if (o->done) return;
                   if (e) return o->finish(e, {});
                   body(o);
                 });
               });
  }

  // --- the session -----------------------------------------------------------

  void ensure_link() {
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
  void resolve() {
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
  void on_move(const std::string& server, milliseconds silent) {
    move_reason = "ZooKeeper server " + server + " answered nothing for " +
                  std::to_string(silent.count()) + " ms: the session moves to the next server";
    note_failure({zookeeper_errc::connection_lost, move_reason});
  }

  // A call's failure; a connection loss the link caused by leaving a silent
  // server says so.
  store_error call_failure(int rc, const std::string& what) const {
    auto e = zoo_failure(rc, what);
    if (rc == ZCONNECTIONLOSS && !move_reason.empty())
      e = {e.code, e.message() + " (" + move_reason + ")"};
    return e;
  }

  void on_state(int state) {
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
    // and the registry's cache is read again by the next acquire.
    watch_armed = false;
    registry_stale = true;
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
  void session_lost(const std::string& why, const std::string& what = {}) {
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

  void drop_link() {
    if (!link) return;
    auto l = std::move(link);
    link.reset();
    ++link_gen;
    session_up = false;
    server_in_use.reset();
    watch_armed = false;
    arming = false;
    // The close request is not sent (zk_link::close): a lease node lives
    // until the session expires, as after a crash, rather than vanishing
    // while the leader may still count on it.
    l->close();
  }

  // Calls `fn` once a session is up (at once when it is), or with the
  // failure after connect_timeout.
  void with_session(std::function<void(store_error)> fn) {
    if (link && session_up && link->connected()) {
      fn({});
      return;
    }
    const auto id = ++waiter_id;
    auto timer = std::make_shared<asio::steady_timer>(io, options.connect_timeout);
    waiters.push_back({id, std::move(fn), timer});
    timer->async_wait([this, w = shell.guard(), id](const boost::system::error_code& ec) {
      if (ec || w.expired()) return;
      for (auto it = waiters.begin(); it != waiters.end(); ++it) {
        if (it->id != id) continue;
        auto waiting = std::move(it->fn);
        waiters.erase(it);
        waiting(note_failure(
            {zookeeper_errc::connect_failed,
             "no ZooKeeper server of " + options.servers + " gave a session within " +
                 std::to_string(options.connect_timeout.count()) + " ms (" + last_state + ")"}));
        return;
      }
    });
    ensure_link();
  }

  void run_waiters(const store_error& e) {
    auto all = std::move(waiters);
    waiters.clear();
    for (auto& w : all) {
      w.timer->cancel();
      w.fn(e);
    }
  }
  void fail_waiters(const store_error& e) { run_waiters(e); }

  // --- the term this store holds ---------------------------------------------

  void hold_term(std::uint64_t token, std::int32_t lease_version, std::int32_t record_version,
                 time_point sent_at) {
    held = {token, lease_version, record_version, link_gen, sent_at + ttl()};
    arm_expiry();
  }

  void arm_expiry() {
    expiry_timer.expires_at(held.valid_until);
    expiry_timer.async_wait([this, w = shell.guard()](const boost::system::error_code& ec) {
      if (ec || w.expired() || held.token == 0 || renewing) return;
      if (mono_clock::now() >= held.valid_until) drop_term(true);
    });
  }

  // Forgets the term; `delete_node`: its lease ran out unrenewed, so its
  // node goes too (version checked: only ours), and standbys need not wait
  // for the session to expire.
  void drop_term(bool delete_node) {
    if (delete_node && held.token != 0 && link && session_up && held.gen == link_gen) {
      link->multi(end_term_ops(released_record(held.token)), [](int, std::vector<zk_op_result>) {});
    }
    held = {};
    expiry_timer.cancel();
  }

  // The holder ends its term: the record rewritten as `record` says (the
  // term marked released, a hand-over's reservation with it; its version
  // checked: still the record of our term) and the lease node deleted (its
  // version checked: still our node), in one multi.
  std::vector<zk_op> end_term_ops(const record_value& record) const {
    return {{zk_op::kind::set, paths.record, encode_record(record), held.record_version, false},
            {zk_op::kind::remove, paths.lease, {}, held.lease_version, false}};
  }

  // Release and hand-over: the term ends with `record` written, announced as
  // a release by the lease node's deletion (to the others: not to us).
  void end_term(const std::shared_ptr<op<release_answer>>& o, const record_value& record,
                const char* what) {
    if (o->done) return;
    if (renewing && held.token != 0 && held.gen == link_gen) {
      // A leader keeps renewing while its app stops, so a release can
      // follow a renewal that is still unanswered. That renewal moves the
      // lease node's version: sent now, the release would carry the version
      // from before it, answer "not ours" and leave the lease to expire
      // (a handover that took the session timeout). It goes once the
      // renewal's answer is in, with the version that answer brings.
      after_renewal.push_back([this, o, record, what] { end_term(o, record, what); });
      return;
    }
    if (held.token == 0 || held.gen != link_gen || !link) {
      return o->finish({}, release_answer::not_ours);
    }
    const auto gen = link_gen;
    const auto token = held.token;
    link->multi(
        end_term_ops(record), [this, o, gen, token, what](int rc, std::vector<zk_op_result>) {
          const bool same_term = gen == link_gen && held.token == token;
          switch (classify_write(rc)) {
            case write_outcome::done:
              if (same_term) drop_term(false);
              suppress_release = true;
              return o->finish({}, release_answer::released);
            case write_outcome::raced:
              if (same_term) drop_term(false);
              return o->finish({}, release_answer::not_ours);
            case write_outcome::failed:
              return o->finish(
                  note_failure(zoo_failure(rc, std::string(what) + " on " + paths.election)), {});
          }
        });
  }

  std::string own_lease_data() const {
    return encode_lease({held.token, options.identity.node_id, nonce});
  }

  // --- acquire ---------------------------------------------------------------

  void acquire(std::shared_ptr<op<acquire_answer>> o, int attempt) {
    with_session([this, o, attempt](store_error e) {
      if (o->done) return;
      if (e) return o->finish(e, {});
      if (session_problem) return o->finish(note_failure(session_problem), {});
      register_candidate();
      clear_cooling();
      refresh_registry();
      const auto gen = link_gen;
      link->get(paths.record, [this, o, attempt, gen](int rc, node_seen record) {
        if (o->done) return;
        if (rc != ZOK && rc != ZNONODE)
          return o->finish(note_failure(zoo_failure(rc, "read " + paths.record)), {});
        if (gen != link_gen)
          return o->finish(note_failure({zookeeper_errc::connection_lost,
                                         "the ZooKeeper session changed during an acquire"}),
                           {});
        link->get(paths.lease, [this, o, attempt, gen, record](int rc2, node_seen lease) {
          if (o->done) return;
          if (rc2 != ZOK && rc2 != ZNONODE)
            return o->finish(note_failure(zoo_failure(rc2, "read " + paths.lease)), {});
          if (gen != link_gen)
            return o->finish(note_failure({zookeeper_errc::connection_lost,
                                           "the ZooKeeper session changed during an acquire"}),
                             {});
          decide(o, attempt, record, lease);
        });
      });
    });
  }

  // False when the listener destroyed or closed the store meanwhile.
  bool note_seen(const node_seen& record, const node_seen& lease, time_point now) {
    const auto alive = shell.guard();
    if (record.exists &&
        (record.czxid != seen_record_czxid || record.version != seen_record_version)) {
      seen_record_czxid = record.czxid;
      seen_record_version = record.version;
      seen_record_at = now;
    }
    if (record.exists) {
      if (const auto rec = decode_record(record.data); rec && rec->hold != seen_hold) {
        seen_hold = rec->hold;
        seen_hold_at = now;
        if (!rec->hold.empty() && rec->hold.rfind(nonce + "-", 0) != 0) {
          // Its cause is the other candidate's (rec->why); what this store
          // saw is the hold, not lost data.
          shell.report_reset(store_events::reset{
              rec->why,
              false,
              {},
              "another candidate of election " + options.identity.election +
                  " found the store reset and wrote a hold-back into the record"});
          if (alive.expired() || shell.closed()) return false;
        }
      }
    }
    note_lease(lease, now);
    return true;
  }

  // When this store first saw the lease node's current version: a held
  // lease's remaining time and the early-loss guard count from there.
  void note_lease(const node_seen& lease, time_point now) {
    if (lease.exists && (lease.czxid != seen_lease_czxid || lease.version != seen_lease_version)) {
      seen_lease_czxid = lease.czxid;
      seen_lease_version = lease.version;
      seen_lease_at = now;
    }
  }

  void decide(const std::shared_ptr<op<acquire_answer>>& o, int attempt, const node_seen& record,
              const node_seen& lease) {
    const auto now = mono_clock::now();
    if (!note_seen(record, lease, now)) return;
    acquire_facts f;
    f.node_id = options.identity.node_id;
    f.nonce = nonce;
    f.session_id = link->session_id();
    f.ttl = ttl();
    f.now = now;
    f.pending_reset = pending_reset;
    f.pending_reset_at = pending_reset_at;
    f.seen_hold = seen_hold;
    f.seen_hold_at = seen_hold_at;
    f.seen_lease_czxid = seen_lease_czxid;
    f.seen_lease_version = seen_lease_version;
    f.seen_lease_at = seen_lease_at;
    f.seen_record_czxid = seen_record_czxid;
    f.seen_record_version = seen_record_version;
    f.seen_record_at = seen_record_at;
    f.server_now_ms = server_time.now_ms(now);
    const auto mark = nonce + "-" + std::to_string(++hold_count);
    const auto counter = [&] {
      const auto rec = decode_record(record.data);
      return rec ? rec->counter : 0;
    }();
    std::visit(
        overloaded{
            [&](const acquire_steps::create_record& s) {
              create_record_held(o, attempt, s.record, now);
            },
            [&](const acquire_steps::write_hold& s) { write_hold(o, attempt, s, now); },
            [&](const acquire_steps::held_back& s) {
              if (!pending_reset.empty() && seen_hold_at >= pending_reset_at) pending_reset.clear();
              acquire_answer a;
              a.outcome = acquire_outcome::held_back;
              a.token = counter;
              a.remaining = s.remaining;
              a.why = s.why;
              o->finish({}, std::move(a));
            },
            [&](const acquire_steps::held& s) {
              pending_reset.clear();
              acquire_answer a;
              a.outcome = acquire_outcome::held;
              a.holder = s.holder;
              a.token = s.token;
              a.remaining = s.remaining;
              a.reserved_for = s.reserved_for;
              a.outranked_by = outranked_by(s.holder);
              o->finish({}, std::move(a));
            },
            [&](const acquire_steps::take& s) {
              take(o, attempt,
                   {{zk_op::kind::set, paths.record, encode_record(s.record), s.record_version,
                     false},
                    {zk_op::kind::create, paths.lease, encode_lease(s.lease), -1, true}},
                   s.lease.token);
            },
            [&](const acquire_steps::retake& s) {
              take(o, attempt,
                   {{zk_op::kind::set, paths.record, encode_record(s.record), s.record_version,
                     false},
                    {zk_op::kind::set, paths.lease, encode_lease(s.lease), s.lease_version, false}},
                   s.lease.token);
            },
            [&](const acquire_steps::bad_data& s) {
              o->finish(note_failure({zookeeper_errc::unexpected_reply,
                                      s.why + " (" + paths.election + ")"}),
                        {});
            },
        },
        decide_acquire(record, lease, f, mark));
  }

  void retry_or_give_up(const std::shared_ptr<op<acquire_answer>>& o, int attempt) {
    if (attempt + 1 < max_attempts) {
      acquire(o, attempt + 1);
      return;
    }
    o->finish(note_failure({zookeeper_errc::contention,
                            "the nodes of " + paths.election + " changed on each of " +
                                std::to_string(max_attempts) + " tries"}),
              {});
  }

  void take(const std::shared_ptr<op<acquire_answer>>& o, int attempt, std::vector<zk_op> ops_,
            std::uint64_t token) {
    const auto sent_at = mono_clock::now();
    const auto gen = link_gen;
    link->multi(std::move(ops_), [this, o, attempt, token, sent_at, gen](
                                     int rc, std::vector<zk_op_result> r) {
      if (o->done && rc != ZOK) return;
      switch (classify_write(rc)) {
        case write_outcome::done: {
          if (gen != link_gen || r.size() != 2) break;
          const auto lease_version = r[1].stat.exists ? r[1].stat.version : 0;
          hold_term(token, lease_version, r[0].stat.version, sent_at);
          server_time.learn(r[0].stat.mtime_ms, mono_clock::now());
          pending_reset.clear();
          suppress_release = false;
          acquire_answer a;
          a.outcome = acquire_outcome::acquired;
          a.token = token;
          a.holder = options.identity.node_id;
          a.remaining = ttl();
          o->finish({}, std::move(a));
          return;
        }
        case write_outcome::raced:
          return retry_or_give_up(o, attempt);
        case write_outcome::failed:
          return o->finish(note_failure(zoo_failure(rc, "acquire on " + paths.election)), {});
      }
      o->finish(note_failure({zookeeper_errc::connection_lost,
                              "the ZooKeeper session changed during an acquire"}),
                {});
    });
  }

  void create_record_held(const std::shared_ptr<op<acquire_answer>>& o, int attempt,
                          const record_value& record, time_point now) {
    ensure_parents([this, o, attempt, record, now](store_error e) {
      if (o->done) return;
      if (e) return o->finish(e, {});
      link->create(
          paths.record, encode_record(record), false,
          [this, o, attempt, record, now](int rc, node_seen) {
            if (o->done) return;
            if (rc == ZNODEEXISTS) return retry_or_give_up(o, attempt);
            if (rc != ZOK)
              return o->finish(note_failure(zoo_failure(rc, "create " + paths.record)), {});
            seen_hold = record.hold;
            seen_hold_at = now;
            pending_reset.clear();
            acquire_answer a;
            a.outcome = acquire_outcome::held_back;
            a.remaining = ttl();
            const auto alive = shell.guard();
            shell.report_reset(store_events::reset{
                "the record of election " + options.identity.election + " was missing at " +
                    paths.record + " (a first start, or the ensemble lost its data)",
                true,
                {}});
            if (alive.expired()) return;
            o->finish({}, std::move(a));
          });
    });
  }

  void write_hold(const std::shared_ptr<op<acquire_answer>>& o, int attempt,
                  const acquire_steps::write_hold& s, time_point now) {
    const auto record = s.record;
    link->multi({{zk_op::kind::set, paths.record, encode_record(record), s.record_version, false}},
                [this, o, attempt, record, now](int rc, std::vector<zk_op_result>) {
                  if (o->done) return;
                  switch (classify_write(rc)) {
                    case write_outcome::done: {
                      seen_hold = record.hold;
                      seen_hold_at = now;
                      pending_reset.clear();
                      acquire_answer a;
                      a.outcome = acquire_outcome::held_back;
                      a.token = record.counter;
                      a.remaining = ttl();
                      return o->finish({}, std::move(a));
                    }
                    case write_outcome::raced:
                      return retry_or_give_up(o, attempt);
                    case write_outcome::failed:
                      return o->finish(note_failure(zoo_failure(rc, "hold back " + paths.election)),
                                       {});
                  }
                });
  }

  // The prefix's nodes and the election's node (and the registry's, with
  // `candidates`), created when missing.
  void ensure_parents(std::function<void(store_error)> done, bool candidates = false) {
    std::vector<std::string> chain;
    for (std::size_t at = 1; at <= paths.prefix.size(); ++at) {
      if (at == paths.prefix.size() || paths.prefix[at] == '/')
        chain.push_back(paths.prefix.substr(0, at));
    }
    chain.push_back(paths.election);
    if (candidates) chain.push_back(paths.candidates);
    create_chain(std::make_shared<std::vector<std::string>>(std::move(chain)), 0, std::move(done));
  }

  void create_chain(std::shared_ptr<std::vector<std::string>> chain, std::size_t i,
                    std::function<void(store_error)> done) {
    if (i == chain->size()) return done({});
    if (!link || !session_up)
      return done(
          note_failure({zookeeper_errc::connection_lost, "the ZooKeeper session was lost"}));
    link->create((*chain)[i], {}, false, [this, chain, i, done](int rc, node_seen) {
      if (rc != ZOK && rc != ZNODEEXISTS)
        return done(note_failure(zoo_failure(rc, "create " + (*chain)[i])));
      create_chain(chain, i + 1, done);
    });
  }

  // --- the registry ----------------------------------------------------------

  // This store's registry node, once per session: sent ahead of the call's
  // own requests, its answer not waited for (the call takes no extra round
  // trip; the server answers a session's requests in order, so only the
  // session's first call waits for the create's commit), and nothing at all
  // once it is there. It lives with the session: a closed or crashed store
  // leaves the list when its session expires, one session timeout (the ttl)
  // after its last contact; a failed registration is tried again by the
  // next acquire or renewal.
  void register_candidate() {
    if (!link || !session_up || registered_gen == link_gen || registering_gen == link_gen) return;
    registering_gen = link_gen;
    create_registration(link_gen, 0);
  }

  void create_registration(std::uint64_t gen, int attempt) {
    const auto path = candidate_path(paths, options.identity.node_id, options.identity.priority);
    const auto data = encode_candidate({options.identity.priority, options.identity.node_id});
    link->create(path, data, true, [this, gen, attempt, path](int rc, node_seen node) {
      if (gen != link_gen) return;
      if (rc == ZOK) {
        registered_gen = gen;
        server_time.learn(node.ctime_ms, mono_clock::now());
        return;
      }
      if (attempt < 2 && rc == ZNONODE) {
        // The registry's node is missing (a first start, or an election
        // older than the registry).
        return ensure_parents(
            [this, gen, attempt](store_error e) {
              if (gen != link_gen) return;
              if (e) return registration_failed({});
              create_registration(gen, attempt + 1);
            },
            true);
      }
      if (attempt < 2 && rc == ZNODEEXISTS) return replace_registration(gen, attempt, path);
      registration_failed(zoo_failure(rc, "register in " + paths.candidates));
    });
  }

  // A node of this node id from another session: a predecessor of this
  // process whose session has not expired yet, or a second candidate with
  // the same node id. Ours replaces it, so that the list keeps the node id
  // once and this session's node outlives the other's.
  void replace_registration(std::uint64_t gen, int attempt, const std::string& path) {
    link->get(path, [this, gen, attempt, path](int rc, node_seen node) {
      if (gen != link_gen) return;
      if (rc == ZOK && node.owner_session == link->session_id()) {
        registered_gen = gen;
        return;
      }
      if (rc == ZNONODE) return create_registration(gen, attempt + 1);
      if (rc != ZOK) return registration_failed(zoo_failure(rc, "read " + path));
      link->multi({{zk_op::kind::remove, path, {}, node.version, false}},
                  [this, gen, attempt, path](int rc2, std::vector<zk_op_result>) {
                    if (gen != link_gen) return;
                    if (rc2 != ZOK && rc2 != ZNONODE && rc2 != ZBADVERSION)
                      return registration_failed(zoo_failure(rc2, "replace " + path));
                    create_registration(gen, attempt + 1);
                  });
    });
  }

  // Not the call's failure: the call goes on, status tells, and the next
  // acquire or renewal tries again.
  void registration_failed(store_error e) {
    registering_gen = 0;
    if (e) note_failure(std::move(e));
  }

  // A cool-down after giving the lease up, for a leader weighing a
  // switchover to this node: the registry node's data says how long, and its
  // mtime (the server's clock) since when. Best effort, as the registry is:
  // a failed write leaves the node as it was. The session keeps the node;
  // the next acquire puts the plain data back, and a reader stops counting
  // the cool-down once it has passed in any case.
  void mark_cooling(milliseconds cooldown) {
    if (!link || !session_up || registered_gen != link_gen || cooldown <= milliseconds(0)) return;
    cooling_marked = true;
    write_registration(encode_cooling_candidate(
        {options.identity.priority, options.identity.node_id}, cooldown));
  }

  void clear_cooling() {
    if (!cooling_marked || !link || !session_up || registered_gen != link_gen) return;
    cooling_marked = false;
    write_registration(encode_candidate({options.identity.priority, options.identity.node_id}));
  }

  void write_registration(std::string data) {
    const auto path = candidate_path(paths, options.identity.node_id, options.identity.priority);
    link->multi({{zk_op::kind::set, path, std::move(data), -1, false}},
                [](int, std::vector<zk_op_result>) {});
  }

  // One read of each listed node for its age (ctime): the names say who and
  // with which priority. A node id listed twice (a restarted candidate with
  // another priority, before its successor removed its predecessor's node)
  // is its newest registration.
  void list_candidates(const std::shared_ptr<op<std::vector<candidate_info>>>& o) {
    const auto gen = link_gen;
    link->children(paths.candidates, [this, o, gen](int rc, std::vector<std::string> names) {
      if (o->done) return;
      if (rc == ZNONODE) return o->finish({}, {});
      if (rc != ZOK)
        return o->finish(note_failure(zoo_failure(rc, "list " + paths.candidates)), {});
      if (gen != link_gen)
        return o->finish(note_failure({zookeeper_errc::connection_lost,
                                       "the ZooKeeper session changed while listing candidates"}),
                         {});
      struct listed {
        candidate_info info;
        std::int64_t czxid = 0;
      };
      auto found = std::make_shared<std::vector<listed>>();
      auto pending = std::make_shared<std::size_t>(0);
      const auto finish = [o, found] {
        std::vector<candidate_info> out;
        std::sort(found->begin(), found->end(),
                  [](const listed& x, const listed& y) { return x.czxid > y.czxid; });
        for (auto& f : *found) {
          const bool seen = std::any_of(out.begin(), out.end(), [&](const candidate_info& c) {
            return c.node == f.info.node;
          });
          if (!seen) out.push_back(std::move(f.info));
        }
        o->finish({}, std::move(out));
      };
      for (const auto& name : names) {
        // A node baton did not write: not a candidate.
        auto v = decode_candidate_name(name);
        if (!v) continue;
        ++*pending;
        const auto path = paths.candidates + "/" + name;
        link->get(path, [this, o, found, pending, path, finish, v = std::move(*v)](int rc2,
                                                                                   node_seen node) {
          if (o->done) return;
          if (rc2 != ZOK && rc2 != ZNONODE)
            return o->finish(note_failure(zoo_failure(rc2, "read " + path)), {});
          // Gone since the listing (its session expired): not a candidate.
          if (rc2 == ZOK) {
            const auto server_now = server_time.now_ms(mono_clock::now());
            candidate_info info{v.node_id, v.priority, registered_for(node.ctime_ms, server_now)};
            info.cooling_down_for = cooling_left(node.data, node.mtime_ms, server_now);
            found->push_back({std::move(info), node.czxid});
          }
          if (--*pending == 0) finish();
        });
      }
      if (*pending == 0) finish();
    });
  }

  // --- the registry's cache --------------------------------------------------

  // What a held answer's outranked_by counts from: the registry's names
  // (each says its candidate's node id and priority), read with a children
  // watch. The read goes out ahead of an acquire's own reads, in the same
  // round trip (the server answers a session's requests in order), and only
  // when the cache is not current: the first acquire on a session, the
  // first after the watch fired (a candidate came or went), or after the
  // connection broke. A standby whose registry does not change sends
  // nothing more than before; a leader, which does not acquire, nothing.
  void refresh_registry() {
    if (!link || !session_up) return;
    if (registry_gen == link_gen && !registry_stale) return;
    if (registry_reading_gen == link_gen) return;
    registry_reading_gen = link_gen;
    const auto gen = link_gen;
    link->children_watch(paths.candidates, [this, gen](int rc, std::vector<std::string> names) {
      if (gen != link_gen) return;
      registry_reading_gen = 0;
      // No registry yet (ZNONODE: nor a watch), or the call failed: the
      // next acquire reads it again; the acquire's own reads say why.
      if (rc != ZOK) return;
      // A watch event that came before this answer was about a change this
      // read saw already (the server sends a change's event before the
      // answers that follow it).
      registry_stale = false;
      registry_gen = gen;
      registry.clear();
      const auto& self = options.identity.node_id;
      const auto own = candidate_name(self, options.identity.priority);
      for (const auto& name : names) {
        auto v = decode_candidate_name(name);
        if (!v) continue;
        // This node id's registration from a predecessor of another
        // priority: ours replaces it, as one of the same priority is.
        if (v->node_id == self && name != own) {
          if (registered_gen == gen) remove_predecessor(paths.candidates + "/" + name);
          continue;
        }
        registry.push_back(std::move(*v));
      }
    });
  }

  void remove_predecessor(const std::string& path) {
    link->multi({{zk_op::kind::remove, path, {}, -1, false}},
                [this, gen = link_gen, path](int rc, std::vector<zk_op_result>) {
                  if (gen != link_gen || rc == ZOK || rc == ZNONODE) return;
                  note_failure(zoo_failure(rc, "replace " + path));
                });
  }

  // acquire_answer::outranked_by for a lease held by `holder`; -1 when the
  // registry was not read on this session (yet).
  int outranked_by(const std::string& holder) const {
    if (registry_gen == 0 || registry_gen != link_gen) return -1;
    return count_outranking(registry, options.identity.node_id, options.identity.priority, holder);
  }

  // --- the watch -------------------------------------------------------------

  void arm_watch() {
    if (!watching || shell.closed() || !link || !session_up) return;
    if (arming) {
      rearm = true;
      return;
    }
    arming = true;
    const auto gen = link_gen;
    link->exists_watch(paths.lease, [this, gen](int rc, node_seen seen) {
      if (gen != link_gen || shell.closed()) return;
      arming = false;
      if (rc != ZOK && rc != ZNONODE) {
        const auto e = note_failure(zoo_failure(rc, "watch " + paths.lease));
        shell.set_wakeups(false, e.message());
        return;
      }
      note_lease(seen, mono_clock::now());
      const bool relisten = ever_armed && !watch_armed;
      watch_armed = true;
      ever_armed = true;
      // The listener may close or destroy this store from any event: after
      // each, nothing of it is touched unless it is still there and open.
      const auto alive = shell.guard();
      if (!observe(seen) || alive.expired() || shell.closed()) return;
      shell.set_wakeups(true, "");
      if (alive.expired() || shell.closed()) return;
      if (relisten) shell.emit(store_events::released{});
      if (alive.expired() || shell.closed()) return;
      if (std::exchange(rearm, false)) arm_watch();
    });
  }

  // The watch fired (it is one-shot): what happened is decided when it is
  // armed again, by then this store's own release has completed too.
  void node_event(int type, const std::string& path) {
    if (path == paths.candidates) {
      // A candidate came or went (the watch is one-shot): the next acquire
      // reads the registry again.
      registry_stale = true;
      return;
    }
    if (type == ZOO_DELETED_EVENT) deleted_event = true;
    if (type == ZOO_CREATED_EVENT) created_event = true;
    arm_watch();
  }

  // Announcements from what the watch found: the node it watched gone (a
  // release, unless it was this store's own), a node of a new term there.
  // A term can come and go between a creation event and the watch armed
  // again: the node is absent then, and that is a release too.
  // False when the listener closed or destroyed the store meanwhile.
  bool observe(const node_seen& seen) {
    const auto alive = shell.guard();
    const auto before = watched_czxid;
    watched_czxid = seen.exists ? seen.czxid : 0;
    const bool deleted = std::exchange(deleted_event, false);
    const bool came_and_went = std::exchange(created_event, false) && !seen.exists;
    if (!baseline) {
      baseline = true;
      return true;
    }
    if ((before != 0 && before != watched_czxid) || (deleted && before == 0) || came_and_went) {
      if (std::exchange(suppress_release, false)) {
        // Our own release: not reported to us.
      } else {
        shell.emit(store_events::released{});
        if (alive.expired() || shell.closed()) return false;
      }
    }
    if (watched_czxid != 0 && watched_czxid != before) {
      const auto gen = link_gen;
      const auto czxid = watched_czxid;
      link->get(paths.lease, [this, gen, czxid](int rc, node_seen node) {
        if (gen != link_gen || rc != ZOK || node.czxid != czxid) return;
        if (const auto v = decode_lease(node.data)) {
          shell.emit(store_events::acquired{v->node_id, v->token});
        }
      });
    }
    return true;
  }

  wakeup_state current_wakeups() const {
    if (!watching) return wakeup_state::off;
    if (watch_armed && link && session_up) return wakeup_state::subscribed;
    return ever_armed ? wakeup_state::disconnected : wakeup_state::connecting;
  }

  struct waiter {
    std::uint64_t id;
    std::function<void(store_error)> fn;
    std::shared_ptr<asio::steady_timer> timer;
  };
  struct term {
    std::uint64_t token = 0;
    std::int32_t lease_version = -1;
    std::int32_t record_version = -1;
    std::uint64_t gen = 0;
    time_point valid_until{};
  };

  asio::io_context& io;
  zookeeper_store_options options;
  store_shell shell;
  const lease_paths paths;
  // New per store: the lease node names the store that holds it, so a
  // restarted daemon with the same node id never renews its predecessor's
  // term.
  const std::string nonce;
  std::vector<server_address> servers;
  std::string digest;
  std::string numeric_hosts;
  // The addresses the client was given, each with its server.
  std::vector<server_address_of> addresses;
  // The server of `servers` the session is on (none while connecting), and
  // the last failure seen at each, until a session is up on it again.
  std::optional<std::size_t> server_in_use;
  std::vector<std::string> server_errors;
  bool resolving = false;
  std::unique_ptr<asio::ip::tcp::resolver> resolver;

  std::shared_ptr<zk_link> link;
  std::uint64_t link_gen = 0;
  bool session_up = false;
  milliseconds negotiated{0};
  store_error session_problem;
  // Why the link left the server it was on ("" = it did not, or the
  // session is up again).
  std::string move_reason;
  std::string last_state = "not connected";
  int last_state_code = 0;
  asio::steady_timer lost_timer;
  bool lost_timer_running = false;
  std::string pending_reset;
  time_point pending_reset_at{};
  std::list<waiter> waiters;
  std::uint64_t waiter_id = 0;
  std::vector<std::weak_ptr<op_base>> ops;

  term held;
  bool renewing = false;
  // The release or hand-over waiting for the renewal in flight (end_term).
  std::vector<std::function<void()>> after_renewal;
  asio::steady_timer expiry_timer;

  std::string seen_hold;
  time_point seen_hold_at{};
  std::int64_t seen_lease_czxid = 0;
  std::int32_t seen_lease_version = -1;
  time_point seen_lease_at{};
  std::int64_t seen_record_czxid = 0;
  std::int32_t seen_record_version = -1;
  time_point seen_record_at{};
  int hold_count = 0;

  // The server's clock, from this store's own writes (its registration, its
  // terms' writes): a reservation's end and a registration's age.
  server_clock server_time;
  // The session (link_gen) this store is registered on, and the one whose
  // registration is under way (0 = none).
  std::uint64_t registered_gen = 0;
  std::uint64_t registering_gen = 0;
  /// The registry node's data announces a cool-down (mark_cooling) that the
  /// next acquire takes back.
  bool cooling_marked = false;
  // The registry's names as last read (this store's own node id aside), the
  // session they were read on (0 = none), whether the watch fired or the
  // connection broke since, and the session of a read under way (0 = none).
  std::vector<candidate_value> registry;
  std::uint64_t registry_gen = 0;
  bool registry_stale = true;
  std::uint64_t registry_reading_gen = 0;

  bool watching = false;
  bool watch_armed = false;
  bool ever_armed = false;
  bool arming = false;
  bool rearm = false;
  bool baseline = false;
  bool suppress_release = false;
  bool deleted_event = false;
  bool created_event = false;
  std::int64_t watched_czxid = 0;
};

zookeeper_store::zookeeper_store(asio::io_context& io, zookeeper_store_options options) {
  auto& id = options.identity;
  require_valid_identity(id, "zookeeper_store");
  if (const auto missing = zookeeper_client_load_error()) {
    throw std::invalid_argument("zookeeper_store: the ZooKeeper C client is needed: " + *missing);
  }
  if (const auto p = election_name_problem(id.election)) {
    throw std::invalid_argument("zookeeper_store: election \"" + id.election + "\" " + *p);
  }
  if (const auto p = path_prefix_problem(options.path)) {
    throw std::invalid_argument("zookeeper_store: path \"" + options.path + "\" " + *p);
  }
  auto list = parse_servers(options.servers);
  if (!list.error.empty()) throw std::invalid_argument("zookeeper_store: servers: " + list.error);
  if (options.connect_timeout.count() <= 0 || options.command_timeout.count() <= 0) {
    throw std::invalid_argument("zookeeper_store: connect_timeout and command_timeout must be > 0");
  }
  std::string digest;
  if (options.auth_scheme == "digest") {
    if (options.auth_user.empty() || options.auth_user.find(':') != std::string::npos) {
      throw std::invalid_argument(
          "zookeeper_store: digest authentication needs a user without ':'");
    }
    if (options.password_file.empty()) {
      throw std::invalid_argument("zookeeper_store: digest authentication needs a password file");
    }
    digest = options.auth_user + ":" + read_password(options.password_file);
  } else if (!options.auth_scheme.empty()) {
    throw std::invalid_argument("zookeeper_store: auth scheme \"" + options.auth_scheme +
                                "\" is not supported (\"digest\" or none)");
  }
  impl_ =
      std::make_unique<impl>(io, std::move(options), std::move(list.servers), std::move(digest));
}

zookeeper_store::~zookeeper_store() = default;

const store_identity& zookeeper_store::identity() const {
  return impl_->options.identity;
}

void zookeeper_store::async_acquire(acquire_handler handler) {
  auto& d = *impl_;
  d.begin_call(handler, "acquire", [&d](auto o) { d.acquire(o, 0); });
}

void zookeeper_store::async_renew(renew_handler handler) {
  auto& d = *impl_;
  d.begin_session_call(handler, "renew", [&d](auto o) {
    if (d.held.token == 0 || d.held.gen != d.link_gen) return o->finish({}, renew_answer::lost);
    if (mono_clock::now() >= d.held.valid_until) {
      // Ran out unrenewed: a standby may hold it by now.
      d.drop_term(true);
      return o->finish({}, renew_answer::lost);
    }
    d.register_candidate();
    const auto sent_at = mono_clock::now();
    const auto gen = d.link_gen;
    const auto token = d.held.token;
    d.renewing = true;
    d.link->multi(
        {{zk_op::kind::check, d.paths.record, {}, d.held.record_version, false},
         {zk_op::kind::set, d.paths.lease, d.own_lease_data(), d.held.lease_version, false}},
        [&d, o, sent_at, gen, token](int rc, std::vector<zk_op_result> r) {
          d.renewing = false;
          // Later: after this handler has recorded the versions it brought.
          for (auto& next : std::exchange(d.after_renewal, {})) d.later(std::move(next));
          const bool same_term = gen == d.link_gen && d.held.token == token;
          switch (classify_write(rc)) {
            case write_outcome::done:
              if (same_term && r.size() == 2) {
                d.held.lease_version = r[1].stat.version;
                d.held.valid_until = sent_at + d.ttl();
                d.server_time.learn(r[1].stat.mtime_ms, mono_clock::now());
                d.arm_expiry();
                return o->finish({}, renew_answer::renewed);
              }
              return o->finish({}, renew_answer::lost);
            case write_outcome::raced:
              if (same_term) d.drop_term(false);
              return o->finish({}, renew_answer::lost);
            case write_outcome::failed:
              if (same_term && mono_clock::now() >= d.held.valid_until) d.drop_term(true);
              return o->finish(d.note_failure(d.call_failure(rc, "renew on " + d.paths.election)),
                               {});
          }
        });
  });
}

void zookeeper_store::async_release(release_handler handler) {
  auto& d = *impl_;
  d.begin_session_call(handler, "release",
                       [&d](auto o) { d.end_term(o, released_record(d.held.token), "release"); });
}

// The release's multi, the reservation written into the record with it: the
// lease node goes and the reservation comes at once, and only `to_node`'s
// take (which rewrites the record) ends it before its window does.
void zookeeper_store::async_hand_over(const std::string& to_node, milliseconds window,
                                      release_handler handler) {
  auto& d = *impl_;
  const auto& self = d.options.identity.node_id;
  auto problem = reservation_node_problem(to_node);
  if (problem) {
    *problem = "cannot hand over to node id \"" + to_node + "\": it " + *problem;
  } else if (const auto own = reservation_node_problem(self)) {
    problem = "cannot hand over from node id \"" + self + "\": it " + *own;
  }
  if (problem) {
    if (d.shell.reject_if_closed(handler)) return;
    return d.shell.fail_later(
        std::move(handler),
        store_error{std::make_error_code(std::errc::invalid_argument), *problem});
  }
  d.begin_session_call(handler, "hand over", [&d, to_node, window](auto o) {
    d.end_term(o, handed_over_record(d.held.token, to_node, d.options.identity.node_id, window),
               "hand over");
  });
}

void zookeeper_store::register_cooldown(milliseconds cooldown) { impl_->mark_cooling(cooldown); }

void zookeeper_store::async_candidates(candidates_handler handler) {
  auto& d = *impl_;
  d.begin_session_call(handler, "list the candidates", [&d](auto o) { d.list_candidates(o); });
}

void zookeeper_store::async_create_record(record_handler handler) {
  auto& d = *impl_;
  d.begin_session_call(handler, "create the record", [&d](auto o) {
    // The registry's node with it: the first candidates' registrations and
    // their registry reads find it.
    d.ensure_parents(
        [&d, o](store_error pe) {
          if (o->done) return;
          if (pe) return o->finish(pe, {});
          d.link->create(d.paths.record, encode_record({}), false, [&d, o](int rc, node_seen) {
            if (rc == ZOK) return o->finish({}, record_answer::created);
            if (rc == ZNODEEXISTS) return o->finish({}, record_answer::existed);
            o->finish(d.note_failure(zoo_failure(rc, "create " + d.paths.record)), {});
          });
        },
        true);
  });
}

void zookeeper_store::watch(event_listener listener) {
  auto& d = *impl_;
  if (!d.shell.set_listener(std::move(listener))) return;
  if (d.watching) return;
  d.watching = true;
  d.later([&d] {
    if (d.shell.closed()) return;
    d.ensure_link();
    d.arm_watch();
  });
}

void zookeeper_store::close() {
  auto& d = *impl_;
  if (!d.shell.close()) return;
  for (auto& w : d.ops) {
    if (auto o = w.lock()) d.later([o] { o->abort(); });
  }
  d.ops.clear();
  for (auto& w : d.waiters) w.timer->cancel();
  d.waiters.clear();
  d.lost_timer.cancel();
  d.drop_link();
  d.expiry_timer.cancel();
}

store_status zookeeper_store::status() const {
  const auto& d = *impl_;
  store_status s;
  s.kind = "zookeeper";
  s.label = "ZooKeeper";
  s.endpoint = d.where();
  if (d.link && d.session_up && d.link->connected()) {
    s.link = link_state::connected;
  } else if ((d.link || d.resolving) && !d.shell.closed()) {
    s.link = link_state::connecting;
  } else {
    s.link = link_state::disconnected;
  }
  s.wakeups = d.current_wakeups();
  d.shell.fill_status(s);
  // One row per server, from what the session already knows: the one it is
  // on is connected; while the client looks for one, it tries each in turn
  // (connecting); the others have no connection. The server's mode would
  // take a request (srvr) that a standby does not make: the role is
  // "server".
  for (std::size_t i = 0; i < d.servers.size(); ++i) {
    store_member_status m;
    m.endpoint = client_hosts({d.servers[i]});
    m.role = "server";
    if (s.link == link_state::connected && d.server_in_use == i) {
      m.link = link_state::connected;
    } else if (s.link == link_state::connecting) {
      m.link = link_state::connecting;
    }
    m.last_error = d.server_errors[i];
    s.members.push_back(std::move(m));
  }
  return s;
}

}  // namespace baton
