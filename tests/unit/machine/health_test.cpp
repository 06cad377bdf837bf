// Health: a leader past its renew deadline without a renewal is wedged.
#include "baton/health.hpp"

#include <gtest/gtest.h>

namespace baton {
namespace {

using namespace std::chrono_literals;

lease_timing timing() {
  lease_timing t;
  t.ttl = 9s;
  t.renew_interval = 3s;
  t.renew_deadline = 6s;
  t.retry_interval = 1s;
  return t;
}

TEST(health, a_standby_is_healthy) {
  election_machine m(timing(), 1);
  auto t0 = time_point{} + 100s;
  m.step(events::start{}, t0);
  m.step(events::busy{t0, "b", 5s, 3, true}, t0);
  EXPECT_TRUE(assess_health(m, t0 + 1h).healthy);
  EXPECT_EQ(service_status_line(m, "a"), "standby (idle), leader b token 3");
}

TEST(health, a_leader_past_its_renew_deadline_is_wedged) {
  election_machine m(timing(), 1);
  auto t0 = time_point{} + 100s;
  m.step(events::start{}, t0);
  m.step(events::acquired{t0, 8}, t0);
  EXPECT_TRUE(assess_health(m, t0 + 6s).healthy);
  auto late = assess_health(m, t0 + 7s);
  EXPECT_FALSE(late.healthy);
  EXPECT_EQ(late.reason, "leader has not renewed for 7000ms (renew deadline 6000ms)");
  EXPECT_EQ(service_status_line(m, "a"), "leader (working), token 8");
  // Once the machine acts on the deadline it no longer believes it leads.
  m.step(events::timer{timer_id::deadline}, t0 + 7s);
  EXPECT_TRUE(assess_health(m, t0 + 8s).healthy);
  EXPECT_EQ(service_status_line(m, "a"), "stepping down (pausing)");
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

using namespace std::chrono_literals;

TEST(store_health, a_store_failing_past_the_grace_makes_even_a_standby_unhealthy) {
  lease_timing t;
  t.ttl = 9s;
  t.renew_interval = 3s;
  t.renew_deadline = 6s;
  t.retry_interval = 1s;
  election_machine m(t, 1);
  const time_point t0 = time_point{} + 1h;
  EXPECT_EQ(store_failure_grace(9s), 30s);
  EXPECT_EQ(store_failure_grace(20s), 60s);
  store_health failing{t0, "AUTH: WRONGPASS invalid username-password pair"};
  EXPECT_TRUE(assess_health(m, t0 + 30s, failing).healthy);
  const auto verdict = assess_health(m, t0 + 31s, failing);
  EXPECT_FALSE(verdict.healthy);
  EXPECT_EQ(verdict.reason,
            "the store has not answered for 31s: AUTH: WRONGPASS invalid username-password pair");
  // A store that answers again (failing_since cleared) is healthy at once.
  EXPECT_TRUE(assess_health(m, t0 + 31s, store_health{}).healthy);
}

}  // namespace
}  // namespace baton
