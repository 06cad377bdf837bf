#include "baton/metrics.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace baton {
namespace {

// The exposition lines that start with `prefix` (a metric name, optionally
// with the opening of its labels), comments excluded.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) {
      found.push_back(line);
    }
  }
  return found;
}

// The one sample line for `series` (name plus exact label block), e.g.
// `baton_state{state="idle"}`; fails the test when it is missing.
std::string sample(const std::string& text, const std::string& series) {
  auto found = lines_starting(text, series + " ");
  EXPECT_EQ(found.size(), 1U) << "series " << series << " in\n" << text;
  return found.empty() ? std::string() : found.front().substr(series.size() + 1);
}

TEST(metrics, every_metric_has_help_and_type) {
  metrics m("jobs", "node-1");
  // A family without series is not exposed; transitions has none until the
  // first one.
  m.on_transition("idle", "acquiring");
  const std::string text = m.text();
  for (const char* name :
       {"baton_info", "baton_state", "baton_transitions_total", "baton_is_leader",
        "baton_leader_changes_total", "baton_lease_remaining_seconds",
        "baton_redis_command_duration_seconds", "baton_redis_errors_total",
        "baton_hook_duration_seconds", "baton_hook_failures_total", "baton_socket_clients",
        "baton_timer_delay_seconds"}) {
    EXPECT_EQ(lines_starting(text, std::string("# HELP ") + name + " ").size(), 1U) << name;
    EXPECT_EQ(lines_starting(text, std::string("# TYPE ") + name + " ").size(), 1U) << name;
  }
}

TEST(metrics, info_carries_version_election_and_node) {
  metrics m("jobs", "node-1");
  EXPECT_EQ(sample(m.text(), std::string("baton_info{election=\"jobs\",node_id=\"node-1\","
                                         "version=\"") +
                                 BATON_VERSION + "\"}"),
            "1");
}

TEST(metrics, label_values_are_escaped_by_the_library) {
  metrics m("a\"b\nc\\d", "n");
  const std::string text = m.text();
  EXPECT_NE(text.find(R"(election="a\"b\nc\\d")"), std::string::npos) << text;
  // The raw newline must not split the sample line.
  EXPECT_EQ(lines_starting(text, "c\\d").size(), 0U);
}

TEST(metrics, all_states_exist_from_the_start_at_zero) {
  metrics m("e", "n");
  const std::string text = m.text();
  for (const char* state :
       {"idle", "acquiring", "working", "renewing", "pausing", "releasing", "stopped"}) {
    EXPECT_EQ(sample(text, std::string("baton_state{state=\"") + state + "\"}"), "0") << state;
  }
}

TEST(metrics, state_gauge_is_exclusive) {
  metrics m("e", "n");
  m.set_state("acquiring");
  m.set_state("working");
  std::string text = m.text();
  EXPECT_EQ(sample(text, "baton_state{state=\"working\"}"), "1");
  EXPECT_EQ(sample(text, "baton_state{state=\"acquiring\"}"), "0");
  EXPECT_EQ(lines_starting(text, "baton_state{").size(), 7U);

  m.set_state("no such state");
  text = m.text();
  EXPECT_EQ(sample(text, "baton_state{state=\"working\"}"), "0");
  EXPECT_EQ(lines_starting(text, "baton_state{").size(), 7U);
}

TEST(metrics, transitions_count_per_pair) {
  metrics m("e", "n");
  m.on_transition("idle", "acquiring");
  m.on_transition("acquiring", "working");
  m.on_transition("idle", "acquiring");
  m.on_transition("bogus", "idle");
  const std::string text = m.text();
  EXPECT_EQ(sample(text, R"(baton_transitions_total{from="idle",to="acquiring"})"), "2");
  EXPECT_EQ(sample(text, R"(baton_transitions_total{from="acquiring",to="working"})"), "1");
  EXPECT_EQ(sample(text, R"(baton_transitions_total{from="other",to="idle"})"), "1");
  EXPECT_EQ(lines_starting(text, "baton_transitions_total{").size(), 3U);
}

TEST(metrics, leadership_lease_and_clients) {
  metrics m("e", "n");
  std::string text = m.text();
  EXPECT_EQ(sample(text, "baton_is_leader"), "0");
  EXPECT_EQ(sample(text, "baton_leader_changes_total"), "0");
  EXPECT_EQ(sample(text, "baton_lease_remaining_seconds"), "0");
  EXPECT_EQ(sample(text, "baton_socket_clients"), "0");

  m.set_leader(true);
  m.on_leader_change();
  m.on_leader_change();
  m.set_lease_remaining(7.5);
  m.set_socket_clients(3);
  text = m.text();
  EXPECT_EQ(sample(text, "baton_is_leader"), "1");
  EXPECT_EQ(sample(text, "baton_leader_changes_total"), "2");
  EXPECT_EQ(sample(text, "baton_lease_remaining_seconds"), "7.5");
  EXPECT_EQ(sample(text, "baton_socket_clients"), "3");

  m.set_leader(false);
  m.set_lease_remaining(-1);
  text = m.text();
  EXPECT_EQ(sample(text, "baton_is_leader"), "0");
  EXPECT_EQ(sample(text, "baton_lease_remaining_seconds"), "0");
}

TEST(metrics, redis_command_histogram_buckets_count_and_sum) {
  metrics m("e", "n");
  m.observe_redis_command("renew", 0.0003);
  m.observe_redis_command("renew", 0.002);
  m.observe_redis_command("renew", 10.0);
  const std::string text = m.text();
  const std::string name = "baton_redis_command_duration_seconds";
  EXPECT_EQ(sample(text, name + R"(_count{command="renew"})"), "3");
  EXPECT_DOUBLE_EQ(std::stod(sample(text, name + R"(_sum{command="renew"})")), 10.0023);
  EXPECT_EQ(sample(text, name + R"(_bucket{command="renew",le="0.0001"})"), "0");
  EXPECT_EQ(sample(text, name + R"(_bucket{command="renew",le="0.0005"})"), "1");
  EXPECT_EQ(sample(text, name + R"(_bucket{command="renew",le="0.0025"})"), "2");
  EXPECT_EQ(sample(text, name + R"(_bucket{command="renew",le="5"})"), "2");
  EXPECT_EQ(sample(text, name + R"(_bucket{command="renew",le="+Inf"})"), "3");
  // The other commands exist, empty; an unknown one lands in "other".
  EXPECT_EQ(sample(text, name + R"(_count{command="acquire"})"), "0");
  EXPECT_EQ(sample(text, name + R"(_count{command="release"})"), "0");
  EXPECT_EQ(lines_starting(text, name + R"(_count{command="other"})").size(), 0U);
  m.observe_redis_command("FLUSHALL", 0.001);
  EXPECT_EQ(sample(m.text(), name + R"(_count{command="other"})"), "1");
}

TEST(metrics, timer_delays_land_in_their_buckets_and_never_count_negative) {
  metrics m("jobs", "node-1");
  m.observe_timer_delay(0.0003);
  m.observe_timer_delay(0.02);
  m.observe_timer_delay(-1.0);  // a clock oddity counts as on time
  const std::string text = m.text();
  EXPECT_EQ(sample(text, "baton_timer_delay_seconds_bucket{le=\"0.0001\"}"), "1");
  EXPECT_EQ(sample(text, "baton_timer_delay_seconds_bucket{le=\"0.0005\"}"), "2");
  EXPECT_EQ(sample(text, "baton_timer_delay_seconds_bucket{le=\"0.025\"}"), "3");
  EXPECT_EQ(sample(text, "baton_timer_delay_seconds_count"), "3");
}

TEST(metrics, redis_errors_by_kind_with_a_cap) {
  metrics m("e", "n");
  std::string text = m.text();
  for (const char* kind : {"connect", "timeout", "reply", "closed", "other"}) {
    EXPECT_EQ(sample(text, std::string("baton_redis_errors_total{kind=\"") + kind + "\"}"), "0");
  }
  m.on_redis_error("timeout");
  m.on_redis_error("timeout");
  m.on_redis_error("auth");
  text = m.text();
  EXPECT_EQ(sample(text, R"(baton_redis_errors_total{kind="timeout"})"), "2");
  EXPECT_EQ(sample(text, R"(baton_redis_errors_total{kind="auth"})"), "1");

  for (int i = 0; i < 100; ++i) {
    m.on_redis_error("kind-" + std::to_string(i));
  }
  text = m.text();
  EXPECT_EQ(lines_starting(text, "baton_redis_errors_total{").size(), 32U);
  // 5 usual kinds + auth + 26 new ones fill the 32; the other 74 go to "other".
  EXPECT_EQ(sample(text, R"(baton_redis_errors_total{kind="other"})"), "74");
}

TEST(metrics, hooks_durations_and_failures) {
  metrics m("e", "n");
  std::string text = m.text();
  EXPECT_EQ(sample(text, R"(baton_hook_failures_total{hook="on_start"})"), "0");
  EXPECT_EQ(sample(text, R"(baton_hook_failures_total{hook="on_stop"})"), "0");
  EXPECT_EQ(sample(text, R"(baton_hook_duration_seconds_count{hook="on_stop"})"), "0");
  EXPECT_EQ(sample(text, R"(baton_hook_duration_seconds_bucket{hook="on_stop",le="300"})"), "0");

  m.observe_hook("on_start", 0.5, true);
  m.observe_hook("on_start", 2.0, false);
  text = m.text();
  EXPECT_EQ(sample(text, R"(baton_hook_duration_seconds_count{hook="on_start"})"), "2");
  EXPECT_EQ(sample(text, R"(baton_hook_duration_seconds_sum{hook="on_start"})"), "2.5");
  EXPECT_EQ(sample(text, R"(baton_hook_duration_seconds_bucket{hook="on_start",le="0.01"})"),
            "0");
  EXPECT_EQ(sample(text, R"(baton_hook_duration_seconds_bucket{hook="on_start",le="0.5"})"),
            "1");
  EXPECT_EQ(sample(text, R"(baton_hook_duration_seconds_bucket{hook="on_start",le="2.5"})"),
            "2");
  EXPECT_EQ(sample(text, R"(baton_hook_failures_total{hook="on_start"})"), "1");
  EXPECT_EQ(sample(text, R"(baton_hook_failures_total{hook="on_stop"})"), "0");
}

}  // namespace
}  // namespace baton
