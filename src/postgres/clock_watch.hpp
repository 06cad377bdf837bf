// A candidate's watch on the database's wall clock, which judges every
// lease of the postgres store (lease_sql.hpp). A step of that clock moves
// every `expires_at` at once: forward by more than what is left of a lease,
// it makes the row look lapsed before the leader's own count (on its
// monotonic clock) runs out. This watch tells a step from the candidate's
// own monotonic clock, with the database times its acquires read, and says
// when a lapsed row may be taken. Pure: the store feeds it times.
//
// - Each acquire reads the database's time D (before the reply is sent) and
//   is sent at local time S: between two acquires, the database's clock can
//   have run at most (S2' - S1) x (1 + drift) plus a slack, S2' the second's
//   receipt (the second read D2 before it). More is a step forward.
// - An acquire passes the latest database time the candidate can expect
//   (expected_us): D1 + (S2 - S1 + the last round trip) x (1 + drift) +
//   slack. The statement takes a row that lapsed unreleased only when its
//   clock is not beyond it (a never-held or released row, and a row that
//   is this node's own, are taken as before).
// - A candidate takes a lapsed row only once it has watched the clock
//   without a step for one ttl (0 is passed before that): the step it
//   cannot see, one before its first look, ended a lease renewed before
//   that look, whose leader stops at most a ttl after it. A look that comes
//   more than two ttls after the last begins the watch anew (the drift
//   allowance grows with the gap), and so does a step.
#pragma once

#include <cstdint>
#include <optional>

#include "baton/time.hpp"

namespace baton::postgres_detail {

class clock_watch {
 public:
  /// `ttl` > 0; `drift_factor` the lease's (lease.drift_factor).
  clock_watch(milliseconds ttl, double drift_factor);

  /// What an acquire sent at `sent` passes: the latest database time, in
  /// microseconds since 1970, the candidate can expect when the statement
  /// reads it; 0 when it may not take a row that lapsed unreleased (it has
  /// not watched the clock for a ttl).
  std::int64_t expected_us(time_point sent) const;

  /// The database time `db_us` an acquire sent at `sent` read, answered at
  /// `received`. Returns how far ahead of the most the clock could have run
  /// it was (a step forward), or nullopt. A step, a first look and a look
  /// after a long gap begin the watch anew.
  std::optional<milliseconds> observe(std::int64_t db_us, time_point sent, time_point received);

  /// How long until a lapsed row may be taken (0: now), counted from `now`.
  milliseconds wait_left(time_point now) const;

  /// Slack beyond the drift, for timer and clock-read granularity.
  static constexpr milliseconds slack{2};

 private:
  bool current(time_point sent) const;

  milliseconds ttl_;
  double drift_factor_;
  // The last look: the database time it read, when it was sent, its round trip.
  std::optional<std::int64_t> db_us_;
  time_point sent_{};
  std::chrono::microseconds round_trip_{0};
  // When the watch began (a first look, a step, a look after a long gap).
  time_point since_{};
};

}  // namespace baton::postgres_detail
