// End-to-end: real baton processes, real redis-server, real workers. Exactly
// one app works at any time; a terminated leader hands over without overlap;
// losing Redis stops the app before the lease's validity ends. (A killed
// leader replaced only after its lease could end is a fault scenario of every
// store kind: tests/faults/crash_scenarios_test.cpp.)
#include <signal.h>

#include "daemon_fixture.hpp"

namespace baton::testing {
namespace {

TEST_F(daemon_fixture, two_candidates_exactly_one_works) {
  start_node(1);
  start_node(2);
  auto leader = wait_for_single_worker();
  // Give the standby several retry periods to do something wrong.
  auto log = event_log(events);
  wait_for(log, [](const event_log& l) { return l.live_workers().size() > 1; }, 3s);
  EXPECT_EQ(log.live_workers().size(), 1u);
  EXPECT_EQ(log.start_count(), 1u) << logs();
  expect_no_overlap();
  auto status = socket_request(socket_of(index_of(leader)), R"({"cmd":"status"})", 2s);
  ASSERT_TRUE(status);
  EXPECT_NE(status->find("\"is_leader\":true"), std::string::npos) << *status;
  auto other = index_of(leader) == 1 ? 2 : 1;
  auto standby = socket_request(socket_of(other), R"({"cmd":"status"})", 2s);
  ASSERT_TRUE(standby);
  EXPECT_NE(standby->find("\"is_leader\":false"), std::string::npos) << *standby;
  EXPECT_NE(standby->find("\"leader\":\"" + leader.name + "\""), std::string::npos) << *standby;
}

// A standby drops the read-only file pages start-up used once it knows who
// leads (src/daemon/startup_pages.hpp); what it runs afterwards must fault
// back in from the page cache, the winning path included.
TEST_F(daemon_fixture, a_standby_that_gave_back_its_startup_pages_takes_over) {
  start_node(1);
  auto leader = wait_for_single_worker();
  ASSERT_EQ(leader.name, "node-1");
  auto& standby = start_node(2);
  ASSERT_TRUE(standby.wait_for_log("standby memory: gave back", 20s)) << logs();
  const auto text = standby.log_text();
  const auto at = text.find("standby memory: gave back ");
  const auto kb =
      std::stoul(text.substr(at + std::string_view("standby memory: gave back ").size()));
  EXPECT_GT(kb, 0u) << text.substr(at, 120);

  nodes[0]->signal_group(SIGKILL);
  event_log log(events);
  ASSERT_TRUE(wait_for(
      log, [](const event_log& l) { return l.start_count() >= 2; }, 15s))
      << logs();
  EXPECT_EQ(log.intervals()[1].name, "node-2");
  EXPECT_TRUE(wait_for(
      log, [](const event_log& l) { return l.intervals()[1].ticks > 0; }, 10s))
      << "the new leader's app runs";
  expect_no_overlap();
}

TEST_F(daemon_fixture, sigterm_of_the_leader_hands_over_without_overlap) {
  start_node(1);
  start_node(2);
  start_node(3);
  auto leader = wait_for_single_worker();
  auto& leader_process = *nodes[static_cast<std::size_t>(index_of(leader) - 1)];
  leader_process.signal(SIGTERM);
  auto code = leader_process.wait_exit(15s);
  ASSERT_TRUE(code) << logs();
  EXPECT_EQ(*code, 0);
  event_log log(events);
  ASSERT_TRUE(wait_for(log, [](const event_log& l) { return l.start_count() >= 2; }, 15s))
      << logs();
  EXPECT_TRUE(log.intervals()[0].ended) << "the old worker stopped gracefully";
  expect_no_overlap();
  EXPECT_NE(leader_process.log_text().find("state releasing -> stopped"), std::string::npos)
      << leader_process.log_text();
}

TEST_F(daemon_fixture, redis_killed_under_the_leader_stops_the_app_within_validity) {
  start_node(1);
  auto leader = wait_for_single_worker();
  auto killed_at = now_ns();
  redis->kill_and_wait();
  event_log log(events);
  ASSERT_TRUE(wait_for(log, [](const event_log& l) { return l.end_count() >= 1; }, 15s))
      << logs();
  // The last renewal was sent before Redis died, so validity ended at the
  // latest one ttl minus drift (2s - 22ms) after the kill.
  const auto& worker = log.intervals()[0];
  EXPECT_LE(worker.end_ns, killed_at + 1'978'000'000LL) << logs();
  EXPECT_NE(nodes[0]->log_text().find("store-unreachable"), std::string::npos) << logs();
}

TEST_F(daemon_fixture, redis_unreachable_at_start_is_retried_until_it_comes_up) {
  redis->kill_and_wait();
  auto& node = start_node(1);
  ASSERT_TRUE(node.wait_for_log("store-error", 10s)) << logs();
  EXPECT_FALSE(node.exited()) << "a sidecar must not crash-loop while Redis is down";
  redis->restart();
  wait_for_single_worker(20s);
}

TEST_F(daemon_fixture, child_ignoring_sigterm_is_killed_and_the_daemon_exits) {
  auto& node = start_node(1, {"--ignore-term"}, {"--stop-timeout", "500ms"});
  wait_for_single_worker();
  node.signal(SIGTERM);
  auto code = node.wait_exit(15s);
  ASSERT_TRUE(code) << logs();
  EXPECT_EQ(*code, 0);
  auto log = event_log::read(events);
  ASSERT_EQ(log.intervals().size(), 1u);
  EXPECT_GE(log.intervals()[0].terms, 1u);
  EXPECT_TRUE(log.live_workers().empty()) << "the worker was SIGKILLed";
  EXPECT_NE(node.log_text().find("SIGKILL"), std::string::npos) << logs();
  EXPECT_EQ(lease_pttl(), -2) << "the lease was released after the kill";
}

TEST_F(daemon_fixture, hanging_on_start_hook_is_killed_and_the_node_does_not_lead) {
  auto pid_file = dir / "hook.pid";
  auto hook = R"(["/bin/sh","-c","echo $$ > )" + pid_file.string() + R"(; exec sleep 1000"])";
  auto args = base_args(1);
  args.insert(args.end(), {"--on-start", hook, "--hook-timeout", "500ms"});
  nodes.push_back(std::make_unique<baton_process>(args, env_list{}, dir / "n1.log"));
  auto& node = *nodes.back();
  ASSERT_TRUE(node.wait_for_log("timed out", 10s)) << logs();
  ASSERT_TRUE(node.wait_for_log("start-failed", 10s)) << logs();
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(pid_file); }, 5s));
  std::ifstream in(pid_file);
  pid_t hook_pid = 0;
  in >> hook_pid;
  ASSERT_GT(hook_pid, 0);
  EXPECT_TRUE(wait_until([&] { return !process_alive(hook_pid); }, 5s));
  EXPECT_TRUE(wait_until([&] { return lease_pttl() == -2; }, 5s))
      << "a node whose on_start failed gives the lease back";
}

TEST_F(daemon_fixture, child_exiting_by_itself_is_restarted_with_back_off) {
  auto& node = start_node(1, {"--exit-after-ms", "50", "--exit-code", "3"});
  event_log log(events);
  ASSERT_TRUE(wait_for(log, [](const event_log& l) { return l.start_count() >= 3; }, 20s))
      << logs();
  // Back-off doubles from retry_interval: no hot loop.
  auto gap = log.intervals()[2].start_ns - log.intervals()[1].start_ns;
  EXPECT_GE(gap, 500'000'000LL) << logs();
  EXPECT_NE(node.log_text().find("exit code 3"), std::string::npos) << logs();
}

TEST_F(daemon_fixture, child_exit_policy_exit_returns_the_childs_status) {
  auto& node = start_node(1, {"--exit-after-ms", "50", "--exit-code", "3"},
                          {"--on-child-exit", "exit"});
  auto code = node.wait_exit(15s);
  ASSERT_TRUE(code) << logs();
  EXPECT_EQ(*code, 3);
  EXPECT_EQ(lease_pttl(), -2) << "released before exiting";
}

TEST_F(daemon_fixture, subscriber_gets_start_renewed_and_stop_events_in_order) {
  auto& node = start_node(1);
  wait_for_single_worker();
  line_stream stream(socket_of(1));
  ASSERT_TRUE(stream.valid());
  auto first = stream.next_line(5s);
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, R"({"type":"subscribed"})");
  // Renewals come every renew_interval (667 ms) and tell the new deadline.
  std::optional<std::string> renewed;
  for (int i = 0; i < 10 && !renewed; ++i) {
    auto line = stream.next_line(5s);
    ASSERT_TRUE(line) << logs();
    if (line->find("\"event\":\"renewed\"") != std::string::npos) renewed = line;
  }
  ASSERT_TRUE(renewed) << logs();
  EXPECT_NE(renewed->find("\"valid_until_mono_ns\""), std::string::npos) << *renewed;
  node.signal(SIGTERM);
  std::vector<std::string> names;
  for (int i = 0; i < 20; ++i) {
    auto line = stream.next_line(5s);
    if (!line) break;
    auto at = line->find("\"event\":\"");
    if (at == std::string::npos) continue;
    auto name = line->substr(at + 9, line->find('"', at + 9) - at - 9);
    if (name == "renewed") continue;  // a voluntary stop keeps renewing
    if (name == "state") {
      auto to = line->find("\"to\":\"");
      name += ":" + line->substr(to + 6, line->find('"', to + 6) - to - 6);
    }
    names.push_back(name);
  }
  std::vector<std::string> expected{"state:pausing", "stop", "state:releasing"};
  ASSERT_GE(names.size(), expected.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3), expected);
}

}  // namespace
}  // namespace baton::testing
