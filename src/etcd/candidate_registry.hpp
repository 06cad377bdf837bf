// The candidates of an election as etcd keeps them, without I/O.
//
// A standby keeps no etcd lease alive (its acquire attempts are a read and,
// when held, a question about the holder's lease), so a registration cannot
// live on a lease of its own without a call of its own. It is a put with no
// lease instead, of <dir>candidates/<node_id>, in the txn that carries the
// read an acquire attempt or a renewal makes anyway (only when it is due,
// every half ttl: registration_run), and it lapses by etcd's revision, told
// against each store's own monotonic clock: no two clocks are ever
// compared.
//
// - Every store notes, for the answers it reads, the revision an answer
//   carried and when it arrived (revision_clock). An answer with revision R
//   that arrived at t says every write at or below R was made by t: a
//   registration at or below the highest revision seen by now - 2 ttls is
//   at least two ttls old, whoever reads it.
// - A registration's value, "<priority> <live_ms> <lapsed_below>", carries
//   its store's own such revision (lapsed_below), so that a reader with
//   little history of its own (just started) judges as well as the
//   candidate that registered last; and how long its store had been
//   registered without a gap when it was put (live_ms, by that store's
//   clock).
// - A reader lists the registrations above the highest of those revisions;
//   live_for is live_ms plus the least time the reader knows has passed
//   since the put. Lapsed ones it deletes (each only if unchanged). An
//   acquire attempt reads them in its own txn too, for its outranked_by.
// - A new store (a restarted process, the same node id) starts a new run:
//   its first call puts live_ms 0, so live_for starts again however short
//   the restart was.
// - A registration's last attempt is the least time the reader knows has
//   passed since its put: a store puts at most every half ttl, so an attempt
//   made soon after a put is not seen (a standby, whose attempts are more
//   than half a ttl apart, puts at each one).
// - A cool-down (a store that gave the lease up makes no attempt for a
//   while) is a put of the registration it marks, with " <cooling_ms>
//   <revision>" after its fields: that registration's revision, by which it
//   still lapses and tells its last attempt, as if the mark were not there;
//   the cool-down lasts cooling_ms from the mark's own put, told as
//   live_for is. Put only over that registration (if unchanged); the store's
//   next call puts a plain registration again, which ends it.
//
// So a store gone stays listed for two ttls plus the gap between the
// answers the judging store read around then (a leader's renewals: a third
// of a ttl), and a live one is never dropped early.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/lease_store.hpp"
#include "baton/time.hpp"
#include "etcd_wire.hpp"

namespace baton::etcd_detail {

/// lease.failsafe peers (docs/safety.md, F9): where a candidate's peer port
/// is, and the promise it keeps, as its registration says.
struct registration_failsafe {
  std::string address;  ///< "" = none published
  std::uint64_t promise_token = 0;  ///< 0 = no promise
  std::string promise_leader;
  /// What was left of the promise when the registration was sent: a reader
  /// counts it down from the put by the least time it knows has passed.
  milliseconds promise_left{0};

  friend bool operator==(const registration_failsafe&, const registration_failsafe&) = default;
};

/// What a registration key holds.
struct registration {
  int priority = 0;
  /// How long its store had been registered without a gap at the put.
  milliseconds live{0};
  /// Every registration at or below this revision was at least two ttls old
  /// when this one was put, by its store's clock (0 = it could not tell).
  std::int64_t lapsed_below = 0;
  /// A cool-down's length, from this value's put (0 = none).
  milliseconds cooling{0};
  /// With a cool-down: the revision of the registration it marks (0 = none).
  std::int64_t marks = 0;
  /// Its candidate card ("" = none).
  std::string card{};
  /// With lease.failsafe peers: its peer port and promise.
  std::optional<registration_failsafe> failsafe{};
};
/// "<priority> <live_ms> <lapsed_below>", and " <cooling_ms> <marks>" with
/// a cool-down, then "\n<card>" with a card (a version before cards reads
/// such a value as none of its form, and lists no such candidate), then,
/// with lease.failsafe peers, a third line "failsafe <address> <promise
/// token> <promise leader> <promise ms left>" ("-" for an empty address or
/// leader; the card line then always written, "" for none).
std::string registration_value(const registration& r);
/// nullopt for a value not in that form (put by hand, or by another
/// version). A version before cool-downs writes (and reads) the first three
/// fields alone.
std::optional<registration> parse_registration(std::string_view value);

/// The revisions this store's answers carried, and when they arrived, for
/// `span` back (two ttls): enough to say which revisions are older than
/// that. Entries closer than span/16 are merged (the newer kept), so it
/// holds about 20 whatever the rate of answers; merging only ever makes a
/// registration look younger.
class revision_clock {
 public:
  explicit revision_clock(milliseconds span);
  /// An answer with `revision` arrived at `at`. A revision below one seen
  /// already is ignored (the store clears the clock when the data went
  /// back).
  void observe(std::int64_t revision, time_point at);
  /// The highest revision of an answer that arrived at or before `t`; 0 =
  /// none.
  std::int64_t seen_by(time_point t) const;
  /// When the first answer at or above `revision` that is still held
  /// arrived; nullopt = none.
  std::optional<time_point> first_at_or_above(std::int64_t revision) const;
  /// Forgets everything: etcd's data went back, or the cluster changed.
  void clear();
  std::size_t size() const { return seen_.size(); }

 private:
  struct entry {
    time_point at;
    std::int64_t revision = 0;
  };
  milliseconds span_;
  std::deque<entry> seen_;
};

/// Counts a store's registrations without a gap (one lapses `lifetime`, two
/// ttls, after it was sent), and says which calls put one.
///
/// A call puts the registration only when it is due: none yet (a new
/// process, so a restart starts a new run), the last was sent a refresh
/// (lifetime / 4, half a ttl) ago or more, or a read found it gone or
/// written by another (lost). Otherwise the call's txn is its reads alone,
/// which etcd answers without a raft proposal. A live candidate calls at
/// least every ttl and an eighth or so (a standby: just after the holder's
/// lease could end, plus its stagger; a leader: every renew interval), so
/// its registration is at most about 1.6 ttls old when the next put goes
/// out, and no reader ever finds it lapsed (two ttls).
class registration_run {
 public:
  explicit registration_run(milliseconds lifetime) : lifetime_(lifetime) {}
  /// How long the store has been registered without a gap, for a
  /// registration sent at `now` (0 for the first, or after a gap).
  milliseconds live_at(time_point now) const;
  /// Whether a call sent at `now` puts the registration.
  bool due(time_point now) const;
  /// A registration sent at `sent` was put, at `revision` (0 = unknown).
  void put(time_point sent, std::int64_t revision = 0);
  /// What an answer at `answer_revision` found at the registration's key
  /// (nullopt: nothing, or a registration the read left out as lapsed).
  /// Anything but the last put, in an answer that comes after that put,
  /// makes the next call put.
  void found(const std::optional<key_value>& kv, std::int64_t answer_revision);
  /// The next call puts, whatever the time (etcd's data went back).
  void lost() { lost_ = true; }
  /// How often a live store puts at most: lifetime / 4.
  milliseconds refresh() const { return lifetime_ / 4; }

  /// The last put, while it is known to stand at `now`: its revision and how
  /// long the store had been registered at it. nullopt: none yet, its
  /// revision unknown, lapsed, or found gone or overwritten (lost).
  struct standing {
    std::int64_t revision = 0;
    milliseconds live{0};
  };
  std::optional<standing> standing_at(time_point now) const;

 private:
  milliseconds lifetime_;
  std::optional<time_point> since_;
  std::optional<time_point> last_;
  std::int64_t last_revision_ = 0;
  bool lost_ = false;
};

/// A cool-down's put (lease_store::register_cooldown): `value` goes to the
/// store's registration key only if its mod revision is still `over`.
struct cooling_put {
  std::string value;
  std::int64_t over = 0;
};
/// The put that marks `run`'s standing registration as cooling down for
/// `cooldown`, with the store's `priority` and `lapsed_below` (as a
/// registration's) and its `card`; nullopt when there is none standing to
/// mark, or no cool-down.
std::optional<cooling_put> cooling_mark(
    const registration_run& run, time_point now, int priority, std::int64_t lapsed_below,
    milliseconds cooldown, const std::string& card = {},
    const std::optional<registration_failsafe>& failsafe = std::nullopt);

/// A live registration's promise (F9), as a failsafe hold names it.
struct registered_promise {
  std::string node;
  std::string address;
  std::uint64_t token = 0;
  std::string leader;
};

/// The registrations read under `prefix` (<dir>candidates/), judged.
struct judged_candidates {
  std::vector<candidate_info> live;
  /// The live registrations' promises that may still run: counted down
  /// from their put by the least time the reader knows has passed, so a
  /// promise is never taken for over before it is.
  std::vector<registered_promise> promises;
  /// Lapsed registrations, to delete only if unchanged (by mod_revision).
  std::vector<key_value> lapsed;
};
/// `now`: when the read's answer arrived (already observed by `clock`);
/// `lifetime`: two ttls. A value not in the registration's form is neither
/// listed nor deleted.
judged_candidates judge_candidates(const std::vector<key_value>& kvs, std::string_view prefix,
                                   const revision_clock& clock, time_point now,
                                   milliseconds lifetime);

/// How many of `live` outrank a store of node `self` and `priority`: a
/// strictly higher priority, neither `self` nor `holder` (the candidate the
/// election would replace).
int count_outranking(const std::vector<candidate_info>& live, std::string_view self,
                     std::string_view holder, int priority);

}  // namespace baton::etcd_detail
