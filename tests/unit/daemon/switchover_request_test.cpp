// The socket command `switchover`: what a request may say, the preemption the
// candidates call for, and the candidates the status shows
// (src/daemon/switchover.hpp). Whether the target may take the lease:
// switchover_vetting_test.cpp.
#include <gtest/gtest.h>

#include "daemon/switchover.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

constexpr milliseconds ttl{10s};

std::string refusal_of(const nlohmann::json& request) {
  try {
    parse_switchover_request(request, ttl, 10 * ttl);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return {};
}

candidate_snapshot listed(std::vector<candidate_info> list, time_point at) {
  candidate_snapshot s;
  s.list = std::move(list);
  s.at = at;
  return s;
}

TEST(switchover_request, names_a_node_and_takes_the_ttl_as_the_default_window) {
  auto r = parse_switchover_request({{"cmd", "switchover"}, {"to", "node-b"}}, ttl, 10 * ttl);
  EXPECT_EQ(r.to, "node-b");
  EXPECT_EQ(r.window, ttl);
  r = parse_switchover_request({{"to", "node-b"}, {"window_ms", 2500}}, ttl, 10 * ttl);
  EXPECT_EQ(r.window, 2500ms);
  r = parse_switchover_request({{"to", "node-b"}, {"window_ms", nullptr}}, ttl, 10 * ttl);
  EXPECT_EQ(r.window, ttl);
}

TEST(switchover_request, bad_fields_are_named) {
  EXPECT_NE(refusal_of({{"cmd", "switchover"}}).find("\"to\""), std::string::npos);
  EXPECT_NE(refusal_of({{"to", ""}}).find("\"to\""), std::string::npos);
  EXPECT_NE(refusal_of({{"to", 7}}).find("\"to\""), std::string::npos);
  EXPECT_NE(refusal_of({{"to", std::string(300, 'x')}}).find("256"), std::string::npos);
  EXPECT_NE(refusal_of({{"to", "b"}, {"window_ms", 0}}).find("window_ms"), std::string::npos);
  EXPECT_NE(refusal_of({{"to", "b"}, {"window_ms", -5}}).find("window_ms"), std::string::npos);
  EXPECT_NE(refusal_of({{"to", "b"}, {"window_ms", "1s"}}).find("window_ms"), std::string::npos);
  EXPECT_NE(refusal_of({{"to", "b"}, {"window_ms", 1.5}}).find("window_ms"), std::string::npos);
  EXPECT_NE(refusal_of({{"to", "b"}, {"window_ms", 100001}}).find("ten ttls"), std::string::npos);
  EXPECT_EQ(refusal_of({{"to", "b"}, {"window_ms", 100000}}), "");
  EXPECT_NE(refusal_of({{"to", "b"}, {"force", "yes"}}).find("\"force\" must be true or false"),
            std::string::npos);
  EXPECT_NE(refusal_of({{"to", "b"}, {"force", 1}}).find("\"force\""), std::string::npos);
}

TEST(switchover_request, force_is_false_unless_asked) {
  EXPECT_FALSE(parse_switchover_request({{"to", "b"}}, ttl, 10 * ttl).force);
  EXPECT_FALSE(parse_switchover_request({{"to", "b"}, {"force", nullptr}}, ttl, 10 * ttl).force);
  EXPECT_TRUE(parse_switchover_request({{"to", "b"}, {"force", true}}, ttl, 10 * ttl).force);
}

TEST(preemption_target, only_a_higher_priority_live_for_the_delay_preempts) {
  const time_point now{100s};
  auto known = listed({{"node-a", 0, 50s}, {"node-b", 5, 29s}, {"node-c", 0, 90s}}, now);
  EXPECT_FALSE(preemption_target(known, "node-a", 0, 30s, 1h, 30s, now)) << "node-b not live long enough";
  known = listed({{"node-a", 0, 50s}, {"node-b", 5, 30s}, {"node-c", 0, 90s}}, now);
  auto t = preemption_target(known, "node-a", 0, 30s, 1h, 30s, now);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->node, "node-b");
  EXPECT_FALSE(preemption_target(known, "node-a", 5, 30s, 1h, 30s, now)) << "equal priorities never";
  EXPECT_FALSE(preemption_target(known, "node-b", 5, 30s, 1h, 30s, now)) << "never itself";
}

TEST(preemption_target, a_leader_that_has_not_led_for_the_settle_time_keeps_leading) {
  const time_point now{100s};
  const auto known = listed({{"node-a", 0, 50s}, {"node-b", 5, 90s}}, now);
  EXPECT_FALSE(preemption_target(known, "node-a", 0, 30s, 29s, 30s, now))
      << "just after a switchover to it, or a crash takeover";
  EXPECT_TRUE(preemption_target(known, "node-a", 0, 30s, 30s, 30s, now));
}

TEST(preemption_target, the_highest_then_the_longest_lived_then_the_smallest_id_wins) {
  const time_point now{100s};
  const auto known = listed({{"node-d", 3, 60s},
                             {"node-c", 7, 40s},
                             {"node-b", 7, 50s},
                             {"node-e", 7, 50s},
                             {"node-a", 0, 50s}},
                            now);
  auto t = preemption_target(known, "node-a", 0, 30s, 1h, 30s, now);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->node, "node-b");
  EXPECT_EQ(t->live_for, 50s);
}

TEST(preemption_target, without_the_stores_figure_it_counts_from_its_own_first_sight) {
  candidate_snapshot known;
  known.update({{"node-a", 0, -1ms}, {"node-b", 5, -1ms}}, time_point{10s});
  EXPECT_FALSE(preemption_target(known, "node-a", 0, 30s, 1h, 30s, time_point{20s}));
  known.update({{"node-a", 0, -1ms}, {"node-b", 5, -1ms}}, time_point{40s});
  auto t = preemption_target(known, "node-a", 0, 30s, 1h, 30s, time_point{40s});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->live_for, 30s);
  // A listing without it breaks the run: it starts again from the next sight.
  known.update({{"node-a", 0, -1ms}}, time_point{41s});
  known.update({{"node-a", 0, -1ms}, {"node-b", 5, -1ms}}, time_point{42s});
  EXPECT_FALSE(preemption_target(known, "node-a", 0, 30s, 1h, 30s, time_point{60s}));
}

TEST(candidates_report, lists_this_node_first_then_by_id_and_null_before_any_listing) {
  EXPECT_TRUE(candidates_report(candidate_snapshot{}, "node-b").is_null());
  const auto known =
      listed({{"node-c", 1, 4s}, {"node-b", 0, 5s}, {"node-a", 2, -1ms}}, time_point{1s});
  const auto r = candidates_report(known, "node-b");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0]["node"], "node-b");
  EXPECT_EQ(r[1]["node"], "node-a");
  EXPECT_TRUE(r[1]["live_for_ms"].is_null()) << "the store cannot tell";
  EXPECT_EQ(r[2]["node"], "node-c");
  EXPECT_EQ(r[2]["priority"], 1);
  EXPECT_EQ(r[2]["live_for_ms"], 4000);
  EXPECT_TRUE(r[2]["last_attempt_ms_ago"].is_null()) << "the store cannot tell";
  EXPECT_EQ(r[2]["cooling_down_ms"], 0);
}

TEST(candidates_report, shows_the_last_attempt_and_the_cooldown_as_listed) {
  const auto known = listed({{"node-b", 0, 5s, 1200ms, 7s}}, time_point{1s});
  const auto r = candidates_report(known, "node-a");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]["last_attempt_ms_ago"], 1200);
  EXPECT_EQ(r[0]["cooling_down_ms"], 7000);
}

}  // namespace
}  // namespace baton
