// The Redlock store's acquire: the acquire script in "grant" mode on every
// master at once; once a majority granted, the token written back to the
// granting masters, counted only within the lease's validity; a round no
// majority can grant any more refused, and the grants it got given back.
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "master_replies.hpp"
#include "redis/redis_reply.hpp"
#include "redlock_error.hpp"
#include "redlock_store_impl.hpp"

namespace baton {

// Releases the lease on every master, answering nobody: after an acquire
// that did not win. Each master's release runs behind that master's
// acquire on the same connection, so a grant still on its way is undone.
// Masters that answered held or held back in `round` granted nothing and
// are skipped: a standby's refused attempt costs no release at all. It
// announces nothing (no channel): it ended no term, and an announcement
// would wake the other standbys to try, and undo, the same.
void redlock_store::impl::release_everywhere(const redlock_detail::acquire_round* round) {
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

// With lease.failsafe peers (`mode`) each master's grant also runs the
// script's hold (a record or a promise it has not cleared) and register-only
// logic, with the record last among the keys; the record itself is written
// by the write-back, once the token is known.
void redlock_store::impl::acquire(acquire_handler handler, const failsafe_acquire* mode) {
  auto call = std::make_shared<acquire_call>(std::move(handler), size());
  call->sent = mono_clock::now();
  if (mode != nullptr) call->record = record_args(mode->list);
  std::vector<std::string> script_keys{keys.lease,  keys.token,      keys.fence,
                                       keys.holder, keys.candidates, keys.granted};
  if (mode != nullptr) script_keys.push_back(keys.failsafe);
  const auto args = acquire_args(mode);
  for (std::size_t i = 0; i < size(); ++i) {
    eval(i, redis_detail::acquire_script(), script_keys, args,
         [this, call, i](command_result r) { on_grant(call, i, std::move(r)); });
  }
}

void redlock_store::impl::on_grant(const std::shared_ptr<acquire_call>& shared, std::size_t i,
                                   command_result r) {
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
      auto [script_keys, args] = write_back_of(call, "0");
      eval(i, redis_detail::write_back_script(), std::move(script_keys), std::move(args),
           [](command_result) {});
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
void redlock_store::impl::write_back(const std::shared_ptr<acquire_call>& shared) {
  auto& call = *shared;
  call.at = acquire_call::stage::writing;
  call.winning = true;
  call.token = call.round.token();
  const auto granted = call.round.granted();
  for (std::size_t i = 0; i < size(); ++i) {
    if (!call.round.granted_at(i)) call.writes.failed(i);
  }
  const auto [script_keys, args] = write_back_of(call, call.round.new_term() ? "1" : "0");
  for (const auto i : granted) {
    eval(i, redis_detail::write_back_script(), script_keys, args,
         [this, shared, i](command_result r) { on_written(*shared, i, std::move(r)); });
  }
}

// The write-back's keys and arguments; with lease.failsafe peers the record
// last, written in the same step as the token.
std::pair<std::vector<std::string>, std::vector<std::string>> redlock_store::impl::write_back_of(
    const acquire_call& call, const std::string& announce) const {
  std::vector<std::string> script_keys{keys.lease, keys.token, keys.term, keys.granted};
  std::vector<std::string> args{value, std::to_string(call.token), keys.channel, announce};
  if (!call.record.empty()) {
    script_keys.push_back(keys.failsafe);
    args.insert(args.end(), call.record.begin(), call.record.end());
  }
  return {std::move(script_keys), std::move(args)};
}

void redlock_store::impl::on_written(acquire_call& call, std::size_t i, command_result r) {
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
void redlock_store::impl::refuse(acquire_call& call) {
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

void redlock_store::impl::finish(acquire_call& call, store_error e, acquire_answer a) {
  call.at = acquire_call::stage::done;
  if (!call.handler) return;
  auto handler = std::move(call.handler);
  call.handler = nullptr;
  handler(std::move(e), std::move(a));
}

}  // namespace baton
