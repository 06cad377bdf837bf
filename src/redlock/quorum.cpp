// The quorum rules of quorum.hpp. Everything here is arithmetic over the
// answers the store recorded; the store owns the clock and the sockets.
#include "quorum.hpp"

#include <algorithm>
#include <map>

#include "failsafe_refusal.hpp"

namespace baton::redlock_detail {

quorum_tally::quorum_tally(std::size_t masters) : outcome_(masters, mark::none) {}

bool quorum_tally::record(std::size_t index, mark m) {
  if (index >= outcome_.size() || outcome_[index] != mark::none) return false;
  outcome_[index] = m;
  ++(m == mark::success ? successes_ : failures_);
  return true;
}

bool quorum_tally::succeeded(std::size_t index) { return record(index, mark::success); }
bool quorum_tally::failed(std::size_t index) { return record(index, mark::failure); }

bool quorum_tally::answered(std::size_t index) const {
  return index < outcome_.size() && outcome_[index] != mark::none;
}

bool quorum_tally::succeeded_at(std::size_t index) const {
  return index < outcome_.size() && outcome_[index] == mark::success;
}

verdict quorum_tally::current() const {
  const auto need = majority_of(outcome_.size());
  if (successes_ >= need) return verdict::reached;
  // More failures than the masters a majority can spare.
  if (failures_ > outcome_.size() - need) return verdict::impossible;
  return verdict::open;
}

acquire_round::acquire_round(std::size_t masters) : tally_(masters), answers_(masters) {}

bool acquire_round::record(std::size_t index, master_answer answer) {
  const bool granted = answer.what == master_answer::kind::granted;
  if (!(granted ? tally_.succeeded(index) : tally_.failed(index))) return false;
  answers_[index] = std::move(answer);
  return true;
}

std::vector<std::size_t> acquire_round::granted() const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < answers_.size(); ++i) {
    if (tally_.succeeded_at(i)) out.push_back(i);
  }
  return out;
}

std::uint64_t acquire_round::token() const {
  std::uint64_t largest = 0;
  for (const auto i : granted()) largest = std::max(largest, answers_[i]->counter);
  return largest + 1;
}

bool acquire_round::new_term() const {
  for (const auto i : granted()) {
    if (answers_[i]->was_free) return true;
  }
  return false;
}

std::size_t acquire_round::usable_answers() const {
  return static_cast<std::size_t>(std::count_if(answers_.begin(), answers_.end(), [](const auto& a) {
    return a && a->what != master_answer::kind::failed;
  }));
}

bool acquire_round::refused_at(std::size_t index) const {
  if (index >= answers_.size() || !answers_[index]) return false;
  const auto what = answers_[index]->what;
  return what == master_answer::kind::held || what == master_answer::kind::held_back;
}

bool acquire_round::split() const {
  if (granted().empty()) return false;
  std::map<std::string, std::size_t> named;
  for (const auto& a : answers_) {
    if (a && a->what == master_answer::kind::held && !a->holder.empty() &&
        a->reserved_for.empty()) {
      if (++named[a->holder] >= majority_of(answers_.size())) return false;
    }
  }
  return !named.empty();
}

acquire_answer acquire_round::refusal(const std::optional<known_term>& known) const {
  using kind = master_answer::kind;
  acquire_answer out;
  out.outcome = acquire_outcome::held_back;
  std::map<std::string, std::size_t> named;
  // Per holder, how many masters named each token.
  std::map<std::string, std::map<std::uint64_t, std::size_t>> tokens;
  // Per master: how long until it would grant; nullopt = never (failed,
  // silent, or a time it did not say).
  std::vector<std::optional<std::chrono::microseconds>> free_in;
  for (const auto& a : answers_) {
    if (!a || a->what == kind::failed) {
      free_in.emplace_back();
      continue;
    }
    if (a->what == kind::granted) {
      free_in.emplace_back(std::chrono::microseconds::zero());
      continue;
    }
    out.outranked_by = std::max(out.outranked_by, a->outranked_by);
    if (a->what == kind::held) {
      out.outcome = acquire_outcome::held;
      if (!a->holder.empty()) {
        ++named[a->holder];
        if (a->counter != 0) ++tokens[a->holder][a->counter];
      }
    }
    free_in.push_back(a->free_in.count() >= 0 ? std::optional(a->free_in) : std::nullopt);
  }
  // The holder named most often. A tie comes from a round settled by its
  // first answers, one of them another standby's grant of a free master
  // that it gives back at once: the term this node knows of breaks it.
  std::size_t most = 0;
  for (const auto& [holder, count] : named) {
    if (count > most || (count == most && known && holder == known->holder)) {
      most = count;
      out.holder = holder;
    }
  }
  // The holder's token is the one most masters report: its write-back put it
  // on a majority, while a master that missed it reports an older counter,
  // and one that lost its data, or was taken back after that, a counter
  // lifted to its clock. A tie is not a token anybody had; the known term's
  // token settles it, else it stays unknown (0).
  std::size_t votes = 0;
  bool tied = false;
  for (const auto& [token, count] : tokens[out.holder]) {
    if (count > votes) {
      votes = count;
      out.token = token;
      tied = false;
    } else if (count == votes) {
      tied = true;
    }
  }
  if (tied) {
    const auto& counts = tokens[out.holder];
    const bool known_among = known && known->holder == out.holder &&
                             counts.count(known->token) != 0 && counts.at(known->token) == votes;
    out.token = known_among ? known->token : 0;
  }
  out.reserved_for = reservation_of(out.holder);
  // Sorted with "never" last: the majority-th smallest is when a majority
  // would grant.
  std::sort(free_in.begin(), free_in.end(), [](const auto& a, const auto& b) {
    if (!a) return false;
    if (!b) return true;
    return *a < *b;
  });
  const auto& when = free_in[majority_of(free_in.size()) - 1];
  if (when) {
    out.free_in = *when;
    // Whole milliseconds, as PTTL counts them; free_in has the rest.
    out.remaining = std::chrono::duration_cast<milliseconds>(*when);
  }
  apply_failsafe_holds(answers_, out);
  return out;
}

bool acquire_round::refusal_waits_for_more(const std::optional<known_term>& known) const {
  if (current() != verdict::impossible) return false;
  std::size_t answered = 0;
  for (const auto& a : answers_) answered += a ? 1 : 0;
  if (answered == answers_.size()) return false;
  if (failsafe_hold_unsettled(answers_)) return true;
  const auto answer = refusal(known);
  if (answer.outcome != acquire_outcome::held) return false;
  // Two holders named as often: a new term's grants still on their way to
  // some masters, beside the term (or the hand-over's reservation) before
  // it. Whichever refusal(known) picked may be the older one; the answers
  // in flight settle it.
  std::map<std::string, std::size_t> named;
  for (const auto& a : answers_) {
    if (a && a->what == master_answer::kind::held && !a->holder.empty()) ++named[a->holder];
  }
  for (const auto& [holder, count] : named) {
    if (holder != answer.holder && count == named[answer.holder]) return true;
  }
  // Settled when a majority of all masters report the holder's token: its
  // write-back reached them. Fewer (a tie, or a plurality) may be a term
  // whose write-back is still on its way to some of them, and a tie broken
  // by the term this node knows would name the term before it: the answers
  // still in flight settle it.
  // A tie settled by the known term's token stands when no master reports
  // a later one.
  std::size_t naming = 0;
  std::size_t with_token = 0;
  std::uint64_t highest = 0;
  for (const auto& a : answers_) {
    if (!a || a->what != master_answer::kind::held || a->holder != answer.holder) continue;
    if (a->counter != 0) ++naming;
    if (answer.token != 0 && a->counter == answer.token) ++with_token;
    highest = std::max(highest, a->counter);
  }
  if (answer.token != 0 &&
      (with_token >= majority_of(answers_.size()) || answer.token >= highest)) {
    return false;
  }
  return naming > 0;
}

std::string acquire_round::reservation_of(const std::string& holder) const {
  if (holder.empty()) return {};
  // Per reserved node ("" = a lease), how many masters naming `holder` say so.
  std::map<std::string, std::size_t> said;
  for (const auto& a : answers_) {
    if (a && a->what == master_answer::kind::held && a->holder == holder) ++said[a->reserved_for];
  }
  std::string out;
  std::size_t most = 0;
  for (const auto& [reserved_for, count] : said) {
    // "" sorts first, so a tie with a lease stays a lease.
    if (count > most) {
      most = count;
      out = reserved_for;
    }
  }
  return out;
}

std::optional<known_term> acquire_round::majority_holder() const {
  const auto answer = refusal();
  if (answer.outcome != acquire_outcome::held || answer.token == 0) return std::nullopt;
  if (!answer.reserved_for.empty()) return std::nullopt;
  std::size_t named = 0;
  for (const auto& a : answers_) {
    if (a && a->what == master_answer::kind::held && a->holder == answer.holder) ++named;
  }
  if (named < majority_of(answers_.size())) return std::nullopt;
  return known_term{answer.holder, answer.token};
}

renewal_verdict settle_renewal(const quorum_tally& tally, std::size_t not_ours) {
  switch (tally.current()) {
    case verdict::open: return renewal_verdict::open;
    case verdict::reached: return renewal_verdict::renewed;
    case verdict::impossible: break;
  }
  // Lost for certain only when the masters that said so leave no majority.
  // While the masters yet to answer could still make it so, wait for them:
  // a quick failure (a dead master refuses at once) must not hide that the
  // others no longer hold the lease.
  const auto spare = tally.masters() - majority_of(tally.masters());
  if (not_ours > spare) return renewal_verdict::lost;
  const auto unanswered = tally.masters() - tally.successes() - tally.failures();
  if (not_ours + unanswered > spare) return renewal_verdict::open;
  return renewal_verdict::unknown;
}

std::string lost_reason(const std::vector<std::string>& not_ours, std::size_t masters) {
  std::string out = "the lease is no longer this node's on " + std::to_string(not_ours.size()) +
                    " of " + std::to_string(masters) + " masters (a majority is " +
                    std::to_string(majority_of(masters)) + ")";
  for (std::size_t i = 0; i < not_ours.size(); ++i) out += (i == 0 ? ": " : ", ") + not_ours[i];
  return out;
}

mono_clock::duration remaining_validity(time_point sent, time_point now, milliseconds ttl,
                                        milliseconds drift) {
  return ttl - drift - (now - sent);
}

}  // namespace baton::redlock_detail
