// Health as two signals: liveness (a wedged leader only; the store plays no
// part, so a store outage restarts nothing) and readiness (live, and the
// store answered within one ttl).
#include "baton/health.hpp"

#include <gtest/gtest.h>

#include <functional>

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

constexpr milliseconds hook_timeout = 30s;
const time_point t0 = time_point{} + 100s;

election_machine standby() {
  election_machine m(timing(), 1);
  m.step(events::start{}, t0);
  m.step(events::busy{t0, "b", 5s, 3, true}, t0);
  return m;
}

election_machine leader() {
  election_machine m(timing(), 1);
  m.step(events::start{}, t0);
  m.step(events::acquired{t0, 8}, t0);
  return m;
}

// A leader whose store stopped answering: at the renew deadline (t0 + 6s)
// the machine stops the app, to be killed at the lease's end.
election_machine stopping_leader() {
  auto m = leader();
  m.step(events::timer{timer_id::deadline}, t0 + 6s);
  return m;
}

// The kill deadline of stopping_leader(): valid_until = t0 + ttl - drift
// (9 s × 0.01 + 2 ms).
const time_point kill_at = t0 + 9s - 92ms;

struct liveness_case {
  const char* name;
  std::function<election_machine()> machine;
  time_point at;
  bool live;
  std::string reason;
};

TEST(health, liveness_fails_only_for_a_wedged_leader) {
  const std::vector<liveness_case> cases{
      {"a standby, however long", standby, t0 + 1h, true, "ok"},
      {"a leader within its renew deadline", leader, t0 + 6s, true, "ok"},
      {"a leader past its renew deadline: its loop did not act", leader, t0 + 7s, false,
       "leader has not renewed for 7000ms (renew deadline 6000ms)"},
      {"a leader stopping its app", stopping_leader, t0 + 7s, true, "ok"},
      {"a stop up to hooks.timeout + 5s past the kill deadline", stopping_leader, kill_at + 35s,
       true, "ok"},
      {"a stop beyond that: the app cannot be stopped", stopping_leader, kill_at + 35s + 1ms, false,
       "leader cannot stop its app: still stopping 35001ms after its kill deadline (limit "
       "35000ms: the longer of hooks.timeout and the ttl, + 5000ms)"},
      {"a leader whose app stopped, releasing",
       [] {
         auto m = stopping_leader();
         m.step(events::app_stopped{}, t0 + 7s);
         return m;
       },
       t0 + 1h, true, "ok"},
  };
  for (const auto& c : cases) {
    const auto verdict = assess_liveness(c.machine(), c.at, hook_timeout);
    EXPECT_EQ(verdict.healthy, c.live) << c.name;
    EXPECT_EQ(verdict.reason, c.reason) << c.name;
  }
}

TEST(health, the_limits_follow_ttl_and_hooks_timeout) {
  EXPECT_EQ(store_failure_grace(9s), 9s);
  EXPECT_EQ(store_failure_grace(2s), 2s);
  EXPECT_EQ(stop_overrun_limit(30s, 9s), 35s);
  // A socket app's acknowledgement may be waited for until the lease deadline
  // it was last given, up to one validity after the kill deadline.
  EXPECT_EQ(stop_overrun_limit(1s, 60s), 65s);
}

struct readiness_case {
  const char* name;
  std::function<election_machine()> machine;
  store_health store;
  time_point at;
  bool ready;
  std::string reason;
};

TEST(health, readiness_needs_a_live_daemon_and_a_store_that_answered_recently) {
  const std::string refused = "connect 127.0.0.1:6390: Connection refused";
  const std::vector<readiness_case> cases{
      {"nothing asked yet", standby, {}, t0, false, "the store has not answered yet"},
      {"the first calls failed",
       standby,
       {false, t0, refused},
       t0 + 1s,
       false,
       "the store has not answered yet: " + refused},
      {"answered, and the last call too",
       standby,
       {true, std::nullopt, refused},
       t0 + 1h,
       true,
       "ok"},
      {"failing for one ttl", standby, {true, t0, refused}, t0 + 9s, true, "ok"},
      {"failing for longer than one ttl",
       standby,
       {true, t0, refused},
       t0 + 9100ms,
       false,
       "the store has not answered for 9.1s: " + refused},
      {"failing for an hour, with no error text",
       standby,
       {true, t0, ""},
       t0 + 1h,
       false,
       "the store has not answered for 3600.0s"},
      {"a wedged leader is not ready either",
       leader,
       {true, std::nullopt, ""},
       t0 + 7s,
       false,
       "leader has not renewed for 7000ms (renew deadline 6000ms)"},
  };
  for (const auto& c : cases) {
    const auto machine = c.machine();
    const auto verdict = assess_readiness(machine, c.at, hook_timeout, c.store);
    EXPECT_EQ(verdict.healthy, c.ready) << c.name;
    EXPECT_EQ(verdict.reason, c.reason) << c.name;
    // The store never decides liveness.
    EXPECT_EQ(assess_liveness(machine, c.at, hook_timeout).healthy,
              c.ready || c.reason.starts_with("the store"))
        << c.name;
  }
}

TEST(health, service_status_lines) {
  EXPECT_EQ(service_status_line(standby(), "a"), "standby (idle), leader b token 3");
  EXPECT_EQ(service_status_line(leader(), "a"), "leader (working), token 8");
  EXPECT_EQ(service_status_line(stopping_leader(), "a"), "stepping down (pausing)");
}

}  // namespace
}  // namespace baton
