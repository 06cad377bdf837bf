// The leader's side of peer-confirmed leadership (docs/safety.md, rules F1,
// F2, F3 and F5): whom it must ask, and what a round of confirmations gives.
//
// peer_list follows the candidate lists the leader writes into the store's
// record with its grant and renewals: a taker reads the record's list and
// clears the term with one of its members, so every list the record may hold
// must be asked. confirmation_rounds collects one round at a time and keeps
// the deadline the store and the counted rounds give; once that deadline has
// passed the term is over on this leader for good.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/failsafe_term.hpp"

namespace baton::failsafe {

/// Every list of peers the record may hold, as far as the leader knows.
class peer_list {
 public:
  /// `self`: this node's id, never its own peer.
  explicit peer_list(std::string self) : self_(std::move(self)) {}

  /// A grant or renewal carrying `candidates` as the record's list was sent,
  /// with list number `seq` (rising within the term: the store keeps the
  /// list of the highest number it applied). Ids may repeat or name self.
  void sent(std::uint64_t seq, std::vector<std::string> candidates);

  /// The store answered the write numbered `seq` with success: the record
  /// now holds its list or the list of a later write. Earlier lists can no
  /// longer be there.
  void acknowledged(std::uint64_t seq);

  /// Whom a round asks: every node of every list the record may hold, self
  /// left out, sorted, once each.
  std::vector<std::string> peers() const;

  /// Whether the leader may run on confirmations: some list was sent, and
  /// every list the record may hold names a peer. A taker that reads an
  /// empty list has nobody to clear the term with, so it need not.
  bool may_run_on_confirmations() const;

 private:
  struct written {
    std::uint64_t first_seq;  // a run of writes with the same list
    std::uint64_t last_seq;
    std::vector<std::string> peers;  // sorted, unique, self left out
  };
  std::string self_;
  std::vector<written> lists_;  // by rising seq; the oldest may be acknowledged
};

/// One confirm request to send.
struct confirm_request {
  std::string peer;
  term_id term;
  std::string nonce;
  std::uint64_t sent_ms = 0;  // wire_ms(the round's send time)
};

/// A leader's rounds of confirmations while the store cannot be reached.
class confirmation_rounds {
 public:
  /// `deadline`: the validity the store gave last (`sent + ttl - drift` of
  /// the last successful grant or renewal).
  confirmation_rounds(term_id term, timing t, time_point deadline);

  /// A renewal succeeded after all: the deadline it gives (never lowered).
  void store_renewed(time_point valid_until);

  /// Starts a round at `now` with `nonce` (fresh, from the caller's random
  /// source): a request for each of `list.peers()`. None, and no round, when
  /// the term is over (now at or past the deadline) or the list does not
  /// allow it (peer_list::may_run_on_confirmations). A new round replaces
  /// the one before: late answers to that one no longer count.
  std::vector<confirm_request> begin_round(const peer_list& list, std::string nonce,
                                           time_point now);

  /// What became of an answer.
  enum class outcome {
    counted,          // one more confirmation for the current round
    round_complete,   // the last one: the deadline moved
    not_this_round,   // another nonce or send time: a replay or a late answer
    not_asked,        // from a node the round did not ask
    already_counted,  // the same peer again
    short_promise,    // it promised for less than this leader's ttl
    too_late,         // it came at or after the deadline: the term is over
    term_over,        // the term had already ended
    noted,            // a refusal of the current round, kept for the status
  };

  /// A verified `confirmed` answer from `peer`, received at `now`, for the
  /// request with `nonce` and `sent_ms`, promising `promise`.
  outcome confirmed(std::string_view peer, std::string_view nonce, std::uint64_t sent_ms,
                    milliseconds promise, time_point now);

  /// A verified `refused` answer: noted for the status (the round cannot
  /// complete without that peer); nothing else changes.
  outcome refused(std::string_view peer, std::string_view nonce, std::uint64_t sent_ms,
                  std::string reason);

  /// Until when the app may run: the later of the store's validity and the
  /// last counted round's `sent + ttl - drift`.
  time_point deadline() const { return deadline_; }

  /// Whether the term is over on this leader: `now` at or past the deadline
  /// (sticky: a later answer or renewal cannot bring it back).
  bool over(time_point now);

  /// The send time of the latest counted round (the renew deadline counts
  /// from it as from a renewal's), if any.
  std::optional<time_point> last_counted() const { return last_counted_; }

  /// The send time of the first counted round: since when the app runs on
  /// confirmations alone (status, logs, metrics).
  std::optional<time_point> on_confirmations_since() const { return since_; }

  /// The current round's count: confirmed of asked; the last refusal's
  /// peer and reason ("" when none).
  std::size_t round_confirmed() const { return confirmed_.size(); }
  std::size_t round_asked() const { return asked_.size(); }
  const std::string& last_refusal() const { return last_refusal_; }

  const term_id& term() const { return term_; }

 private:
  bool is_current(std::string_view nonce, std::uint64_t sent_ms) const;

  term_id term_;
  timing timing_;
  time_point deadline_;
  bool over_ = false;
  // The current round.
  std::optional<time_point> round_sent_;
  std::string nonce_;
  std::vector<std::string> asked_;      // sorted
  std::vector<std::string> confirmed_;  // sorted
  std::optional<time_point> last_counted_;
  std::optional<time_point> since_;
  std::string last_refusal_;
};

}  // namespace baton::failsafe
