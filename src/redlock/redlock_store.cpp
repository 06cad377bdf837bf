// redlock_store: the rounds over the masters (see redlock_store.hpp). Each
// call is one small state object shared by the completions of its per-master
// commands; the first completion that settles the round answers the caller,
// later ones only update what status() shows about their master. Completions
// hold a weak pointer to the store: after destruction nothing runs, after
// close() every call completes once with operation_aborted.
#include "redlock_store.hpp"

#include <algorithm>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>

#include "announcements.hpp"
#include "candidate_merge.hpp"
#include "master_replies.hpp"
#include "member_state.hpp"
#include "quorum.hpp"
#include "redis/lease_keys.hpp"
#include "redis/redis_error.hpp"
#include "redis/redis_node.hpp"
#include "redis/scripts.hpp"
#include "redis/subscriber.hpp"
#include "redlock_error.hpp"
#include "store/store_shell.hpp"

namespace baton {
namespace {

namespace asio = boost::asio;
using redis_detail::command_result;
using redis_detail::connection;
using redis_detail::redis_node;
using redis_detail::subscriber;
using redlock_detail::acquire_round;
using redlock_detail::master_answer;
using redlock_detail::quorum_tally;
using redlock_detail::verdict;
using store_detail::store_shell;

}  // namespace

// Named, not anonymous: redlock_store::impl (declared in the header) holds
// them, and a type with linkage may not hold one without (unity batches
// compile this file as if it were a header, and GCC says so).
namespace redlock_detail {

// What went wrong on which master during one round.
struct round_failures {
  std::vector<std::pair<std::size_t, store_error>> list;

  void add(std::size_t master, store_error e) { list.emplace_back(master, std::move(e)); }
};

struct member {
  std::string endpoint;  // redacted
  std::shared_ptr<redis_detail::redis_node> node;
  std::shared_ptr<redis_detail::subscriber> watch;
  member_state state;
};

}  // namespace redlock_detail

using redlock_detail::member;
using redlock_detail::round_failures;

struct redlock_store::impl {
  struct acquire_call {
    acquire_handler handler;
    time_point sent;
    acquire_round round;
    quorum_tally writes;
    std::uint64_t token = 0;
    enum class stage { asking, writing, done } at = stage::asking;
    // A majority granted and the round has not been lost since.
    bool winning = false;
    round_failures failures;

    acquire_call(acquire_handler h, std::size_t n) : handler(std::move(h)), round(n), writes(n) {}
  };

  struct renew_call {
    renew_handler handler;
    time_point sent;
    quorum_tally tally;
    bool done = false;
    // Renewed by a majority within validity.
    bool won = false;
    // Masters that answered that the lease is not ours there.
    std::vector<std::size_t> not_ours;
    round_failures failures;

    renew_call(renew_handler h, std::size_t n) : handler(std::move(h)), tally(n) {}
  };

  struct release_call {
    release_handler handler;
    quorum_tally answered;
    std::size_t released = 0;
    bool done = false;
    round_failures failures;

    release_call(release_handler h, std::size_t n) : handler(std::move(h)), answered(n) {}
  };

  struct candidates_call {
    candidates_handler handler;
    std::size_t left = 0;
    std::vector<std::vector<registered_candidate>> answered;
    round_failures failures;
  };

  struct record_call {
    record_handler handler;
    std::size_t left = 0;
    std::size_t created = 0;
    round_failures failures;
  };

  impl(asio::io_context& context, redlock_store_options opts)
      : io(context),
        options(std::move(opts)),
        shell(context),
        value(process_lease_value(options.identity.node_id)),
        keys(options.identity.election),
        ttl_ms(std::to_string(options.identity.ttl.count())) {
    for (std::size_t i = 0; i < options.masters.size(); ++i) {
      redis_detail::connection_options c;
      c.endpoint = options.masters[i];
      if (!options.password.empty()) c.endpoint.password = options.password;
      c.password_file = options.password_file;
      c.connect_timeout = options.connect_timeout;
      c.command_timeout = options.command_timeout;
      c.transport = options.transport;
      conn_options.push_back(c);

      redis_detail::node_options n;
      n.connection = c;
      n.token_key = keys.token;
      n.fence_key = keys.fence;
      n.ttl = options.identity.ttl;
      n.on_reset = [this, weak = shell.guard(), i](const std::string& why) {
        if (!weak.expired()) member_reset(i, why, false);
      };
      n.on_failure = [this, weak = shell.guard(), i](store_error e) {
        if (!weak.expired()) member_failed(i, e);
      };
      member m;
      m.endpoint = c.endpoint.redacted();
      m.node = redis_node::create(io, std::move(n));
      members.push_back(std::move(m));
    }
    // The options copy must not keep secrets longer than needed.
    options.password.clear();
    for (auto& m : options.masters) m.password.clear();
  }

  ~impl() {
    shell.retire();
    for (auto& m : members) {
      m.node->close();
      if (m.watch) m.watch->stop();
    }
  }

  std::size_t size() const { return members.size(); }

  // Runs `script` on master `i`; `done` runs only while the store lives.
  // Any reply ends the master's last error (`done` may record a new one).
  void eval(std::size_t i, const redis_detail::lua_script& script,
            std::vector<std::string> script_keys, std::vector<std::string> args,
            std::function<void(command_result)> done) {
    members[i].node->eval(
        script, std::move(script_keys), std::move(args),
        [this, i, weak = shell.guard(), done = std::move(done)](command_result r) {
          if (weak.expired()) return;
          if (!r.ec) members[i].state.answered();
          done(std::move(r));
        });
  }

  // --- per-master bookkeeping --------------------------------------------------

  void member_failed(std::size_t i, const store_error& e) { members[i].state.failed(e.message()); }

  void member_reset(std::size_t i, const std::string& why, bool record_missing) {
    members[i].state.fenced(why, mono_clock::now(), options.identity.ttl);
    const auto text = "master " + members[i].endpoint + ": " + why;
    shell.report_reset(store_events::reset{text, record_missing, members[i].endpoint});
  }

  // A transport error or an unparseable reply of master `i`, kept for the
  // round's error and for status().
  void failed_in(round_failures& f, std::size_t i, store_error e) {
    member_failed(i, e);
    f.add(i, std::move(e));
  }

  // The round's error: when no master answered and all that failed failed
  // alike, their own code (so an unreachable quorum is `unavailable`);
  // otherwise no_quorum.
  // `answered`: whether any master gave a usable answer in the round.
  store_error round_error(const round_failures& f, bool answered, const std::string& summary) {
    store_error out;
    bool alike = !answered;
    for (const auto& [i, e] : f.list) {
      if (std::string(store_error_kind(e.code)) != store_error_kind(f.list.front().second.code)) {
        alike = false;
      }
    }
    out.code = alike && !f.list.empty() ? f.list.front().second.code
                                        : std::error_code(redlock_errc::no_quorum);
    out.detail = summary;
    for (const auto& [i, e] : f.list) out.detail += "; " + members[i].endpoint + ": " + e.message();
    return shell.note_failure(std::move(out));
  }

  std::string of_masters(std::size_t k) const {
    return std::to_string(k) + " of " + std::to_string(size()) + " masters (a majority is " +
           std::to_string(redlock_detail::majority_of(size())) + ")";
  }

  // Releases the lease on every master, answering nobody: after an acquire
  // that did not win. Each master's release runs behind that master's
  // acquire on the same connection, so a grant still on its way is undone.
  // Masters that answered held or held back in `round` granted nothing and
  // are skipped: a standby's refused attempt costs no release at all. It
  // announces nothing (no channel): it ended no term, and an announcement
  // would wake the other standbys to try, and undo, the same.
  void release_everywhere(const redlock_detail::acquire_round* round = nullptr) {
    for (std::size_t i = 0; i < size(); ++i) {
      if (round != nullptr && round->refused_at(i)) continue;
      eval(i, redis_detail::release_script(), {keys.lease, keys.token, keys.holder}, {value, ""},
           [this, i](command_result r) {
             if (!r.ec && parse_release_reply(r.reply).ec == std::error_code{}) {
               members[i].state.holds_lease(false);
             }
           });
    }
  }

  // --- acquire -------------------------------------------------------------------

  void acquire(acquire_handler handler) {
    auto call = std::make_shared<acquire_call>(std::move(handler), size());
    call->sent = mono_clock::now();
    for (std::size_t i = 0; i < size(); ++i) {
      eval(i, redis_detail::acquire_script(),
           {keys.lease, keys.token, keys.fence, keys.holder, keys.candidates},
           {value, ttl_ms, keys.channel, "grant", "", "PUBLISH", "", options.identity.node_id,
            priority},
           [this, call, i](command_result r) { on_grant(call, i, std::move(r)); });
    }
  }

  void on_grant(const std::shared_ptr<acquire_call>& shared, std::size_t i, command_result r) {
    auto& call = *shared;
    if (shell.closed()) return finish(call, store_shell::aborted(), {});
    master_answer answer;
    if (r.ec) {
      failed_in(call.failures, i, {r.ec, r.detail});
    } else if (auto parsed = redlock_detail::parse_grant_reply(r.reply); parsed.ec) {
      failed_in(call.failures, i, {parsed.ec, parsed.detail});
    } else {
      answer = std::move(parsed.value.answer);
      if (parsed.value.found_reset) member_reset(i, "token counter missing", true);
      // Granting, or naming a holder, it is not fenced.
      if (answer.what != master_answer::kind::held_back) members[i].state.unfenced();
      members[i].state.holds_lease(answer.what == master_answer::kind::granted);
    }
    if (call.at != acquire_call::stage::asking) {
      // A late grant after a refusal is undone by the release queued behind
      // it on that connection; after a win it is kept, renewed with the
      // others, and gets the token too, so that its counter says who holds
      // the lease there.
      if (answer.what == master_answer::kind::granted && call.token != 0 && call.winning) {
        eval(i, redis_detail::write_back_script(), {keys.lease, keys.token, keys.term},
             {value, std::to_string(call.token), keys.channel, "0"}, [](command_result) {});
      }
      return;
    }
    call.round.record(i, std::move(answer));
    switch (call.round.current()) {
      case verdict::open: return;
      case verdict::reached: return write_back(shared);
      case verdict::impossible:
        // Answers still in flight may tell the holder's token (they come
        // within the command timeout).
        if (call.round.refusal_waits_for_more(announcements.known())) return;
        return refuse(call);
    }
  }

  // A majority granted: write the token back to the granting masters.
  void write_back(const std::shared_ptr<acquire_call>& shared) {
    auto& call = *shared;
    call.at = acquire_call::stage::writing;
    call.winning = true;
    call.token = call.round.token();
    const auto granted = call.round.granted();
    for (std::size_t i = 0; i < size(); ++i) {
      if (!call.round.granted_at(i)) call.writes.failed(i);
    }
    const std::string announce = call.round.new_term() ? "1" : "0";
    for (const auto i : granted) {
      eval(i, redis_detail::write_back_script(), {keys.lease, keys.token, keys.term},
           {value, std::to_string(call.token), keys.channel, announce},
           [this, shared, i](command_result r) { on_written(*shared, i, std::move(r)); });
    }
  }

  void on_written(acquire_call& call, std::size_t i, command_result r) {
    if (shell.closed()) return finish(call, store_shell::aborted(), {});
    bool written = false;
    if (r.ec) {
      failed_in(call.failures, i, {r.ec, r.detail});
    } else if (auto parsed = redlock_detail::parse_write_back_reply(r.reply); parsed.ec) {
      failed_in(call.failures, i, {parsed.ec, parsed.detail});
    } else if (!parsed.value) {
      failed_in(call.failures, i,
                {redlock_errc::no_quorum, "token " + std::to_string(call.token) +
                                              " not written: " + parsed.detail});
    } else {
      written = true;
    }
    if (call.at != acquire_call::stage::writing) return;
    written ? call.writes.succeeded(i) : call.writes.failed(i);
    switch (call.writes.current()) {
      case verdict::open: return;
      case verdict::reached: break;
      case verdict::impossible:
        call.winning = false;
        release_everywhere();
        return finish(call, round_error(call.failures, true, "acquire: token written back to only " +
                                                           of_masters(call.writes.successes())),
                      {});
    }
    const auto now = mono_clock::now();
    const auto left = redlock_detail::remaining_validity(call.sent, now, options.identity.ttl,
                                                         options.drift);
    if (left <= mono_clock::duration::zero()) {
      call.winning = false;
      release_everywhere();
      return finish(
          call,
          shell.note_failure({redlock_errc::validity_spent,
                              "acquire: granted by " + of_masters(call.writes.successes()) +
                                  " after " + microseconds_text(now - call.sent) +
                                  ", past the lease's validity; released"}),
          {});
    }
    acquire_answer won;
    won.outcome = acquire_outcome::acquired;
    won.token = call.token;
    held_token = call.token;
    announcements.learned({options.identity.node_id, call.token});
    finish(call, {}, std::move(won));
  }

  // No majority can grant any more: undo our grants, and say who holds it.
  void refuse(acquire_call& call) {
    release_everywhere(&call.round);
    const auto granted = call.round.granted().size();
    if (call.round.usable_answers() > granted) {
      auto answer = call.round.refusal(announcements.known());
      if (auto term = call.round.majority_holder()) announcements.learned(std::move(*term));
      if (call.round.split()) {
        // Both sides give their grants back at once (unannounced): try
        // after a few random milliseconds, so as not to split again.
        answer.free_in = std::chrono::microseconds(split_jitter(random));
        answer.remaining = milliseconds(0);
      }
      return finish(call, {}, std::move(answer));
    }
    finish(call, round_error(call.failures, call.round.usable_answers() > 0,
                             "acquire: granted by " + of_masters(granted)),
           {});
  }

  void finish(acquire_call& call, store_error e, acquire_answer a) {
    call.at = acquire_call::stage::done;
    if (!call.handler) return;
    auto handler = std::move(call.handler);
    call.handler = nullptr;
    handler(std::move(e), std::move(a));
  }

  // --- renew -----------------------------------------------------------------------

  void renew(renew_handler handler) {
    auto call = std::make_shared<renew_call>(std::move(handler), size());
    call->sent = mono_clock::now();
    for (std::size_t i = 0; i < size(); ++i) {
      eval(i, redis_detail::renew_script(), {keys.lease, keys.holder, keys.candidates},
           {value, ttl_ms, options.identity.node_id, priority},
           [this, call, i](command_result r) { on_renewed(*call, i, std::move(r)); });
    }
  }

  void on_renewed(renew_call& call, std::size_t i, command_result r) {
    if (shell.closed()) return finish(call, store_shell::aborted(), renew_answer::lost);
    bool renewed = false;
    if (r.ec) {
      failed_in(call.failures, i, {r.ec, r.detail});
    } else if (auto parsed = parse_renew_reply(r.reply); parsed.ec) {
      failed_in(call.failures, i, {parsed.ec, parsed.detail});
    } else {
      renewed = parsed.value == renew_answer::renewed;
      members[i].state.holds_lease(renewed);
      if (renewed) members[i].state.unfenced();
      if (!renewed) {
        call.not_ours.push_back(i);
        // Answered after the round was won: take it now.
        if (call.won) take(i);
      }
    }
    if (call.done) return;
    renewed ? call.tally.succeeded(i) : call.tally.failed(i);
    switch (redlock_detail::settle_renewal(call.tally, call.not_ours.size())) {
      case redlock_detail::renewal_verdict::open: return;
      case redlock_detail::renewal_verdict::renewed: {
        const auto now = mono_clock::now();
        if (redlock_detail::remaining_validity(call.sent, now, options.identity.ttl, options.drift) <=
            mono_clock::duration::zero()) {
          return finish(
              call,
              shell.note_failure({redlock_errc::validity_spent,
                                  "renew: renewed by " + of_masters(call.tally.successes()) +
                                      " after " + microseconds_text(now - call.sent) +
                                      ", past the lease's validity"}),
              renew_answer::lost);
        }
        call.won = true;
        for (const auto m : call.not_ours) take(m);
        return finish(call, {}, renew_answer::renewed);
      }
      case redlock_detail::renewal_verdict::lost: {
        // Not an error: the detail says why, for the log.
        std::vector<std::string> where;
        for (const auto m : call.not_ours) where.push_back(members[m].endpoint);
        return finish(call, {{}, redlock_detail::lost_reason(where, size())}, renew_answer::lost);
      }
      case redlock_detail::renewal_verdict::unknown:
        // Too few masters answered: not known, and the renew deadline decides.
        return finish(call,
                      round_error(call.failures, call.tally.successes() + call.not_ours.size() > 0,
                                  "renew: renewed by " +
                                                     of_masters(call.tally.successes())),
                      renew_answer::lost);
    }
  }

  // After a won renewal: take master `i` too if the lease is free there (see
  // renew_or_take_script), so that a leader holding a bare majority (after a
  // contested start, or a master's restart) comes to hold every master and
  // survives the next loss. It counts from the next renewal on.
  void take(std::size_t i) {
    eval(i, redis_detail::renew_or_take_script(),
         {keys.lease, keys.token, keys.fence, keys.holder, keys.term},
         {value, ttl_ms, std::to_string(held_token)}, [this, i](command_result r) {
           if (r.ec) return;
           const auto parsed = redlock_detail::parse_renewal_reply(r.reply);
           if (!parsed.ec && parsed.value != redlock_detail::renewal::not_ours) {
             members[i].state.holds_lease(true);
             members[i].state.unfenced();
           }
         });
  }

  void finish(renew_call& call, store_error e, renew_answer a) {
    if (call.done) return;
    call.done = true;
    auto handler = std::move(call.handler);
    handler(std::move(e), a);
  }

  // --- release -----------------------------------------------------------------------

  // A hand-over is a release (`reservation` empty: a plain one) whose
  // script leaves each master where the lease was ours reserved for its
  // target (see release_script): the target's acquire takes those masters
  // as free, anyone else's is refused there until the window ends, and a
  // renewal's take never takes a reserved master (it takes free ones only).
  // The round is answered as a release's.
  void release(release_handler handler, std::vector<std::string> reservation = {}) {
    auto call = std::make_shared<release_call>(std::move(handler), size());
    // Every master announces the term's own token, so that a watcher can
    // tell a late copy of that term from a newer one whatever master it
    // hears first.
    const std::string term = held_token == 0 ? "" : std::to_string(held_token);
    std::vector<std::string> args{value, keys.channel, "PUBLISH", term};
    args.insert(args.end(), reservation.begin(), reservation.end());
    for (std::size_t i = 0; i < size(); ++i) {
      eval(i, redis_detail::release_script(), {keys.lease, keys.token, keys.holder}, args,
           [this, call, i](command_result r) { on_released(*call, i, std::move(r)); });
    }
  }

  void on_released(release_call& call, std::size_t i, command_result r) {
    if (shell.closed()) return finish(call, store_shell::aborted(), release_answer::not_ours);
    bool answered = false;
    if (r.ec) {
      failed_in(call.failures, i, {r.ec, r.detail});
    } else if (auto parsed = parse_release_reply(r.reply); parsed.ec) {
      failed_in(call.failures, i, {parsed.ec, parsed.detail});
    } else {
      answered = true;
      members[i].state.holds_lease(false);
      if (parsed.value == release_answer::released) ++call.released;
    }
    if (call.done) return;
    answered ? call.answered.succeeded(i) : call.answered.failed(i);
    const auto v = call.answered.current();
    if (v == verdict::open) return;
    // A majority answered: whatever the rest hold expires on its own. Our
    // lease freed anywhere is a release.
    if (call.released > 0) return finish(call, {}, release_answer::released);
    if (v == verdict::reached) return finish(call, {}, release_answer::not_ours);
    finish(call, round_error(call.failures, call.answered.successes() > 0, "release: answered by " +
                                                of_masters(call.answered.successes())),
           release_answer::not_ours);
  }

  void finish(release_call& call, store_error e, release_answer a) {
    if (call.done) return;
    call.done = true;
    auto handler = std::move(call.handler);
    handler(std::move(e), a);
  }

  // --- candidates --------------------------------------------------------------------

  // Every master's registry, merged once each has answered or failed
  // (within the command timeout): the list is for choosing a switchover's
  // target, where a candidate only some masters saw still counts. Fewer
  // than a majority answering is the round's error, as for every round.
  void candidates(candidates_handler handler) {
    auto call = std::make_shared<candidates_call>();
    call->handler = std::move(handler);
    call->left = size();
    for (std::size_t i = 0; i < size(); ++i) {
      eval(i, redis_detail::candidates_script(), {keys.candidates}, {},
           [this, call, i](command_result r) { on_candidates(*call, i, std::move(r)); });
    }
  }

  void on_candidates(candidates_call& call, std::size_t i, command_result r) {
    // After close() every answer is an abort: nothing to note of the master.
    if (!shell.closed()) {
      if (r.ec) {
        failed_in(call.failures, i, {r.ec, r.detail});
      } else if (auto parsed = parse_candidates_reply(r.reply, options.identity.ttl); parsed.ec) {
        failed_in(call.failures, i, {parsed.ec, parsed.detail});
      } else {
        call.answered.push_back(std::move(parsed.value));
      }
    }
    if (--call.left > 0 || !call.handler) return;
    auto handler = std::move(call.handler);
    if (shell.closed()) return handler(store_shell::aborted(), {});
    if (call.answered.size() < redlock_detail::majority_of(size())) {
      return handler(round_error(call.failures, !call.answered.empty(),
                                 "candidates: answered by " + of_masters(call.answered.size())),
                     {});
    }
    handler({}, redlock_detail::merge_candidates(call.answered));
  }

  // Every master it reaches: the merge keeps the longest cool-down.
  void register_cooldown(milliseconds cooldown) {
    for (std::size_t i = 0; i < size(); ++i) {
      eval(i, redis_detail::cooldown_script(), {keys.candidates},
           {options.identity.node_id, value, std::to_string(cooldown.count())},
           [](command_result) {});
    }
  }

  // A candidate that may not lead, on every master (see
  // redis_store::async_look for lease.failsafe peers): the holder a
  // majority of the masters name, with the highest of their counters (a
  // term's token is at most that), or none; an error without a majority of
  // answers.
  struct look_call {
    look_handler handler;
    std::size_t left = 0;
    std::vector<lease_holder> answers;
    round_failures failures;
  };
  void look(look_handler handler) {
    auto call = std::make_shared<look_call>();
    call->handler = std::move(handler);
    call->left = size();
    for (std::size_t i = 0; i < size(); ++i) {
      eval(i, redis_detail::standby_script(), {keys.candidates, keys.lease, keys.token},
           {options.identity.node_id, value, priority, ttl_ms,
            options.identity.peer_address.empty() ? "1" : "0"},
           [this, call, i](command_result r) {
             if (r.ec) {
               failed_in(call->failures, i, {r.ec, r.detail});
             } else if (auto parsed = parse_look_reply(r.reply); parsed.ec) {
               failed_in(call->failures, i, {parsed.ec, parsed.detail});
             } else {
               call->answers.push_back(std::move(parsed.value));
             }
             if (--call->left > 0 || !call->handler) return;
             auto answer = std::move(call->handler);
             if (shell.closed()) return answer(store_shell::aborted(), {});
             const auto majority = redlock_detail::majority_of(size());
             if (call->answers.size() < majority) {
               return answer(round_error(call->failures, !call->answers.empty(),
                                         "look: answered by " + of_masters(call->answers.size())),
                             {});
             }
             for (const auto& a : call->answers) {
               if (a.node.empty()) continue;
               lease_holder named{a.node, 0};
               std::size_t same = 0;
               for (const auto& b : call->answers) {
                 if (b.node != a.node) continue;
                 ++same;
                 named.token = std::max(named.token, b.token);
               }
               if (same >= majority) return answer({}, named);
             }
             answer({}, {});
           });
    }
  }

  // --- record ------------------------------------------------------------------------

  // Every master needs its record: `baton init-store` waits for all of them.
  void create_record(record_handler handler) {
    auto call = std::make_shared<record_call>();
    call->handler = std::move(handler);
    call->left = size();
    for (std::size_t i = 0; i < size(); ++i) {
      eval(i, redis_detail::create_record_script(), {keys.token}, {},
           [this, call, i](command_result r) {
             if (r.ec) {
               failed_in(call->failures, i, {r.ec, r.detail});
             } else if (auto parsed = parse_record_reply(r.reply); parsed.ec) {
               failed_in(call->failures, i, {parsed.ec, parsed.detail});
             } else if (parsed.value == record_answer::created) {
               ++call->created;
             }
             if (--call->left > 0 || !call->handler) return;
             auto answer = std::move(call->handler);
             if (shell.closed()) return answer(store_shell::aborted(), record_answer::existed);
             if (!call->failures.list.empty()) {
               return answer(round_error(call->failures,
                                         call->failures.list.size() < size(),
                                          "the record is missing on " +
                                              std::to_string(call->failures.list.size()) + " of " +
                                              std::to_string(size()) + " masters"),
                              record_answer::existed);
             }
             answer({}, call->created > 0 ? record_answer::created : record_answer::existed);
           });
    }
  }

  // --- events --------------------------------------------------------------------------

  void start_watch() {
    for (std::size_t i = 0; i < size(); ++i) {
      redis_detail::subscriber_options opts;
      opts.connection = conn_options[i];
      opts.channel = keys.channel;
      opts.own_value = value;
      opts.backoff_initial = options.resubscribe_backoff_initial;
      opts.backoff_max = options.resubscribe_backoff_max;
      opts.ping_interval = options.subscription_ping_interval;
      // Every master announces a term it wrote and its release: the merge
      // says which copy is news. The node is told here, so the subscriber's
      // own wake-up after a resubscribe is left to the merge's rule.
      opts.release_filter = [this, weak = shell.guard()](std::string_view message) {
        if (weak.expired()) return false;
        if (announcements.released(message)) shell.emit(store_events::released{});
        return false;
      };
      opts.on_acquired = [this, weak = shell.guard()](const announced_term& term) {
        if (weak.expired()) return;
        if (announcements.acquired(term))
          shell.emit(store_events::acquired{term.holder, term.token});
      };
      opts.on_subscribed_change = [this, weak = shell.guard()](bool) {
        if (!weak.expired()) note_wakeups();
      };
      // A watch resubscribed: whether anything may have been missed is
      // decided by the count of watches (note_wakeups), not by one of them.
      members[i].watch = subscriber::create(io, std::move(opts), [] {});
      members[i].watch->start();
    }
  }

  std::size_t subscribed() const {
    std::size_t n = 0;
    for (const auto& m : members) {
      if (m.watch && m.watch->current_state() == subscriber::state::subscribed) ++n;
    }
    return n;
  }

  // A release reaches every master the leader held, a majority: a watch on
  // a majority shares at least one of them.
  void note_wakeups() {
    const auto news = announcements.watches(subscribed());
    if (!news.trust_changed) return;
    shell.set_wakeups(news.trusted, {});
    if (news.wake) shell.emit(store_events::released{});
  }

  wakeup_state current_wakeups() const {
    if (!watching) return wakeup_state::off;
    if (subscribed() >= redlock_detail::majority_of(size())) return wakeup_state::subscribed;
    for (const auto& m : members) {
      if (m.watch && m.watch->current_state() == subscriber::state::subscribing) {
        return wakeup_state::connecting;
      }
    }
    return wakeup_state::disconnected;
  }

  asio::io_context& io;
  redlock_store_options options;
  // Closed, the listener, wake-ups said, the last error and reset; and the
  // guard every completion holds.
  store_shell shell;
  const std::string value;
  // Its term key: per master, the largest token a term wrote there.
  const election_keys keys;
  const std::string ttl_ms;
  // What the scripts register with our node id: the priority and the card
  // (update_card changes it).
  std::string priority =
      redis_detail::registration_argument(options.identity.priority, options.identity.card);
  std::vector<redis_detail::connection_options> conn_options;
  std::vector<member> members;
  bool watching = false;
  // Retry delay after a split vote: 0.2 to 5 ms, so that the two sides try
  // at different moments.
  std::minstd_rand random{std::random_device{}()};
  std::uniform_int_distribution<long> split_jitter{200, 5000};
  // The token of the lease we last won (0 = none): renewals may take free
  // masters only for it.
  std::uint64_t held_token = 0;
  redlock_detail::announcement_merge announcements{options.masters.size()};
};

redlock_store::redlock_store(asio::io_context& io, redlock_store_options options) {
  const auto& id = options.identity;
  if (options.masters.empty()) throw std::invalid_argument("redlock_store: no masters");
  if (options.masters.size() > 7) {
    throw std::invalid_argument("redlock_store: at most 7 masters, got " +
                                std::to_string(options.masters.size()));
  }
  require_valid_identity(id, "redlock_store");
  impl_ = std::make_shared<impl>(io, std::move(options));
}

redlock_store::~redlock_store() = default;

const store_identity& redlock_store::identity() const { return impl_->options.identity; }

void redlock_store::async_acquire(acquire_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->acquire(std::move(handler));
}

void redlock_store::async_renew(renew_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->renew(std::move(handler));
}

void redlock_store::async_release(release_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->release(std::move(handler));
}

void redlock_store::async_hand_over(const std::string& to_node, milliseconds window,
                                    release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  if (d.shell.reject_input(redis_detail::hand_over_target_problem(to_node), handler)) return;
  d.release(std::move(handler), {to_node, std::to_string(std::max<long long>(window.count(), 0)),
                                 d.options.identity.node_id});
}

void redlock_store::async_candidates(candidates_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->candidates(std::move(handler));
}

void redlock_store::register_cooldown(milliseconds cooldown) {
  if (impl_->shell.closed() || cooldown <= milliseconds(0)) return;
  impl_->register_cooldown(cooldown);
}

void redlock_store::update_card(std::string card) {
  impl_->options.identity.card = std::move(card);
  impl_->priority = redis_detail::registration_argument(impl_->options.identity.priority,
                                                        impl_->options.identity.card);
}

void redlock_store::async_look(look_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->look(std::move(handler));
}

void redlock_store::async_create_record(record_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->create_record(std::move(handler));
}

void redlock_store::watch(event_listener listener) {
  auto& d = *impl_;
  if (!d.shell.set_listener(std::move(listener))) return;
  if (d.watching) return;
  d.watching = true;
  d.start_watch();
}

void redlock_store::close() {
  auto& d = *impl_;
  if (!d.shell.close()) return;
  for (auto& m : d.members) {
    m.node->close();
    if (m.watch) m.watch->stop();
  }
}

store_status redlock_store::status() const {
  const auto& d = *impl_;
  store_status s;
  s.kind = "redlock";
  s.label = "Redlock";
  std::size_t connected = 0;
  bool connecting = false;
  const auto now = mono_clock::now();
  for (const auto& m : d.members) {
    store_member_status ms;
    ms.endpoint = m.endpoint;
    ms.link = link_of(m.node->current_state());
    ms.holds_lease = m.state.holds_lease();
    ms.last_error = m.state.last_error();
    ms.fence = m.state.fence_at(now);
    if (ms.link == link_state::connected) ++connected;
    if (ms.link == link_state::connecting) connecting = true;
    s.endpoint += (s.endpoint.empty() ? "" : ",") + m.endpoint;
    s.members.push_back(std::move(ms));
  }
  // Linked while a majority is: that is what the rounds need.
  s.link = connected >= redlock_detail::majority_of(d.size()) ? link_state::connected
           : connecting                                        ? link_state::connecting
                                                               : link_state::disconnected;
  s.wakeups = d.current_wakeups();
  d.shell.fill_status(s);
  return s;
}

}  // namespace baton
