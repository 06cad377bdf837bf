// The Redlock store's rounds that hold no term: the candidates' list (every
// master's registry, merged), the cool-down registered on every master, a
// look at who holds the lease (for a candidate that may not lead), and the
// record created on every master (`baton init-store`).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "candidate_merge.hpp"
#include "redis/redis_reply.hpp"
#include "redlock_store_impl.hpp"

namespace baton {

// Every master's registry, merged once each has answered or failed
// (within the command timeout): the list is for choosing a switchover's
// target, where a candidate only some masters saw still counts. Fewer
// than a majority answering is the round's error, as for every round.
void redlock_store::impl::candidates(candidates_handler handler) {
  auto call = std::make_shared<candidates_call>();
  call->handler = std::move(handler);
  call->left = size();
  for (std::size_t i = 0; i < size(); ++i) {
    eval(i, redis_detail::candidates_script(), {keys.candidates}, {},
         [this, call, i](command_result r) { on_candidates(*call, i, std::move(r)); });
  }
}

void redlock_store::impl::on_candidates(candidates_call& call, std::size_t i, command_result r) {
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
void redlock_store::impl::register_cooldown(milliseconds cooldown) {
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
void redlock_store::impl::look(look_handler handler) {
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

// Every master needs its record: `baton init-store` waits for all of them.
void redlock_store::impl::create_record(record_handler handler) {
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

}  // namespace baton
