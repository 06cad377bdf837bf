// When a standby may end another holder's etcd lease itself: a proof, from
// etcd's own time-to-live answers alone, that the lease has expired. Pure: it
// is fed the answers and says when to ask next, or that the lease is proven
// expired, or that nothing can be proven.
//
// Why: etcd 3.4 revokes an expired lease on its own expiry check, every
// 500 ms, and a standby waits for the lease key's delete. A lease etcd
// reports expired is one whose keepalive can no longer succeed (etcd's
// Renew of an expired lease waits for its revoke and fails), so revoking it
// removes nothing a live holder could still renew; the standby does, and
// takes the key milliseconds after the expiry rather than up to 500 ms.
//
// What etcd says: LeaseTimeToLive's TTL is the lease's time left in seconds,
// truncated toward zero, so 0 means anything in (-1 s, 1 s) and is no proof
// by itself. The proof is a chain of answers of 0:
// - the first, answered at a1, says less than 1 s was left: without a
//   renewal the lease ended before a1 + 1 s (+ the drift of our clock
//   against etcd's over that second);
// - each answer is answered within (granted - 1) s (- its drift) of the
//   previous question's send: a keepalive or a raft leader's promotion in
//   between would have left more than 1 s, and that answer would say >= 1;
// - the last is sent at or after a1 + 1 s + drift.
// Then the lease ended before that last answer, and no renewal came since.
//
// Catching the first 0 soon after the lease's last second began is what
// makes it fast: after an answer of n >= 2 that second begins no sooner than
// (n - 1) s after the question, so the next question goes then; after an
// answer of 1 it is under way within the second, and questions follow every
// scan_interval until one says 0.
//
// Limits, each a give-up (the standby then waits for etcd, as before):
// - only answers in the raft term stamped in the holder's value count: a
//   lease that ends in a later raft term may have been revoked early by a
//   thawed former raft leader (etcd-io/etcd#15247), and the standby waits a
//   ttl more for it whoever revokes it; answers of two raft leaders are not
//   chained;
// - a lease granted for less than 3 s: a live holder renewing every third
//   of its ttl shows 1 all the time, so the last second cannot be told from
//   any other without asking every few milliseconds throughout the term.
#pragma once

#include <cstdint>
#include <optional>

#include "baton/time.hpp"

namespace baton::etcd_detail {

/// One time-to-live answer about a lease, with when its question was sent
/// and when the answer came, on this host's monotonic clock.
struct ttl_reading {
  std::int64_t ttl_seconds = -1;     ///< etcd's TTL (-1: the lease is gone)
  std::int64_t granted_seconds = 0;  ///< the TTL it was granted with
  std::int64_t raft_term = 0;        ///< the answer's raft term (0 = unknown)
  time_point sent;
  time_point answered;
};

class expiry_proof {
 public:
  /// Between questions while the lease is in its last second and no answer
  /// said 0 yet: how late the first 0 may come after the second began.
  static constexpr milliseconds scan_interval{5};
  /// The shortest granted lease a proof is tried for (see the file's top).
  static constexpr std::int64_t shortest_granted_seconds = 3;

  /// `stamped_term`: the raft term in the holder's value (0 = none: nothing
  /// is proven). `drift_factor`: the fraction of an interval our clock and
  /// etcd's may differ by (lease.drift_factor's default; lease_drift.hpp).
  expiry_proof(std::int64_t stamped_term, double drift_factor);

  enum class verdict {
    ask_at,   ///< ask again at `at`
    expired,  ///< proven: the lease ended before the last answer
    give_up,  ///< nothing can be proven (gone, another raft term, too short)
  };
  struct step {
    verdict what = verdict::give_up;
    time_point at{};
  };

  /// The next step after `r`. An answer to a question sent before the last
  /// one fed is stale: the step already given stands. A give-up is final.
  step next(const ttl_reading& r);

 private:
  step ask(time_point at) { return last_step_ = {verdict::ask_at, at}; }
  step stop() { return last_step_ = {verdict::give_up, {}}; }

  std::int64_t stamped_term_;
  double drift_factor_;
  step last_step_{verdict::ask_at, {}};
  bool settled_ = false;  // given up, or proven: the last step stands
  std::optional<ttl_reading> first_zero_;
  std::optional<ttl_reading> previous_;
};

}  // namespace baton::etcd_detail
