#include "baton/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
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

// "a,b" -> {"a", "b"}; "" -> {}.
std::vector<std::string> split_labels(const std::string& list) {
  std::vector<std::string> names;
  std::istringstream in(list);
  for (std::string name; std::getline(in, name, ',');) names.push_back(name);
  return names;
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
  // first one, leader_info none until a leader is known.
  m.on_transition("idle", "acquiring");
  m.set_known_leader("node-2");
  const std::string text = m.text();
  for (const char* name :
       {"baton_info", "baton_state", "baton_transitions_total", "baton_is_leader",
        "baton_leader_changes_total", "baton_lease_remaining_seconds",
        "baton_redis_command_duration_seconds", "baton_redis_errors_total",
        "baton_hook_duration_seconds", "baton_hook_failures_total", "baton_socket_clients",
        "baton_timer_delay_seconds", "baton_term_token", "baton_leader_info", "baton_live",
        "baton_ready", "baton_app_failures_total", "baton_renewal_deadline_ratio"}) {
    EXPECT_EQ(lines_starting(text, std::string("# HELP ") + name + " ").size(), 1U) << name;
    EXPECT_EQ(lines_starting(text, std::string("# TYPE ") + name + " ").size(), 1U) << name;
  }
}

// metric_families() is what the registry holds, no more and no less: each
// row's help and type are the exposition's, and no family is exposed
// without a row (baton(1) and the docs test read the rows).
TEST(metrics, the_family_table_is_what_the_registry_exposes) {
  metrics m("jobs", "node-1");
  m.on_transition("idle", "acquiring");
  m.set_known_leader("node-2");
  const std::string text = m.text();
  std::set<std::string> rows;
  for (const auto& row : metric_families()) {
    const std::string name(row.name);
    EXPECT_TRUE(rows.insert(name).second) << name << " has two rows";
    EXPECT_EQ(lines_starting(text, "# HELP " + name + " "),
              std::vector<std::string>{"# HELP " + name + " " + std::string(row.help)});
    EXPECT_EQ(lines_starting(text, "# TYPE " + name + " "),
              std::vector<std::string>{"# TYPE " + name + " " + std::string(row.type)});
    EXPECT_FALSE(row.help.empty()) << name;
  }
  for (const auto& line : lines_starting(text, "# TYPE ")) {
    const auto name = line.substr(7, line.find(' ', 7) - 7);
    EXPECT_EQ(rows.count(name), 1U) << name << " is exposed but has no row in metric_families()";
  }
}

// Each row's labels are the label names its series carry, in that order.
TEST(metrics, the_family_table_names_each_familys_labels) {
  metrics m("jobs", "node-1");
  m.on_transition("idle", "acquiring");
  m.set_known_leader("node-2");
  const std::string text = m.text();
  for (const auto& row : metric_families()) {
    const std::string name(row.name);
    const std::string suffix = row.type == "histogram" ? "_count" : "";
    auto series = lines_starting(text, name + suffix + "{");
    for (const auto& plain : lines_starting(text, name + suffix + " ")) series.push_back(plain);
    ASSERT_FALSE(series.empty()) << name;
    const auto& line = series.front();
    std::string labels;
    const auto open = line.find('{');
    if (open != std::string::npos && open < line.find(' ')) {
      const std::regex label_name(R"re(([a-z_]+)="(?:[^"\\]|\\.)*")re");
      const auto block = line.substr(open, line.find('}') - open);
      for (auto it = std::sregex_iterator(block.begin(), block.end(), label_name);
           it != std::sregex_iterator(); ++it) {
        labels += (labels.empty() ? "" : ",") + (*it)[1].str();
      }
    }
    // prometheus-cpp sorts the labels of a series; the row keeps its own order.
    std::vector<std::string> want = split_labels(std::string(row.labels));
    std::vector<std::string> got = split_labels(labels);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << line;
  }
}

TEST(metrics, the_term_token_and_the_known_leader) {
  metrics m("e", "n");
  std::string text = m.text();
  EXPECT_EQ(sample(text, "baton_term_token"), "0");
  EXPECT_TRUE(lines_starting(text, "baton_leader_info").empty()) << "no leader known yet";

  m.set_term_token(1795306076779583);
  m.set_known_leader("web-1");
  text = m.text();
  EXPECT_EQ(std::stod(sample(text, "baton_term_token")), 1795306076779583.0);
  EXPECT_EQ(sample(text, R"(baton_leader_info{node_id="web-1"})"), "1");

  // A new leader replaces the old series: never two at once.
  m.set_known_leader("web-2");
  m.set_known_leader("web-2");
  text = m.text();
  EXPECT_EQ(lines_starting(text, "baton_leader_info{").size(), 1U);
  EXPECT_EQ(sample(text, R"(baton_leader_info{node_id="web-2"})"), "1");

  m.set_known_leader("");
  EXPECT_TRUE(lines_starting(m.text(), "baton_leader_info").empty());
}

TEST(metrics, probes_and_app_failures) {
  metrics m("e", "n");
  std::string text = m.text();
  for (const char* kind : {"start_failed", "exited", "killed"}) {
    EXPECT_EQ(sample(text, std::string("baton_app_failures_total{kind=\"") + kind + "\"}"), "0")
        << kind;
  }
  m.set_probes(true, false);
  m.count_app_failure("killed");
  m.count_app_failure("killed");
  m.count_app_failure("exited");
  m.count_app_failure("no such failure");
  text = m.text();
  EXPECT_EQ(sample(text, "baton_live"), "1");
  EXPECT_EQ(sample(text, "baton_ready"), "0");
  EXPECT_EQ(sample(text, R"(baton_app_failures_total{kind="killed"})"), "2");
  EXPECT_EQ(sample(text, R"(baton_app_failures_total{kind="exited"})"), "1");
  EXPECT_EQ(sample(text, R"(baton_app_failures_total{kind="other"})"), "1");
  m.set_probes(false, false);
  EXPECT_EQ(sample(m.text(), "baton_live"), "0");
}

TEST(metrics, renewal_deadline_ratios_land_in_their_buckets) {
  metrics m("e", "n");
  m.observe_renewal_deadline_ratio(0.52);  // a healthy leader, default timing
  m.observe_renewal_deadline_ratio(0.8);   // after a retry or two
  m.observe_renewal_deadline_ratio(0.97);  // just in time
  m.observe_renewal_deadline_ratio(-1);    // a clock oddity counts as 0
  const std::string text = m.text();
  const std::string name = "baton_renewal_deadline_ratio";
  EXPECT_EQ(sample(text, name + R"(_bucket{le="0.1"})"), "1");
  EXPECT_EQ(sample(text, name + R"(_bucket{le="0.6"})"), "2");
  EXPECT_EQ(sample(text, name + R"(_bucket{le="0.75"})"), "2");
  EXPECT_EQ(sample(text, name + R"(_bucket{le="0.8"})"), "3");
  EXPECT_EQ(sample(text, name + R"(_bucket{le="1"})"), "4");
  EXPECT_EQ(sample(text, name + "_count"), "4");
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
