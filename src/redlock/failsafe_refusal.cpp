// The failsafe holds of a Redlock round (failsafe_refusal.hpp).
#include "failsafe_refusal.hpp"

#include <algorithm>
#include <string>

namespace baton::redlock_detail {
namespace {

bool record_hold(const std::optional<master_answer>& a) {
  return a && a->failsafe_hold && a->hold_list >= 0;
}

bool promise_hold(const std::optional<master_answer>& a) {
  return a && a->failsafe_hold && a->hold_list < 0;
}

// The newest term among the record holds: the highest token; 0 = none.
std::uint64_t newest_record_term(const std::vector<std::optional<master_answer>>& answers) {
  std::uint64_t token = 0;
  for (const auto& a : answers) {
    if (record_hold(a)) token = std::max(token, a->failsafe_hold->token);
  }
  return token;
}

std::size_t record_holds_of(const std::vector<std::optional<master_answer>>& answers,
                            std::uint64_t token) {
  return static_cast<std::size_t>(std::count_if(answers.begin(), answers.end(), [&](const auto& a) {
    return record_hold(a) && a->failsafe_hold->token == token;
  }));
}

void held_by(acquire_answer& out, const master_answer& a, failsafe_hold_info hold) {
  out.outcome = acquire_outcome::held_back;
  out.holder.clear();
  out.reserved_for.clear();
  out.remaining = milliseconds(-1);
  out.free_in = std::chrono::microseconds(-1);
  out.why = a.why;
  out.failsafe_hold = std::move(hold);
}

}  // namespace

void apply_failsafe_holds(const std::vector<std::optional<master_answer>>& answers,
                          acquire_answer& out) {
  if (const auto token = newest_record_term(answers); token != 0) {
    const master_answer* newest = nullptr;
    for (const auto& a : answers) {
      if (!record_hold(a) || a->failsafe_hold->token != token) continue;
      if (newest == nullptr || a->hold_list > newest->hold_list) newest = &*a;
    }
    const auto holding = record_holds_of(answers, token);
    if (holding >= majority_of(answers.size())) {
      return held_by(out, *newest, *newest->failsafe_hold);
    }
    if (out.outcome == acquire_outcome::held) return;
    out.outcome = acquire_outcome::held_back;
    out.remaining = milliseconds(-1);
    out.free_in = std::chrono::microseconds(-1);
    out.why = "failsafe hold: " + newest->failsafe_hold->leader + "'s term " +
              std::to_string(token) + " is in the record of only " + std::to_string(holding) +
              " of " + std::to_string(answers.size()) +
              " masters, whose list of peers may be out of date: not cleared until a majority "
              "answers";
    return;
  }
  // A promise (F9): the highest token promised, and every candidate that
  // promised it on any master (each master's registry lists those that
  // reached it).
  const master_answer* best = nullptr;
  for (const auto& a : answers) {
    if (promise_hold(a) && (best == nullptr || a->failsafe_hold->token > best->failsafe_hold->token)) {
      best = &*a;
    }
  }
  if (best != nullptr) {
    auto hold = *best->failsafe_hold;
    for (const auto& a : answers) {
      if (!promise_hold(a) || a->failsafe_hold->token != hold.token) continue;
      for (const auto& p : a->failsafe_hold->peers) {
        if (std::find(hold.peers.begin(), hold.peers.end(), p) == hold.peers.end()) {
          hold.peers.push_back(p);
        }
      }
    }
    return held_by(out, *best, std::move(hold));
  }
  if (out.outcome != acquire_outcome::held_back) return;
  for (const auto& a : answers) {
    if (a && a->what == master_answer::kind::held_back && !a->why.empty()) {
      out.why = a->why;
      return;
    }
  }
}

bool failsafe_hold_unsettled(const std::vector<std::optional<master_answer>>& answers) {
  const auto token = newest_record_term(answers);
  if (token == 0 || record_holds_of(answers, token) >= majority_of(answers.size())) return false;
  return std::any_of(answers.begin(), answers.end(), [](const auto& a) { return !a; });
}

}  // namespace baton::redlock_detail
