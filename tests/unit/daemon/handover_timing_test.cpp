// The moments the debug-level timing lines count from
// (src/daemon/handover_timing.hpp), with made-up times: which line each step
// of a handover gives, and that the first renewal is said once per term.
#include "daemon/handover_timing.hpp"

#include <gtest/gtest.h>

namespace baton {
namespace {

using namespace std::chrono_literals;

constexpr time_point handover_began{50s};

TEST(handover_timing, says_nothing_before_a_stop_or_a_won_acquire) {
  handover_timing t;
  EXPECT_EQ(t.acquire_sent(), time_point{});
  EXPECT_EQ(t.release_answered(handover_began, handover_began + 1ms), std::nullopt);
  EXPECT_EQ(t.app_start(handover_began, handover_began + 1ms), std::nullopt);
  EXPECT_EQ(t.renewal_answered(handover_began + 200ms), std::nullopt);
}

TEST(handover_timing, the_old_leaders_release_counts_from_its_app_reported_stopped) {
  handover_timing t;
  t.app_stopped(handover_began);
  EXPECT_EQ(t.release_answered(handover_began + 30us, handover_began + 800us),
            "handover timing: release sent 30us and answered 800us after the app was reported "
            "stopped (at monotonic 50000000000 ns)");
}

TEST(handover_timing,
     the_new_leaders_steps_count_from_its_acquire_sent_and_its_first_renewal_once) {
  handover_timing t;
  t.acquire_won(handover_began, handover_began + 700us);
  EXPECT_EQ(t.acquire_sent(), handover_began);
  EXPECT_EQ(t.app_start(handover_began + 750us, handover_began + 1200us),
            "takeover timing: acquire answered 700us, app start requested 750us, start() "
            "returned 1200us after the acquire was sent (at monotonic 50000000000 ns)");
  EXPECT_EQ(t.renewal_answered(handover_began + 200ms),
            "takeover timing: first renewal answered 200000us after the acquire was sent");
  EXPECT_EQ(t.renewal_answered(handover_began + 400ms), std::nullopt);
  // The next term's first renewal is said again.
  t.acquire_won(handover_began + 10s, handover_began + 10s + 500us);
  EXPECT_EQ(t.renewal_answered(handover_began + 10s + 200ms),
            "takeover timing: first renewal answered 200000us after the acquire was sent");
}

}  // namespace
}  // namespace baton
