// The pure half of the Redlock store: how the answers of N independent Redis
// masters combine into one answer for the port. No asio, no hiredis, no clock
// reads: the store feeds in each master's answer and the times it measured,
// and asks for the verdict. Unit and property tests drive it by hand.
//
// The rules (docs/stores/redlock.md):
// - a round is decided as soon as a majority succeeded, or as soon as so many
//   failed that a majority can no longer succeed: a slow minority costs
//   nothing;
// - an acquire is granted only by a majority, and only while the lease's
//   validity (ttl - drift - the time since the first request went out) is
//   positive;
// - the token is one more than the largest counter among the granting
//   masters, and counts only once a second round wrote it back to a majority
//   (see write_back_script in redlock_scripts.hpp for why that orders tokens).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "baton/lease_store.hpp"
#include "baton/time.hpp"

namespace baton::redlock_detail {

/// The smallest number of masters that is more than half of `masters`.
constexpr std::size_t majority_of(std::size_t masters) { return masters / 2 + 1; }

/// Where a round stands.
enum class verdict {
  open,        ///< neither a majority of successes nor of failures yet
  reached,     ///< a majority succeeded
  impossible,  ///< so many failed that a majority cannot succeed any more
};

/// Counts one round's successes and failures over `masters` masters; each
/// master is counted once, whatever arrives later.
class quorum_tally {
 public:
  explicit quorum_tally(std::size_t masters);

  /// Records master `index`'s outcome; false (and ignored) when it already
  /// had one or the index is out of range.
  bool succeeded(std::size_t index);
  bool failed(std::size_t index);

  verdict current() const;
  std::size_t masters() const { return outcome_.size(); }
  std::size_t successes() const { return successes_; }
  std::size_t failures() const { return failures_; }
  bool answered(std::size_t index) const;
  bool succeeded_at(std::size_t index) const;

 private:
  enum class mark : unsigned char { none, success, failure };
  bool record(std::size_t index, mark m);

  std::vector<mark> outcome_;
  std::size_t successes_ = 0;
  std::size_t failures_ = 0;
};

/// One master's answer to the acquire round.
struct master_answer {
  enum class kind {
    granted,    ///< the lease is ours on this master
    held,       ///< another node holds it there
    held_back,  ///< the master's reset fence refuses every grant for now
    failed,     ///< no usable answer (error, timeout, unexpected reply)
  };
  kind what = kind::failed;
  /// Granted: the master's token counter (the largest token it has seen
  /// written); held: the holder's token there (0 = unknown).
  std::uint64_t counter = 0;
  /// Granted: the lease was free there (a new term on this master).
  bool was_free = false;
  /// Held: the holder's node id (for a reservation, the node that handed
  /// over); held back: a node still holding an older lease there, if any.
  std::string holder;
  /// Held: the lease is reserved there by a hand-over for this node, until
  /// free_in; "" = a lease.
  std::string reserved_for;
  /// Held / held back: time from the answer until this master would grant;
  /// negative = unknown.
  std::chrono::microseconds free_in{-1};
  /// Held / held back: how many live candidates of this master's registry,
  /// other than us and the holder, outrank us; negative = unknown.
  int outranked_by = -1;
  /// Held back by lease.failsafe peers' hold (failsafe_refusal.hpp): the
  /// term and whom to ask, as this master's record or registry says.
  std::optional<failsafe_hold_info> failsafe_hold;
  /// That hold's list number when the record holds the term; -1 = a
  /// registered promise's hold.
  long long hold_list = -1;
  /// Held back: why, when it is the mode's (a hold, a register-only
  /// attempt) rather than a reset; "" otherwise.
  std::string why;
};

/// A term this node learned of elsewhere (an announcement, or an earlier
/// refusal in which a majority of masters named its holder): it settles a
/// refusal's ties, which a round decided by its first answers can leave.
struct known_term {
  std::string holder;
  std::uint64_t token = 0;
};

/// The acquire round over all masters.
class acquire_round {
 public:
  explicit acquire_round(std::size_t masters);

  /// Master `index` answered (first answer counts). False when ignored.
  bool record(std::size_t index, master_answer answer);

  /// Reached = a majority granted; impossible = it cannot any more.
  verdict current() const { return tally_.current(); }
  /// Indexes of the masters that granted so far.
  std::vector<std::size_t> granted() const;
  bool granted_at(std::size_t index) const { return tally_.succeeded_at(index); }
  /// Master `index` answered held or held back: it certainly did not grant.
  bool refused_at(std::size_t index) const;
  /// One more than the largest counter among the granting masters: the token
  /// to write back. A master whose counter is missing never granted (its
  /// acquire script raises the fence instead), so every granting master has
  /// one.
  std::uint64_t token() const;
  /// True when any granting master had the lease free: a new term.
  bool new_term() const;
  /// How many masters gave a usable answer (granted, held or held back).
  std::size_t usable_answers() const;
  /// A split vote: we won some masters and another candidate some, and no
  /// holder has a majority. The other one's acquire is refused too and gives
  /// its masters back at once, so waiting for its lease to end would only
  /// waste a ttl. A reservation is no candidate's grant: it lasts its
  /// window whatever we do, so masters reserved for another node make no
  /// split (retrying at once would only spin until the window ends).
  bool split() const;

  /// The port's answer for a refused round: held when some master named
  /// another holder (the one named most often; on a tie, `known`'s holder
  /// if it is among them), with the token most of those masters report (on
  /// a tie `known`'s token if it is among them, else 0: unknown, never a
  /// guess), else held_back. reserved_for is the node a hand-over reserved
  /// the lease for when most of the masters naming that holder answered
  /// with that reservation (on a tie with a lease: "", a lease).
  /// remaining / free_in: when a majority of masters would grant, counting
  /// our own grants (released at once) as free and failed or silent masters
  /// as never; negative when that is never. remaining is in whole
  /// milliseconds, rounded down as PTTL is; free_in is exact.
  /// outranked_by: the largest count among the masters that refused
  /// (negative when none said): each master's registry lists every
  /// candidate that reached it, so the largest is the one that missed the
  /// fewest, as the candidates' union (merge_candidates) does; a master
  /// that restarted empty counts none and hides nobody.
  /// With lease.failsafe peers, the masters' holds then decide
  /// (apply_failsafe_holds, failsafe_refusal.hpp).
  acquire_answer refusal(const std::optional<known_term>& known = std::nullopt) const;
  /// True when the round is refused but refusal(known) could not tell the
  /// holder's token for sure (its masters disagree, and no known term names
  /// the latest token any of them reports) while some masters have yet to
  /// answer: their answers may settle it. A round decided
  /// by its first two answers right after a term began meets this (the
  /// winner answers after a majority of write-backs, so the third master may
  /// still show the older counter): waiting for the answers already in
  /// flight costs at most the command timeout, and names the token a
  /// majority holds instead of none. Also true while two holders are named
  /// as often (a new term beside the term or reservation before it), and
  /// while a failsafe hold's
  /// record was heard from fewer than a majority (failsafe_hold_unsettled).
  bool refusal_waits_for_more(const std::optional<known_term>& known = std::nullopt) const;
  /// The holder a majority of all masters named, with its token, when the
  /// refusal's token is known and names no reservation: a term this node
  /// may remember (a reservation's node ended its term).
  std::optional<known_term> majority_holder() const;

 private:
  // The reservation most of the masters that name `holder` answered with
  // ("" = a lease, also on a tie with one).
  std::string reservation_of(const std::string& holder) const;

  quorum_tally tally_;
  std::vector<std::optional<master_answer>> answers_;
};

/// Where a renewal round stands. Only a master where the key was still ours
/// renews; one that answered "not ours" is certain, a failure is not.
enum class renewal_verdict {
  open,     ///< not settled yet
  renewed,  ///< a majority renewed (validity is checked apart)
  lost,     ///< so many masters said "not ours" that no majority can renew:
            ///< the lease is lost for certain
  unknown,  ///< no majority can renew any more, failures decided it (too few
            ///< masters answered), and the masters yet to answer could not
            ///< make it lost: the renew deadline decides
};

/// `tally`: the round's outcomes (renewed = success, anything else a
/// failure); `not_ours`: how many of those failures said "not ours".
renewal_verdict settle_renewal(const quorum_tally& tally, std::size_t not_ours);

/// Why a lost renewal is lost, for the log: "the lease is no longer this
/// node's on 2 of 3 masters (a majority is 2): <endpoint>, <endpoint>".
std::string lost_reason(const std::vector<std::string>& not_ours, std::size_t masters);

/// What is left of a lease's validity at `now` when its first request went
/// out at `sent`: ttl - drift - (now - sent). Zero or negative = spent.
mono_clock::duration remaining_validity(time_point sent, time_point now, milliseconds ttl,
                                        milliseconds drift);

}  // namespace baton::redlock_detail
