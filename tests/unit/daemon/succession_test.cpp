// Succession's decisions (src/daemon/succession.hpp) as tables: when a
// leader hands over to a candidate of a higher priority, and what a
// switchover is vetted with.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "daemon/succession.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

constexpr time_point decided_at{1000s};

succession_settings leader_settings() {
  succession_settings s;
  s.self = "node-a";
  s.priority = 0;
  s.ttl = 6s;
  s.renew_interval = 2s;
  s.preempt_delay = 30s;
  s.resign_cooldown = 10s;
  return s;
}

candidate_snapshot listed_at_decision(std::vector<candidate_info> list) {
  candidate_snapshot known;
  known.update(std::move(list), decided_at);
  return known;
}

TEST(preemption_due, only_a_settled_leader_not_handing_over_yields_to_a_higher_priority) {
  struct row {
    const char* name;
    bool can_resign = true;
    bool handing_over = false;
    milliseconds led_for = 1h;
    int own_priority = 0;
    milliseconds cooldown = 10s;
    std::vector<candidate_info> list = {{"node-a", 0, 50s}, {"node-b", 5, 40s}};
    std::optional<std::string> to = std::nullopt;
  };
  const std::vector<row> rows = {
      {.name = "a higher priority live for the delay", .to = "node-b"},
      {.name = "not the leader", .can_resign = false},
      {.name = "already handing over", .handing_over = true},
      {.name = "led for less than the delay", .led_for = 29s},
      {.name = "led for the delay", .led_for = 30s, .to = "node-b"},
      {.name = "a cool-down longer than the delay settles longer", .led_for = 30s,
       .cooldown = 45s},
      {.name = "past that cool-down", .led_for = 45s, .cooldown = 45s, .to = "node-b"},
      {.name = "an equal priority never", .own_priority = 5},
      {.name = "a candidate not live long enough",
       .list = {{"node-a", 0, 50s}, {"node-b", 5, 29s}}},
  };
  for (const auto& r : rows) {
    auto s = leader_settings();
    s.priority = r.own_priority;
    s.resign_cooldown = r.cooldown;
    const auto target =
        preemption_due(r.can_resign, r.handing_over, decided_at - r.led_for, listed_at_decision(r.list), s, decided_at);
    EXPECT_EQ(target ? std::optional<std::string>(target->node) : std::nullopt, r.to) << r.name;
  }
}

TEST(switchover_question_for, bounds_the_list_age_and_the_attempt_gap_by_the_lease_timing) {
  struct row {
    milliseconds ttl, renew_interval;
    bool force;
    milliseconds list_max_age, attempt_gap;
  };
  const std::vector<row> rows = {
      {6s, 2s, false, 4600ms, 9s},
      {10000ms, 3333ms, true, 7666ms, 10000ms + 1666ms + 3333ms},
      {600ms, 200ms, false, 460ms, 900ms},
  };
  for (const auto& r : rows) {
    auto s = leader_settings();
    s.ttl = r.ttl;
    s.renew_interval = r.renew_interval;
    const auto q = switchover_question_for({"node-b", 5s, r.force}, s, decided_at);
    EXPECT_EQ(q.to, "node-b");
    EXPECT_EQ(q.self, "node-a");
    EXPECT_EQ(q.own_priority, 0);
    EXPECT_EQ(q.now, decided_at);
    EXPECT_EQ(q.list_max_age, r.list_max_age) << r.ttl.count();
    EXPECT_EQ(q.attempt_gap, r.attempt_gap) << r.ttl.count();
    EXPECT_EQ(q.preempt_delay, 30s);
    EXPECT_EQ(q.force, r.force);
  }
}

TEST(succession_settings_of, reads_the_node_its_priority_and_the_lease_timing) {
  config c;
  c.node_id = "node-z";
  c.priority = 7;
  c.lease.ttl = 9s;
  c.lease.renew_interval = 3s;
  c.lease.preempt_delay = 20s;
  c.lease.resign_cooldown = 12s;
  const auto s = succession_settings_of(c);
  EXPECT_EQ(s.self, "node-z");
  EXPECT_EQ(s.priority, 7);
  EXPECT_EQ(s.ttl, 9s);
  EXPECT_EQ(s.renew_interval, 3s);
  EXPECT_EQ(s.preempt_delay, 20s);
  EXPECT_EQ(s.resign_cooldown, 12s);
}

}  // namespace
}  // namespace baton
