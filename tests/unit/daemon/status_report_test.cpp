// The status object as a pure function of the machine and the store's status:
// the store part, the Redis-era fields kept for the redis kind only, and the
// leader fields from the machine's one definition of leading.
#include "daemon/status_report.hpp"

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

store_status redis_status() {
  store_status s;
  s.kind = "redis";
  s.label = "Redis";
  s.endpoint = "redis://127.0.0.1:6379";
  s.link = link_state::connected;
  s.wakeups = wakeup_state::subscribed;
  return s;
}

TEST(status_report, a_leader_reports_its_lease_and_the_store) {
  election_machine m(timing(), 1);
  const time_point t0 = time_point{} + 1h;
  m.step(events::start{}, t0);
  m.step(events::acquired{t0, 12}, t0);
  status_inputs in{"a", "jobs", &m, redis_status(), 1ms, {}, std::nullopt, 0, false};
  const auto s = status_report(in, t0 + 1s);
  EXPECT_EQ(s["is_leader"], true);
  EXPECT_EQ(s["protocol"], 1);
  EXPECT_EQ(s["leader"], "a");
  EXPECT_EQ(s["token"], 12);
  EXPECT_EQ(s["redis"], "connected");
  EXPECT_EQ(s["store"]["kind"], "redis");
  EXPECT_EQ(s["store"]["link"], "connected");
  EXPECT_EQ(s["store"]["wakeups"], "subscribed");
  EXPECT_EQ(s["store"]["endpoint"], "redis://127.0.0.1:6379");
  EXPECT_FALSE(s["store"].contains("last_error"));
  EXPECT_GT(s["lease_remaining_ms"].get<long long>(), 0);
  EXPECT_EQ(s["last_renew_latency_ms"], 1);
  EXPECT_EQ(s["leading_for_ms"], 1000);
  EXPECT_EQ(s["last_renewal_ms_ago"], 1000);
}

TEST(status_report, the_term_start_survives_renewals_and_both_pids_are_named) {
  election_machine m(timing(), 1);
  const time_point t0 = time_point{} + 1h;
  m.step(events::start{}, t0);
  m.step(events::acquired{t0, 12}, t0);
  m.step(events::timer{timer_id::wake}, t0 + 3s);
  m.step(events::renewed{t0 + 3s}, t0 + 3s);
  status_inputs in{"a", "jobs", &m, redis_status(), 1ms, {}, std::nullopt, 0, false};
  in.keeper_pid = 100;
  in.command_pid = 101;
  const auto s = status_report(in, t0 + 4s);
  EXPECT_EQ(s["since_ms"], 1000) << "time in the state restarts with each renewal";
  EXPECT_EQ(s["leading_for_ms"], 4000);
  EXPECT_EQ(s["last_renewal_ms_ago"], 1000);
  EXPECT_EQ(s["keeper_pid"], 100);
  EXPECT_EQ(s["child_pid"], 100) << "the keeper, as before: the process group to signal";
  EXPECT_EQ(s["command_pid"], 101);
}

TEST(status_report, a_failing_store_makes_the_node_not_ready_but_never_unhealthy) {
  election_machine m(timing(), 1);
  const time_point t0 = time_point{} + 1h;
  status_inputs in{"a", "jobs", &m, redis_status(), std::nullopt, {}, std::nullopt, 0, false};
  in.store_answers = {true, t0, "connect 127.0.0.1:6390: Connection refused"};
  const auto early = status_report(in, t0 + 9s);
  EXPECT_EQ(early["ready"], true);
  EXPECT_EQ(early["readiness"], "ok");
  for (const auto after : {10s, 3600s}) {
    const auto s = status_report(in, t0 + after);
    EXPECT_EQ(s["healthy"], true) << "liveness ignores the store";
    EXPECT_EQ(s["health"], "ok");
    EXPECT_EQ(s["ready"], false);
    EXPECT_EQ(s["readiness"], "the store has not answered for " + std::to_string(after.count()) +
                                  ".0s: connect 127.0.0.1:6390: Connection refused");
  }
}

TEST(status_report, a_store_error_is_shown_with_its_kind_and_age) {
  election_machine m(timing(), 1);
  const time_point t0 = time_point{} + 1h;
  auto store = redis_status();
  store.link = link_state::disconnected;
  store.last_error = "AUTH: WRONGPASS invalid username-password pair";
  store.last_error_kind = "auth";
  store.last_error_at = t0;
  store.last_reset = "token counter missing";
  status_inputs in{"a", "jobs", &m, store, std::nullopt, {}, std::nullopt, 0, false};
  const auto s = status_report(in, t0 + 2500ms);
  EXPECT_EQ(s["store"]["last_error"], store.last_error);
  EXPECT_EQ(s["store"]["last_error_kind"], "auth");
  EXPECT_EQ(s["store"]["last_error_ago_ms"], 2500);
  EXPECT_EQ(s["store"]["last_reset"], "token counter missing");
  EXPECT_EQ(s["redis_reset"], "token counter missing");
  EXPECT_EQ(s["redis"], "disconnected");
  EXPECT_EQ(s["is_leader"], false);
  EXPECT_TRUE(s["leader"].is_null());
}

TEST(status_report, other_kinds_get_no_redis_era_fields_and_list_members) {
  election_machine m(timing(), 1);
  auto store = redis_status();
  store.kind = "quorum";
  store.last_reset = "x";
  store.members = {{"redis://h1:6379", link_state::connected, true, ""},
                   {"redis://h2:6379", link_state::disconnected, false, "connect h2: refused"}};
  status_inputs in{"a", "jobs", &m, store, std::nullopt, {}, std::nullopt, 0, false};
  const auto s = status_report(in, time_point{} + 1h);
  EXPECT_FALSE(s.contains("redis"));
  EXPECT_FALSE(s.contains("redis_reset"));
  ASSERT_EQ(s["store"]["members"].size(), 2U);
  EXPECT_EQ(s["store"]["members"][0]["holds_lease"], true);
  EXPECT_EQ(s["store"]["members"][1]["link"], "disconnected");
  EXPECT_EQ(s["store"]["members"][1]["last_error"], "connect h2: refused");
  EXPECT_FALSE(s["store"]["members"][0].contains("last_error"));
}

// A standby the store holds back says so, for how long and why, instead of
// looking like a node that simply lost the race.
TEST(status_report, a_held_back_standby_says_until_when_and_why) {
  election_machine m(timing(), 1);
  const time_point t0 = time_point{} + 1h;
  m.step(events::start{}, t0);
  events::busy held{t0, "", 4000ms, 3, true, true};
  held.held_back_why = "the lease key vanished before its expiry";
  m.step(held, t0);
  status_inputs in{"a", "jobs", &m, redis_status(), std::nullopt, {}, std::nullopt, 0, false};
  const auto s = status_report(in, t0 + 1s);
  EXPECT_EQ(s["held_back_remaining_ms"], 3000);
  EXPECT_EQ(s["held_back_why"], "the lease key vanished before its expiry");
  EXPECT_EQ(s["is_leader"], false);
  const auto later = status_report(in, t0 + 5s);
  EXPECT_FALSE(later.contains("held_back_remaining_ms")) << later.dump();
}

// Sentinels and a Cluster's seed nodes locate the master; they hold no copy
// of the lease, so they carry no holds_lease (false on the leader read as a
// lost lease).
TEST(status_report, members_that_only_locate_the_master_carry_no_holds_lease) {
  election_machine m(timing(), 1);
  auto store = redis_status();
  store.kind = "cluster";
  store_member_status seed{"redis://h1:6379", link_state::connected, false, ""};
  seed.role = "seed";
  store_member_status sentinel = seed;
  sentinel.role = "sentinel";
  store.members = {seed, sentinel};
  status_inputs in{"a", "jobs", &m, store, std::nullopt, {}, std::nullopt, 0, false};
  const auto s = status_report(in, time_point{} + 1h);
  ASSERT_EQ(s["store"]["members"].size(), 2U);
  for (const auto& member : s["store"]["members"]) {
    EXPECT_FALSE(member.contains("holds_lease")) << member.dump();
    EXPECT_EQ(member["link"], "connected");
  }
}

}  // namespace
}  // namespace baton
