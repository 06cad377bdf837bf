// How far apart the machine spreads attempts: the staggers after an expiry
// or a release, and the ceiling of the back-off after an app failure.
// Private to src/machine/.
#pragma once

#include <chrono>

#include "baton/time.hpp"

namespace baton::pacing {

// Largest stagger added after a holder's expiry, so standbys that wake for
// the same expiry do not all hit the store at the same instant. Kept small:
// it adds directly to the takeover lag after a crash (the first of several
// standbys wins, so on average a fraction of it).
inline constexpr std::chrono::microseconds expiry_stagger{300};
// With many standbys the window grows by this much per candidate the store
// sees: about what one attempt costs the store and a 2-core host, so the
// herd's attempts follow each other instead of queueing together, and the
// earliest (the likely winner) still goes within about this long.
inline constexpr std::chrono::microseconds stagger_per_contender{50};
// ... but never wider than this, nor than ttl / 20.
inline constexpr std::chrono::microseconds max_herd_stagger{100000};
// A large election's back runners (acquire_answer::back_runner) spread
// their attempts ten times wider, up to ttl / 4: they matter only when every
// front runner is gone, and a thousand of them waking within 50 ms, once a
// term, saturate a small host's CPUs and the Redis other clients share.
inline constexpr std::chrono::microseconds back_runner_stagger_per_contender{500};
// Ceiling of the back-off after the app failed to start or exited.
inline constexpr milliseconds max_failure_backoff{30000};

}  // namespace baton::pacing
