// What every side of peer-confirmed leadership (lease.failsafe: peers)
// shares: a term as the rules name it, and the lease timing they count
// with. The rules themselves and their safety argument are in
// docs/safety.md, "Peer-confirmed leadership"; the leader's side is
// failsafe_leader.hpp, a peer's failsafe_peer.hpp, a would-be taker's
// failsafe_taker.hpp. Pure: no I/O, no clock reads; times are passed in.
#pragma once

#include <cstdint>
#include <string>

#include "baton/time.hpp"

namespace baton::failsafe {

/// A term: the node that leads it and its fencing token.
struct term_id {
  std::string leader;
  std::uint64_t token = 0;

  friend bool operator==(const term_id&, const term_id&) = default;
};

/// The lease timing a node runs with: its ttl and drift allowance
/// (lease_drift(ttl, drift_factor), include/baton/lease_drift.hpp). A
/// promise lasts one ttl; a counted round gives `sent + ttl - drift`.
struct timing {
  milliseconds ttl{0};
  milliseconds drift{0};
};

/// A time point as the peer messages carry it: whole milliseconds of the
/// sender's monotonic clock. Only its sender compares it with its own times.
inline std::uint64_t wire_ms(time_point t) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count());
}

}  // namespace baton::failsafe
