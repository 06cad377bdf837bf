// A leader's rounds of confirmations (docs/safety.md, F3 and F5): a round
// counts when every listed peer confirmed it before the current deadline,
// and moves the deadline to its send time plus ttl minus drift.
#include <algorithm>

#include "baton/failsafe_leader.hpp"

namespace baton::failsafe {

confirmation_rounds::confirmation_rounds(term_id term, timing t, time_point deadline)
    : term_(std::move(term)), timing_(t), deadline_(deadline) {}

void confirmation_rounds::store_renewed(time_point valid_until) {
  if (over_) return;
  deadline_ = std::max(deadline_, valid_until);
}

bool confirmation_rounds::over(time_point now) {
  if (now >= deadline_) over_ = true;
  return over_;
}

std::vector<confirm_request> confirmation_rounds::begin_round(const peer_list& list,
                                                              std::string nonce, time_point now) {
  std::vector<confirm_request> requests;
  if (over(now) || !list.may_run_on_confirmations()) return requests;
  round_sent_ = now;
  nonce_ = std::move(nonce);
  asked_ = list.peers();
  confirmed_.clear();
  for (const auto& peer : asked_) requests.push_back({peer, term_, nonce_, wire_ms(now)});
  return requests;
}

bool confirmation_rounds::is_current(std::string_view nonce, std::uint64_t sent_ms) const {
  return round_sent_ && nonce == nonce_ && sent_ms == wire_ms(*round_sent_);
}

confirmation_rounds::outcome confirmation_rounds::confirmed(std::string_view peer,
                                                            std::string_view nonce,
                                                            std::uint64_t sent_ms,
                                                            milliseconds promise, time_point now) {
  if (over_) return outcome::term_over;
  // No resurrection: at the deadline the keeper killed the app, and a
  // confirmation that arrives later cannot have been counted in time.
  if (over(now)) return outcome::too_late;
  if (!is_current(nonce, sent_ms)) return outcome::not_this_round;
  if (!std::binary_search(asked_.begin(), asked_.end(), peer)) return outcome::not_asked;
  if (std::binary_search(confirmed_.begin(), confirmed_.end(), peer)) {
    return outcome::already_counted;
  }
  // A peer with a shorter ttl would end its promise before the deadline
  // this leader would count from it.
  if (promise < timing_.ttl) return outcome::short_promise;
  confirmed_.insert(std::upper_bound(confirmed_.begin(), confirmed_.end(), peer),
                    std::string(peer));
  if (confirmed_.size() < asked_.size()) return outcome::counted;
  const time_point sent = *round_sent_;
  deadline_ = std::max(deadline_, sent + timing_.ttl - timing_.drift);
  last_counted_ = std::max(last_counted_.value_or(sent), sent);
  if (!since_) since_ = sent;
  return outcome::round_complete;
}

confirmation_rounds::outcome confirmation_rounds::refused(std::string_view peer,
                                                          std::string_view nonce,
                                                          std::uint64_t sent_ms,
                                                          std::string reason) {
  if (over_) return outcome::term_over;
  if (!is_current(nonce, sent_ms)) return outcome::not_this_round;
  if (!std::binary_search(asked_.begin(), asked_.end(), peer)) return outcome::not_asked;
  last_refusal_ = std::string(peer) + ": " + reason;
  return outcome::noted;
}

}  // namespace baton::failsafe
