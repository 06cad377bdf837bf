// The term the Redlock store holds, and its rounds: renew (on every master,
// renewed when a majority renewed within validity, and the masters where the
// lease is free taken after a won round), release and hand-over (a release
// that leaves each master where the lease was ours reserved for the target).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "master_replies.hpp"
#include "redis/redis_reply.hpp"
#include "redlock_error.hpp"
#include "redlock_store_impl.hpp"

namespace baton {

// With lease.failsafe peers (`list`) the renew script also writes the list
// into each master's record where the lease is ours, when its number is
// above the record's (F1); the masters taken after a won round get the
// record of our term (renew_or_take_script).
void redlock_store::impl::renew(renew_handler handler, const failsafe_list* list) {
  auto call = std::make_shared<renew_call>(std::move(handler), size());
  call->sent = mono_clock::now();
  std::vector<std::string> script_keys{keys.lease, keys.holder, keys.candidates};
  std::vector<std::string> args{value, ttl_ms, options.identity.node_id, priority};
  if (list != nullptr) {
    call->record = record_args(*list);
    script_keys.push_back(keys.failsafe);
    // No replica requirement (""), then the term and its list.
    args.insert(args.end(), {"", "failsafe", std::to_string(held_token), call->record[1],
                             call->record[2], call->record[3]});
  }
  for (std::size_t i = 0; i < size(); ++i) {
    eval(i, redis_detail::renew_script(), script_keys, args,
         [this, call, i](command_result r) { on_renewed(*call, i, std::move(r)); });
  }
}

void redlock_store::impl::on_renewed(renew_call& call, std::size_t i, command_result r) {
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
      if (call.won) take(i, call.record);
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
                                std::string(call.what) + ": renewed by " +
                                    of_masters(call.tally.successes()) +
                                    " after " + microseconds_text(now - call.sent) +
                                    ", past the lease's validity"}),
            renew_answer::lost);
      }
      call.won = true;
      for (const auto m : call.not_ours) take(m, call.record);
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
                                std::string(call.what) + ": renewed by " +
                                    of_masters(call.tally.successes())),
                    renew_answer::lost);
  }
}

// After a won renewal: take master `i` too if the lease is free there (see
// renew_or_take_script), so that a leader holding a bare majority (after a
// contested start, or a master's restart) comes to hold every master and
// survives the next loss. It counts from the next renewal on. `record`:
// lease.failsafe peers' record_args (empty without the mode).
void redlock_store::impl::take(std::size_t i, const std::vector<std::string>& record) {
  std::vector<std::string> script_keys{keys.lease, keys.token, keys.fence, keys.holder, keys.term};
  std::vector<std::string> args{value, ttl_ms, std::to_string(held_token)};
  if (!record.empty()) {
    script_keys.push_back(keys.failsafe);
    args.insert(args.end(), record.begin(), record.end());
  }
  eval(i, redis_detail::renew_or_take_script(), std::move(script_keys), std::move(args),
       [this, i](command_result r) {
         if (r.ec) return;
         const auto parsed = redlock_detail::parse_renewal_reply(r.reply);
         if (!parsed.ec && parsed.value != redlock_detail::renewal::not_ours) {
           members[i].state.holds_lease(true);
           members[i].state.unfenced();
         }
       });
}

void redlock_store::impl::finish(renew_call& call, store_error e, renew_answer a) {
  if (call.done) return;
  call.done = true;
  auto handler = std::move(call.handler);
  handler(std::move(e), a);
}

// A hand-over is a release (`reservation` empty: a plain one) whose
// script leaves each master where the lease was ours reserved for its
// target (see release_script): the target's acquire takes those masters
// as free, anyone else's is refused there until the window ends, and a
// renewal's take never takes a reserved master (it takes free ones only).
// The round is answered as a release's.
void redlock_store::impl::release(release_handler handler, std::vector<std::string> reservation) {
  auto call = std::make_shared<release_call>(std::move(handler), size());
  // Every master announces the term's own token, so that a watcher can
  // tell a late copy of that term from a newer one whatever master it
  // hears first.
  const std::string term = held_token == 0 ? "" : std::to_string(held_token);
  std::vector<std::string> args{value, keys.channel, "PUBLISH", term};
  args.insert(args.end(), reservation.begin(), reservation.end());
  for (std::size_t i = 0; i < size(); ++i) {
    // The record of lease.failsafe peers goes with the lease where it was
    // ours: the term is released (nothing to delete without the mode).
    eval(i, redis_detail::release_script(), {keys.lease, keys.token, keys.holder, keys.failsafe},
         args, [this, call, i](command_result r) { on_released(*call, i, std::move(r)); });
  }
}

void redlock_store::impl::on_released(release_call& call, std::size_t i, command_result r) {
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

void redlock_store::impl::finish(release_call& call, store_error e, release_answer a) {
  if (call.done) return;
  call.done = true;
  auto handler = std::move(call.handler);
  handler(std::move(e), a);
}

}  // namespace baton
