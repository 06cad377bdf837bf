// A peer's promises (docs/safety.md, F4, F6 and F7).
#include <algorithm>

#include "baton/failsafe_peer.hpp"

namespace baton::failsafe {
namespace {

std::string term_text(const term_id& term) {
  return term.leader + "'s term " + std::to_string(term.token);
}

}  // namespace

peer_promises::peer_promises(std::string self, timing t, time_point started)
    : self_(std::move(self)), timing_(t), started_(started) {}

void peer_promises::saw_term(const term_id& term) {
  if (!newest_ || term.token > newest_->token) newest_ = term;
}

confirm_answer peer_promises::on_confirm(const term_id& term, std::uint64_t sent_ms, time_point now,
                                         bool self_leads) {
  confirm_answer refusal;
  if (term.leader == self_) {
    refusal.reason = "a node does not confirm its own term";
    return refusal;
  }
  if (self_leads) {
    refusal.reason = "this node leads";
    return refusal;
  }
  if (term.token <= given_up_through_) {
    // F6: it told a taker it held no promise for this term (or a later one).
    refusal.reason = "this node gave up terms up to " + std::to_string(given_up_through_) +
                     " for a candidate that is taking over";
    return refusal;
  }
  if (newest_ && term.token < newest_->token) {
    refusal.reason = "this node knows a newer term: " + term_text(*newest_);
    return refusal;
  }
  if (newest_ && term.token == newest_->token && term.leader != newest_->leader) {
    refusal.reason =
        "the store named " + newest_->leader + " for term " + std::to_string(term.token);
    return refusal;
  }
  const bool same_term = promise_ && promise_->term == term;
  if (same_term && sent_ms <= last_confirmed_ms_) {
    refusal.reason = "replayed or overtaken: not sent after the last request confirmed";
    return refusal;
  }
  saw_term(term);
  // One promise, the latest; its end never moves earlier, whatever term it
  // was for, so a take waits for every promise this process made.
  const time_point until = now + timing_.ttl;
  promise_ = promise{term, promise_ ? std::max(promise_->until, until) : until};
  last_confirmed_ms_ = sent_ms;
  return {true, timing_.ttl, ""};
}

clear_answer peer_promises::on_clear(const term_id& term, time_point now,
                                     std::optional<time_point> own_app_until) {
  if (own_app_until && now < *own_app_until) {
    return {false, std::chrono::ceil<milliseconds>(*own_app_until - now),
            "this node's own app may run until then"};
  }
  if (now < started_ + timing_.ttl) {
    // F7: an earlier process under this node id may have promised.
    return {false, std::chrono::ceil<milliseconds>(started_ + timing_.ttl - now),
            "this node started less than a ttl ago"};
  }
  if (promise_ && now < promise_->until) {
    return {false, std::chrono::ceil<milliseconds>(promise_->until - now),
            "this node promised " + term_text(promise_->term)};
  }
  given_up_through_ = std::max(given_up_through_, term.token);
  return {true, milliseconds{0}, ""};
}

time_point peer_promises::may_take_from() const {
  const time_point start_wait = started_ + timing_.ttl;
  return promise_ ? std::max(start_wait, promise_->until) : start_wait;
}

std::optional<promise> peer_promises::kept(time_point now) const {
  if (promise_ && now < promise_->until) return promise_;
  return std::nullopt;
}

}  // namespace baton::failsafe
