// The one definition of the margin a lease loses to clock-rate drift between
// hosts. The machine's validity (ttl - drift), validation's timing rules,
// check-config's "capped at" note and Redlock's validity all use it, so they
// cannot round differently. Pure and header-only: the machine links nothing.
#pragma once

#include <cmath>

#include "baton/time.hpp"

namespace baton {

/// The drift factor when none is configured (lease.drift_factor).
inline constexpr double default_drift_factor = 0.01;

/// ttl * drift_factor rounded up to whole milliseconds, plus 2 ms (timer
/// and scheduling slack). The rounding allows for binary fractions, so that
/// 10000 ms * 0.07 is 700 ms, not 701. A factor that is not a positive finite
/// number costs the 2 ms alone (validation refuses one outside [0, 0.5)).
inline milliseconds lease_drift(milliseconds ttl, double drift_factor) {
  constexpr milliseconds slack{2};
  const double scaled = static_cast<double>(ttl.count()) * drift_factor;
  if (!(scaled > 0.0) || !std::isfinite(scaled)) return slack;
  return milliseconds{static_cast<milliseconds::rep>(std::ceil(scaled - 1e-6))} + slack;
}

}  // namespace baton
