// A would-be taker's side of peer-confirmed leadership (docs/safety.md, rule
// F6): what to do when the store refused an acquire with a failsafe hold,
// i.e. its record holds an unreleased term that ran with the mode on, whose
// leader may still run on its peers' confirmations.
//
// One clearance per hold: it says whether this node may acquire now (and
// which token it cleared, which the acquire names), whom to send clear
// requests to, or until when to wait. A listed taker clears from its own
// state, without a message; any other asks the listed peers and the last
// holder, and one `cleared` answer from one of them is enough.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "baton/failsafe_peer.hpp"
#include "baton/failsafe_term.hpp"

namespace baton::failsafe {

/// What the store answered instead of a grant: the term to clear and whom
/// to ask (the record's list, or the candidates whose registrations carry
/// a promise to that term).
struct failsafe_hold {
  term_id term;
  std::vector<std::string> peers;
};

class clearance {
 public:
  clearance(std::string self, failsafe_hold hold);

  /// Acquire now, naming `cleared_token` as the highest term cleared.
  struct take {
    std::uint64_t cleared_token = 0;
  };
  /// Send a clear request for the hold's term to each of `whom`.
  struct ask {
    std::vector<std::string> whom;
  };
  /// Nothing before `until` (then call next() again).
  struct wait {
    time_point until;
    std::string why;
  };
  using step = std::variant<take, ask, wait>;

  /// The next step at `now`. `own` is this node's peer state: it must keep
  /// no promise and have started a ttl ago, and a listed taker clears the
  /// term in it (giving the term up).
  step next(peer_promises& own, time_point now);

  /// A verified `cleared` answer from `node`; ignored unless it is a listed
  /// peer or the term's leader.
  void cleared_by(std::string_view node);

  /// A verified `held` answer from `node` at `now`: nobody is asked again
  /// before `now + remaining`.
  void held_by(std::string_view node, milliseconds remaining, time_point now);

  const failsafe_hold& hold() const { return hold_; }

 private:
  bool may_answer(std::string_view node) const;

  std::string self_;
  failsafe_hold hold_;
  bool cleared_ = false;
  std::optional<time_point> held_until_;
  std::string held_why_;
};

}  // namespace baton::failsafe
