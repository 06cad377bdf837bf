// redis_store: the lease operations as Lua scripts over one pipelined
// connection, plus the announcements' watch on a second one. Every completion
// passes through a guard that drops it when the store is gone and turns it
// into operation_aborted once close() was called, so each handler runs exactly
// once (or, after destruction, never).
//
// Data loss: the command connection is a redis_node, which fences the
// election when Redis's run_id changes (a restart or a failover; see
// redis_node.hpp; on Sentinel with replica_ack all, not for a promotion that
// kept every acknowledged write). The acquire script itself does the same when it finds the
// counter missing. Either way the watcher hears a store_events::reset.
#include "redis_store.hpp"

#include <algorithm>
#include <optional>
#include <variant>
#include <stdexcept>
#include <utility>

#include "connection.hpp"
#include "lease_keys.hpp"
#include "locating_transport.hpp"
#include "redis_node.hpp"
#include "redis_reply.hpp"
#include "replica_requirement.hpp"
#include "scripts.hpp"
#include "store/store_shell.hpp"
#include "subscriber.hpp"

namespace baton {
namespace {

namespace asio = boost::asio;
using redis_detail::command_result;
using redis_detail::connection;
using redis_detail::lua_script;
using redis_detail::redis_node;
using redis_detail::subscriber;
using store_detail::store_shell;

// Whether a member's redacted URL names the server at `peer` ("host:port").
bool names_server(const std::string& endpoint, const std::string& peer) {
  if (peer.empty()) return false;
  const auto scheme = endpoint.find("://");
  std::string rest = scheme == std::string::npos ? endpoint : endpoint.substr(scheme + 3);
  if (const auto user = rest.rfind('@'); user != std::string::npos) rest = rest.substr(user + 1);
  return rest == peer;
}

// The record's list as the scripts take it: "<node> <address>" lines, "-"
// for an address not published.
std::string list_text(const failsafe_list& list) {
  std::string text;
  for (const auto& p : list.peers) {
    if (!text.empty()) text += '\n';
    text += p.node + ' ' + (p.address.empty() ? std::string("-") : p.address);
  }
  return text;
}

std::string or_dash(const std::string& s) { return s.empty() ? std::string("-") : s; }

}  // namespace

struct redis_store::impl {
  impl(asio::io_context& context, redis_store_options opts)
      : io(context),
        options(std::move(opts)),
        shell(context),
        value(process_lease_value(options.identity.node_id)),
        keys(options.identity.election),
        ttl_ms(std::to_string(options.identity.ttl.count())),
        priority(redis_detail::registration_argument(options.identity.priority,
                                                     options.identity.card)) {
    conn_options.endpoint = options.endpoint;
    if (!options.password.empty()) conn_options.endpoint.password = options.password;
    // The options copy must not keep the secret around longer than needed.
    options.password.clear();
    options.endpoint.password.clear();
    conn_options.password_file = options.password_file;
    conn_options.connect_timeout = options.connect_timeout;
    conn_options.command_timeout = options.command_timeout;
    conn_options.transport = options.locator
                                 ? redis_detail::locating_transport_factory(options.locator)
                                 : options.transport;
    // Only the command connection asks who the server is; the watch
    // connection has nothing to protect.
    redis_detail::node_options node_options;
    node_options.connection = conn_options;
    // A located master may have been demoted since it was named.
    node_options.connection.confirm_master = options.locator != nullptr;
    node_options.locator = options.locator;
    if (options.locator) {
      options.locator->set_switch_listener([this, weak = shell.guard()](const std::string& why) {
        if (!weak.expired() && !shell.closed()) on_switch(why);
      });
    }
    node_options.token_key = keys.token;
    node_options.fence_key = keys.fence;
    node_options.ttl = options.identity.ttl;
    node_options.on_reset = [this, weak = shell.guard()](const std::string& why) {
      if (weak.expired() || shell.closed()) return;
      reset_told_for = node->server_id();
      report_reset(why);
    };
    if (options.replicated) {
      node_options.switch_keys = {keys.token, keys.fence, keys.epoch, keys.replicas, keys.acked};
      node_options.switch_args = {options.ack.on() ? ack_requirement() : std::string(),
                                  options.acknowledged_promotion ? "acked" : ""};
    }
    node_options.on_promotion = [this, weak = shell.guard()](const std::string& why) {
      if (weak.expired() || shell.closed()) return;
      // Nothing is held back, so watchers hear nothing; status() shows it.
      shell.note_reset("failover (" + why + ") to a replica that had every acknowledged grant "
                       "and renewal: nothing held back");
    };
    node_options.on_failure = [this, weak = shell.guard()](store_error e) {
      if (!weak.expired() && !shell.closed()) shell.note_failure(std::move(e));
    };
    node = redis_node::create(io, std::move(node_options));
  }

  ~impl() {
    shell.retire();
    node->close();
    if (watch) watch->stop();
    if (options.locator) options.locator->close();
  }

  // A sentinel says the master moved: both connections start over there.
  void on_switch(const std::string& why) {
    shell.note_failure({redis_errc::not_master, why});
    node->reconnect(why);
    if (watch) watch->restart(why);
  }

  // The acquire script's keys and arguments for this store's kind.
  std::vector<std::string> acquire_keys() const {
    std::vector<std::string> out{keys.lease,  keys.token,      keys.fence,
                                 keys.holder, keys.candidates, keys.front};
    if (options.replicated || options.ack.on()) out.push_back(keys.epoch);
    if (options.ack.on()) out.push_back(keys.replicas);
    if (options.ack.on() && options.acknowledged_promotion) out.push_back(keys.acked);
    return out;
  }
  std::vector<std::string> acquire_args() const {
    return {value,
            ttl_ms,
            keys.channel,
            "",
            options.replicated ? "replicated" : "",
            publish_command(),
            options.ack.on() ? ack_requirement() : std::string(),
            options.identity.node_id,
            priority,
            std::to_string(front_runners),
            std::to_string(options.large_election),
            keys.back_channel};
  }
  // The acquire script's, with lease.failsafe peers (scripts.hpp).
  std::vector<std::string> acquire_args(const failsafe_acquire& a) const {
    auto args = acquire_args();
    const auto& p = a.promise;
    args.insert(args.end(),
                {"failsafe", a.may_win ? "1" : "0", std::to_string(a.cleared_token),
                 options.identity.peer_address, p ? std::to_string(p->token) : "0",
                 p ? or_dash(p->leader) : "-",
                 p ? std::to_string(std::max<long long>(p->remaining.count(), 0)) : "0",
                 std::to_string(a.list.seq), list_text(a.list)});
    return args;
  }
  std::vector<std::string> with_failsafe_key(std::vector<std::string> script_keys) const {
    script_keys.push_back(keys.failsafe);
    return script_keys;
  }
  // The renew script's arguments: without a requirement, or with one.
  std::vector<std::string> renew_args() const {
    std::vector<std::string> args{value, ttl_ms, options.identity.node_id, priority};
    if (options.ack.on()) args.push_back(ack_requirement());
    return args;
  }
  // With lease.failsafe peers: the requirement always in its place ("" =
  // none), then the record's term and list.
  std::vector<std::string> renew_args(std::uint64_t token, const failsafe_list& list) const {
    return {value,
            ttl_ms,
            options.identity.node_id,
            priority,
            options.ack.on() ? ack_requirement() : std::string(),
            "failsafe",
            std::to_string(token),
            std::to_string(list.seq),
            options.identity.peer_address,
            list_text(list)};
  }
  std::vector<std::string> resume_args(std::uint64_t token, const failsafe_list& list) const {
    return {value,
            ttl_ms,
            options.identity.node_id,
            priority,
            options.ack.on() ? ack_requirement() : std::string(),
            std::to_string(token),
            std::to_string(list.seq),
            options.identity.peer_address,
            list_text(list),
            keys.channel,
            publish_command()};
  }
  std::vector<std::string> resume_keys() const {
    std::vector<std::string> out{keys.lease, keys.token, keys.holder, keys.candidates,
                                 keys.failsafe};
    if (options.ack.on()) out.push_back(keys.replicas);
    if (options.ack.on() && options.acknowledged_promotion) out.push_back(keys.acked);
    return out;
  }
  std::vector<std::string> plain_renew_keys() const {
    return {keys.lease, keys.holder, keys.candidates};
  }
  std::vector<std::string> release_keys() const {
    return {keys.lease, keys.token, keys.holder, keys.failsafe};
  }
  // `announced` false: a grant that was never announced is given back
  // without an announcement too.
  std::vector<std::string> release_args(bool announced = true) const {
    std::vector<std::string> args{value, announced ? keys.channel : std::string()};
    if (options.sharded_pubsub) args.push_back(publish_command());
    return args;
  }
  // redis.replica_ack as the scripts take it.
  std::string ack_requirement() const {
    return options.ack.replicas == 0 ? std::string("all") : std::to_string(options.ack.replicas);
  }
  std::vector<std::string> required_renew_keys() const {
    std::vector<std::string> out{keys.lease, keys.holder, keys.candidates, keys.replicas};
    if (options.acknowledged_promotion) out.push_back(keys.acked);
    return out;
  }
  std::string publish_command() const { return options.sharded_pubsub ? "SPUBLISH" : "PUBLISH"; }

  // WAIT for a grant sent on connection `sent_on`; `then` gets "" when
  // enough replicas acknowledged it, else why not. WAIT on another
  // connection would count nothing of ours.
  void acknowledge(std::uint64_t sent_on, int needed, std::function<void(std::string)> then) {
    if (node->connection_generation() != sent_on) {
      then("the connection changed before WAIT could be sent");
      return;
    }
    node->exec(wait_command(needed), [weak = shell.guard(), needed, timeout = options.ack.timeout,
                                      then = std::move(then)](command_result r) {
      if (!weak.expired()) then(ack_shortfall(r, needed, timeout));
    });
  }

  // The new term, once its replicas acknowledged it (the script leaves this
  // to us with a replica requirement). Nothing waits for the answer: a lost
  // announcement costs standbys only their wake-up, as a lost PUBLISH would.
  void announce(std::uint64_t term) {
    node->exec({publish_command(), keys.channel, "acquired " + value + " " + std::to_string(term)},
               [](command_result) {});
  }

  std::vector<std::string> wait_command(int needed) const {
    return {"WAIT", std::to_string(needed), std::to_string(options.ack.timeout.count())};
  }

  // "" when WAIT's reply shows at least `needed` replicas; else why not.
  static std::string ack_shortfall(const std::optional<command_result>& wait, int needed,
                                   milliseconds timeout) {
    // (WAIT's own failure names the connection's.)
    if (!wait) return "no WAIT was sent";
    if (wait->ec) return "WAIT: " + wait->detail;
    if (wait->reply.kind != redis_reply::type::integer) {
      return "WAIT: " + describe_reply(wait->reply);
    }
    if (wait->reply.integer >= needed) return {};
    return std::to_string(wait->reply.integer) + " of " + std::to_string(needed) +
           " replicas acknowledged within " + std::to_string(timeout.count()) + " ms";
  }

  // Runs a script on the node; `done` runs only while the store is alive.
  void eval(const lua_script& script, std::vector<std::string> script_keys,
            std::vector<std::string> args, std::function<void(command_result)> done) {
    node->eval(script, std::move(script_keys), std::move(args),
               [weak = shell.guard(), done = std::move(done)](command_result r) {
                 if (!weak.expired()) done(std::move(r));
               });
  }

  // The common tail of every operation: closed -> aborted, transport error
  // or parse error -> its code and detail (also kept for status()), else the
  // value.
  template <typename T, typename Parse, typename Handler>
  void finish(const command_result& r, Parse parse, const Handler& handler) {
    if (shell.closed()) {
      handler(store_shell::aborted(), T{});
      return;
    }
    if (r.ec) {
      handler(shell.note_failure({r.ec, r.detail}), T{});
      return;
    }
    auto parsed = parse(r.reply);
    if (parsed.ec) {
      handler(shell.note_failure({parsed.ec, parsed.detail}), T{});
      return;
    }
    handler(store_error{}, std::move(parsed.value));
  }

  void report_reset(std::string why, bool record_missing = false) {
    shell.report_reset(store_events::reset{std::move(why), record_missing, {}});
  }

  // A reset the acquire script found. One failover can be seen twice by a
  // candidate that was connected to the old master: the node's run_id check
  // when it reconnects to the new one, then the script's epoch check at its
  // first acquire there. Told once: the second is the same event.
  void report_script_reset(const acquire_script_reply& a) {
    const bool same_failover = !a.record_missing && !reset_told_for.empty() &&
                               reset_told_for == node->server_id();
    if (same_failover) {
      shell.note_reset(a.reset_why);
      return;
    }
    report_reset(a.reset_why, a.record_missing);
  }

  // A large election's back runner listens on the back runners' channel,
  // where nothing is announced: a release then wakes the front runners
  // only. Every other answer (a front runner's, a grant, a small election's)
  // listens on the events channel. A user whose ACL lacks the back runners'
  // channel stays on the events channel (on_watch_failure).
  void follow_runner(const acquire_answer& a) {
    if (!watch || back_channel_refused) return;
    watch->move_to(a.back_runner ? keys.back_channel : keys.channel);
  }
  void on_watch_failure() {
    if (!watch || watch->channel() != keys.back_channel) return;
    if (watch->last_failure().find("NOPERM") == std::string::npos) return;
    back_channel_refused = true;
    watch->move_to(keys.channel);
  }

  // The subscriber calls back after every (re)subscribe, since a release may
  // have gone unheard meanwhile, and for every foreign release.
  void on_release_or_resubscribe() {
    note_wakeups();
    shell.emit(store_events::released{});
  }

  // Wake-ups are trusted while the watch is subscribed; say so on a change.
  // A failure is told once per distinct reason, so that a watch the server
  // refuses (an ACL without SUBSCRIBE) is logged with its cause, not retried
  // in silence.
  void note_wakeups() {
    const bool trusted = current_wakeups() == wakeup_state::subscribed;
    shell.set_wakeups(trusted, trusted || !watch ? std::string() : watch->last_failure());
  }

  wakeup_state current_wakeups() const {
    if (!watch) return wakeup_state::off;
    switch (watch->current_state()) {
      case subscriber::state::subscribed: return wakeup_state::subscribed;
      case subscriber::state::subscribing: return wakeup_state::connecting;
      case subscriber::state::waiting: return wakeup_state::disconnected;
      default: return wakeup_state::off;
    }
  }

  void acquire(std::vector<std::string> script_keys, std::vector<std::string> args,
               acquire_handler handler);
  void renew(const lua_script& script, std::vector<std::string> script_keys,
             std::vector<std::string> args, renew_handler handler);

  // lease.failsafe peers: the port's failsafe calls on this store.
  struct failsafe_side final : failsafe_calls {
    explicit failsafe_side(impl& d) : d_(d) {}
    void async_acquire(const failsafe_acquire& a, acquire_handler handler) override {
      if (d_.shell.reject_if_closed(handler)) return;
      d_.acquire(d_.with_failsafe_key(d_.acquire_keys()), d_.acquire_args(a), std::move(handler));
    }
    void async_renew(const failsafe_list& list, renew_handler handler) override {
      if (d_.shell.reject_if_closed(handler)) return;
      d_.renew(redis_detail::renew_script(),
               d_.with_failsafe_key(d_.options.ack.on() ? d_.required_renew_keys()
                                                        : d_.plain_renew_keys()),
               d_.renew_args(d_.term_token, list), std::move(handler));
    }
    void async_resume(std::uint64_t token, const failsafe_list& list,
                      renew_handler handler) override {
      if (d_.shell.reject_if_closed(handler)) return;
      d_.renew(redis_detail::resume_script(), d_.resume_keys(), d_.resume_args(token, list),
               std::move(handler));
    }

   private:
    impl& d_;
  };

  asio::io_context& io;
  redis_store_options options;
  redis_detail::connection_options conn_options;
  // Closed, the listener, wake-ups said, the last error and reset; and the
  // guard every completion holds.
  store_shell shell;
  const std::string value;
  const election_keys keys;
  const std::string ttl_ms;
  // What the scripts register with our node id: the priority and the card
  // (update_card changes it).
  std::string priority;
  // How many standbys of a large election (options.large_election) try the
  // moment its lease is free (see the front key). Three: what an election
  // of three candidates has, whose takeover is at the machine's floor.
  static constexpr int front_runners = 3;
  // The user may not subscribe to the back runners' channel: stay on the
  // events channel (a back runner then hears releases, and waits its step).
  bool back_channel_refused = false;
  std::shared_ptr<redis_node> node;
  std::shared_ptr<subscriber> watch;
  // redis.replica_ack: the replicas WAIT counts for a renewal (sent with the
  // script, so before its answer): the number the last script answered.
  int ack_needed = 1;
  // The server (run_id) whose arrival the node's run_id check last told
  // watchers of; "" = none.
  std::string reset_told_for;
  // The token of this store's last grant: the term its renewals write into
  // the record of lease.failsafe peers.
  std::uint64_t term_token = 0;
  failsafe_side failsafe_calls_of{*this};
};

redis_store::redis_store(asio::io_context& io, redis_store_options options) {
  const auto& id = options.identity;
  require_valid_identity(id, "redis_store");
  impl_ = std::make_unique<impl>(io, std::move(options));
}

redis_store::~redis_store() = default;

const store_identity& redis_store::identity() const { return impl_->options.identity; }

void redis_store::async_acquire(acquire_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.acquire(d.acquire_keys(), d.acquire_args(), std::move(handler));
}

// The acquire script with `script_keys` and `args` (plain, or with
// lease.failsafe peers), and WAIT behind a grant with a replica requirement.
void redis_store::impl::acquire(std::vector<std::string> script_keys,
                                std::vector<std::string> args, acquire_handler handler) {
  auto& d = *this;
  auto report = [&d](const acquire_script_reply& a) {
    if (a.answer.acquired()) d.term_token = a.answer.token;
    if (a.found_reset) d.report_script_reset(a);
    d.follow_runner(a.answer);
  };
  if (!d.options.ack.on()) {
    d.eval(redis_detail::acquire_script(), std::move(script_keys), std::move(args),
           [&d, report, handler = std::move(handler)](command_result r) {
             d.finish<acquire_script_reply>(
                 r, parse_acquire_reply, [&report, &handler](store_error e, acquire_script_reply a) {
                   if (!e) report(a);
                   handler(std::move(e), std::move(a.answer));
                 });
           });
    return;
  }
  // A standby's attempt stays one command: only a grant is followed by
  // WAIT, on the connection that carried it.
  auto sent_on = std::make_shared<std::uint64_t>(0);
  d.eval(redis_detail::acquire_script(), std::move(script_keys), std::move(args),
         [&d, report, sent_on, handler = std::move(handler)](command_result r) {
           d.finish<acquire_script_reply>(
               r, parse_acquire_reply, [&](store_error e, acquire_script_reply a) {
                 if (!e) report(a);
                 if (!e && a.replicas_short) {
                   // Refused before the grant: nothing to give back.
                   handler(d.shell.note_failure(
                               {redis_errc::not_acknowledged,
                                "acquire refused: " +
                                    replica_shortfall(*a.replicas_short, a.replicas_needed,
                                                      d.ack_requirement(), d.keys.replicas)}),
                           acquire_answer{});
                   return;
                 }
                 if (e || !a.answer.acquired()) {
                   handler(std::move(e), std::move(a.answer));
                   return;
                 }
                 d.ack_needed = a.replicas_needed;
                 d.acknowledge(
                     *sent_on, a.replicas_needed,
                     [&d, answer = std::move(a.answer), announce = a.announce,
                      handler](const std::string& shortfall) {
                       if (d.shell.closed()) {
                         handler(store_shell::aborted(), acquire_answer{});
                         return;
                       }
                       if (shortfall.empty()) {
                         if (announce) d.announce(answer.token);
                         handler({}, answer);
                         return;
                       }
                       // A grant the replicas may not have: a failover now would
                       // lose it while this node worked. Give it back, as silently
                       // as it was made.
                       d.eval(redis_detail::release_script(), d.release_keys(),
                              d.release_args(false),
                              [&d, shortfall, handler](command_result) {
                                handler(
                                    d.shell.note_failure({redis_errc::not_acknowledged,
                                                          "acquire not acknowledged: " + shortfall +
                                                              " (redis.replica_ack); released it"}),
                                    acquire_answer{});
                              });
                     });
               });
         });
  // The script was queued on this connection (a connect starts inside).
  *sent_on = d.node->connection_generation();
}

void redis_store::async_renew(renew_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  if (!d.options.ack.on()) {
    d.renew(redis_detail::renew_script(), d.plain_renew_keys(), d.renew_args(), std::move(handler));
  } else {
    d.renew(redis_detail::renew_script(), d.required_renew_keys(), d.renew_args(),
            std::move(handler));
  }
}

// `script` (the renew or the resume script) with `script_keys` and `args`;
// with a replica requirement, WAIT right behind it.
void redis_store::impl::renew(const lua_script& script, std::vector<std::string> script_keys,
                              std::vector<std::string> args, renew_handler handler) {
  auto& d = *this;
  if (!d.options.ack.on()) {
    d.eval(script, std::move(script_keys), std::move(args),
           [&d, handler = std::move(handler)](command_result r) {
             d.finish<renew_answer>(r, parse_renew_reply, handler);
           });
    return;
  }
  // WAIT goes right behind the script, so it counts the replicas the last
  // script answered; the script's own answer is checked against it after.
  const int sent_needed = d.ack_needed;
  d.node->eval_with(
      script, std::move(script_keys), std::move(args), d.wait_command(sent_needed),
      [&d, sent_needed, weak = d.shell.guard(),
       handler = std::move(handler)](redis_detail::eval_reply r) {
        if (weak.expired()) return;
        d.finish<required_renewal>(
            r.script, parse_required_renew_reply, [&](store_error e, required_renewal a) {
              if (e) {
                handler(std::move(e), renew_answer::lost);
                return;
              }
              if (a.short_of) {
                // Not extended: the renew deadline runs on and stops the app.
                handler(d.shell.note_failure(
                            {redis_errc::not_acknowledged,
                             "renewal refused: " + replica_shortfall(*a.short_of, a.needed,
                                                                     d.ack_requirement(),
                                                                     d.keys.replicas)}),
                        renew_answer::lost);
                return;
              }
              if (a.answer != renew_answer::renewed) {
                handler({}, a.answer);
                return;
              }
              d.ack_needed = a.needed;
              const int needed = std::max(a.needed, sent_needed);
              const auto shortfall =
                  impl::ack_shortfall(r.follow_up, needed, d.options.ack.timeout);
              if (!shortfall.empty()) {
                // Extended on the master only: a failover could lose it, so
                // the renewal does not count and the renew deadline runs on.
                handler(d.shell.note_failure(
                            {redis_errc::not_acknowledged,
                             "renewal not acknowledged: " + shortfall + " (redis.replica_ack)"}),
                        renew_answer::lost);
                return;
              }
              handler({}, a.answer);
            });
      });
}

void redis_store::async_release(release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.eval(redis_detail::release_script(), d.release_keys(), d.release_args(),
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<release_answer>(r, parse_release_reply, handler);
         });
}

// The release script with a reservation: one atomic step that frees our
// lease, announces it as any release, and leaves the key reserved for
// `to_node` for the window (scripts.hpp).
void redis_store::async_hand_over(const std::string& to_node, milliseconds window,
                                  release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  if (d.shell.reject_input(redis_detail::hand_over_target_problem(to_node), handler)) return;
  // The token "": the released term's is the counter's, as for a release.
  std::vector<std::string> args{d.value,
                                d.keys.channel,
                                d.publish_command(),
                                "",
                                to_node,
                                std::to_string(std::max<long long>(window.count(), 0)),
                                d.options.identity.node_id};
  d.eval(redis_detail::release_script(), d.release_keys(), std::move(args),
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<release_answer>(r, parse_release_reply, handler);
         });
}

void redis_store::async_candidates(candidates_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.eval(redis_detail::candidates_script(), {d.keys.candidates}, {},
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<std::vector<registered_candidate>>(
               r,
               [ttl = d.options.identity.ttl](const redis_reply& reply) {
                 return parse_candidates_reply(reply, ttl);
               },
               [&handler](store_error e, std::vector<registered_candidate> found) {
                 std::vector<candidate_info> out;
                 for (auto& c : found) out.push_back(std::move(c.info));
                 handler(std::move(e), std::move(out));
               });
         });
}

void redis_store::register_cooldown(milliseconds cooldown) {
  auto& d = *impl_;
  if (d.shell.closed() || cooldown <= milliseconds(0)) return;
  d.eval(redis_detail::cooldown_script(), {d.keys.candidates},
         {d.options.identity.node_id, d.value, std::to_string(cooldown.count())},
         [](command_result) {});
}

void redis_store::update_card(std::string card) {
  auto& d = *impl_;
  d.options.identity.card = std::move(card);
  d.priority = redis_detail::registration_argument(d.options.identity.priority,
                                                   d.options.identity.card);
}

// lease.failsafe peers reads a peer address from every live line: a line
// without one would stand for a peer nobody can ask, so a candidate of that
// mode that may not lead stays unlisted instead.
void redis_store::async_look(look_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.eval(redis_detail::standby_script(), {d.keys.candidates, d.keys.lease, d.keys.token},
         {d.options.identity.node_id, d.value, d.priority, d.ttl_ms,
          d.options.identity.peer_address.empty() ? "1" : "0"},
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<lease_holder>(r, parse_look_reply, handler);
         });
}

void redis_store::async_create_record(record_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.eval(redis_detail::create_record_script(), {d.keys.token}, {},
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<record_answer>(r, parse_record_reply, handler);
         });
}

void redis_store::watch(event_listener listener) {
  auto& d = *impl_;
  if (!d.shell.set_listener(std::move(listener))) return;
  if (d.watch) return;
  redis_detail::subscriber_options opts;
  opts.connection = d.conn_options;
  opts.channel = d.keys.channel;
  opts.own_value = d.value;
  opts.backoff_initial = d.options.resubscribe_backoff_initial;
  opts.backoff_max = d.options.resubscribe_backoff_max;
  opts.ping_interval = d.options.subscription_ping_interval;
  opts.sharded = d.options.sharded_pubsub;
  opts.on_acquired = [&d, weak = d.shell.guard()](const announced_term& term) {
    if (!weak.expired()) d.shell.emit(store_events::acquired{term.holder, term.token});
  };
  opts.on_subscribed_change = [&d, weak = d.shell.guard()](bool subscribed) {
    if (weak.expired()) return;
    if (!subscribed) d.on_watch_failure();
    d.note_wakeups();
  };
  d.watch = subscriber::create(d.io, std::move(opts), [&d, weak = d.shell.guard()] {
    if (!weak.expired()) d.on_release_or_resubscribe();
  });
  d.watch->start();
}

void redis_store::close() {
  auto& d = *impl_;
  if (!d.shell.close()) return;
  d.node->close();
  if (d.watch) d.watch->stop();
  if (d.options.locator) d.options.locator->close();
}

const std::string& redis_store::lease_value() const { return impl_->value; }

failsafe_calls* redis_store::failsafe() { return &impl_->failsafe_calls_of; }

store_status redis_store::status() const {
  const auto& d = *impl_;
  store_status s;
  s.kind = d.options.kind;
  s.label = d.options.label;
  if (d.options.locator) {
    // Where the master was found, and through what.
    const auto& peer = d.node->peer();
    s.endpoint = redis_detail::located_endpoint_text(d.options.locator->describe(), peer);
    s.members = d.options.locator->sources();
    // A seed node that is the master baton works with is in use through the
    // command connection, though its own (asked only to find the master)
    // may never have been opened: show the link that is in use.
    for (auto& m : s.members) {
      if (m.role == "seed" && names_server(m.endpoint, peer)) m.link = redis_detail::link_of(d.node->current_state());
    }
  } else {
    s.endpoint = d.conn_options.endpoint.redacted();
  }
  s.link = redis_detail::link_of(d.node->current_state());
  s.wakeups = d.current_wakeups();
  d.shell.fill_status(s);
  return s;
}

}  // namespace baton
