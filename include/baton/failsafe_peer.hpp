// A peer's side of peer-confirmed leadership (docs/safety.md, rules F4, F6
// and F7): whether to confirm a leader's term, whether to clear a term for a
// would-be taker, and the earliest time this node may itself take the lease
// or start its app.
//
// Every candidate holds one for its election, whether it leads or not. It
// keeps one promise (the latest, to whichever term), the highest token it
// gave up, the newest term it knows and the last request time it confirmed;
// nothing on disk: a process waits one ttl from its own start instead, since
// every promise an earlier process made has ended by then.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "baton/failsafe_term.hpp"

namespace baton::failsafe {

/// The answer to a confirm request.
struct confirm_answer {
  bool confirmed = false;
  milliseconds promise{0};  // confirmed: how long this node promised (its ttl)
  std::string reason;       // refused: why, for the leader's log
};

/// The answer to a clear request (or to this node's own question as a
/// listed taker).
struct clear_answer {
  bool cleared = false;
  milliseconds remaining{0};  // held: how long until it may clear, at the earliest
  std::string reason;         // held: why
};

/// A promise this node keeps.
struct promise {
  term_id term;
  time_point until;
};

class peer_promises {
 public:
  /// `self`: this node's id; `started`: when this process started (before it
  /// could answer anything).
  peer_promises(std::string self, timing t, time_point started);

  /// A verified confirm request for `term`, sent at `sent_ms` on its
  /// leader's clock, received at `now`. `self_leads`: this node holds a
  /// lease or its app may run.
  confirm_answer on_confirm(const term_id& term, std::uint64_t sent_ms, time_point now,
                            bool self_leads);

  /// A verified clear request for `term` at `now`. `own_app_until`: when
  /// this node's own app may run until, if it may run at all (a leader's
  /// deadline). Clearing gives up every term up to `term.token`.
  clear_answer on_clear(const term_id& term, time_point now,
                        std::optional<time_point> own_app_until = std::nullopt);

  /// A term the store named (a grant, a held answer, an announcement): a
  /// confirm request for an older one, or for another leader of the same
  /// token, is refused from now on.
  void saw_term(const term_id& term);

  /// The earliest time this node may send an acquire that can win, or start
  /// its app: one ttl after its start, and the end of its promise.
  time_point may_take_from() const;
  bool may_take(time_point now) const { return now >= may_take_from(); }

  /// The promise it keeps at `now`, if one has not ended.
  std::optional<promise> kept(time_point now) const;

  /// The highest token it gave up (0: none).
  std::uint64_t given_up_through() const { return given_up_through_; }

 private:
  std::string self_;
  timing timing_;
  time_point started_;
  std::optional<promise> promise_;
  std::uint64_t last_confirmed_ms_ = 0;  // of promise_->term
  std::uint64_t given_up_through_ = 0;
  std::optional<term_id> newest_;
};

}  // namespace baton::failsafe
