// A would-be taker's clearance of a failsafe hold (docs/safety.md, F6).
#include <algorithm>

#include "baton/failsafe_taker.hpp"

namespace baton::failsafe {

clearance::clearance(std::string self, failsafe_hold hold)
    : self_(std::move(self)), hold_(std::move(hold)) {
  auto& peers = hold_.peers;
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  // The leader is never its own peer (F1); a record that lists it anyway
  // must not let it count twice.
  std::erase(peers, hold_.term.leader);
}

bool clearance::may_answer(std::string_view node) const {
  return node == hold_.term.leader ||
         std::binary_search(hold_.peers.begin(), hold_.peers.end(), node);
}

void clearance::cleared_by(std::string_view node) {
  if (node != self_ && may_answer(node)) cleared_ = true;
}

void clearance::held_by(std::string_view node, milliseconds remaining, time_point now) {
  if (!may_answer(node)) return;
  const time_point until = now + std::max(remaining, milliseconds{1});
  if (!held_until_ || until < *held_until_) {
    held_until_ = until;
    held_why_ = std::string(node) + " keeps " + hold_.term.leader + "'s term " +
                std::to_string(hold_.term.token) + " alive";
  }
}

clearance::step clearance::next(peer_promises& own, time_point now) {
  // F7 first: this node's own promises and its start, whatever the hold.
  if (!own.may_take(now)) {
    return wait{own.may_take_from(), "this node keeps a promise or started less than a ttl ago"};
  }
  const take cleared_take{hold_.term.token};
  if (cleared_) return cleared_take;
  // Nobody listed: its leader could not run on confirmations (F2).
  if (hold_.peers.empty()) return cleared_take;
  if (self_ != hold_.term.leader &&
      std::binary_search(hold_.peers.begin(), hold_.peers.end(), self_)) {
    // A listed taker is the peer it would ask: its own state decides, and
    // it gives the term up as it would for another taker.
    const clear_answer own_answer = own.on_clear(hold_.term, now);
    if (own_answer.cleared) {
      cleared_ = true;
      return cleared_take;
    }
    return wait{now + own_answer.remaining, own_answer.reason};
  }
  if (held_until_ && now < *held_until_) return wait{*held_until_, held_why_};
  held_until_.reset();
  ask a;
  for (const auto& peer : hold_.peers) {
    if (peer != self_) a.whom.push_back(peer);
  }
  if (hold_.term.leader != self_) a.whom.push_back(hold_.term.leader);
  return a;
}

}  // namespace baton::failsafe
