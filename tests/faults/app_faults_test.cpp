// Faults of what baton runs: an on_start hook that hangs (and ignores
// SIGTERM), an on_start hook that fails, a supervised child that ignores
// SIGTERM, and a child that exits at once, in a loop. The hanging hook is a
// test_worker writing to the same event log, so the checker also proves that
// no other node's app starts while a hook of the old leader still runs.
#include <signal.h>

#include "scenario.hpp"

namespace baton::testing::app_faults_test {
namespace {

constexpr auto ttl = 2000ms;

std::string json_argv(const std::vector<std::string>& words) {
  return nlohmann::json(words).dump();
}

TEST(app_faults, on_start_hook_that_hangs_is_killed_and_the_next_leader_waits_for_it) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    // Ignores SIGTERM and ticks until SIGKILLed: at hook timeout + grace
    // (1.5 s + 1.5 s), longer than the ttl, so node-1 must keep its lease
    // renewed while its hook runs.
    node_options hanging;
    hanging.baton_args = {"--on-start",
                          json_argv({test_worker_binary().string(), "--log", c.events().string(),
                                     "--name", "hook-1", "--ignore-term"}),
                          "--hook-timeout", "1500ms"};
    auto& n1 = c.start_node(1, hanging);
    ASSERT_TRUE(n1.wait_for_log("on_start: started", 15s)) << c.logs();
    const std::int64_t inject = mono_now_ns();
    c.start_node(2);

    event_log log(c.events());
    ASSERT_TRUE(wait_for(
        log, [](const event_log& x) { return x.start_count("node-2") >= 1; }, 20s))
        << "node-2 never took over\n"
        << c.logs();
    EXPECT_EQ(log.start_count("node-1"), 0u) << "the child started although on_start failed";
    ASSERT_EQ(log.start_count("hook-1"), 1u) << c.logs();
    interval hook;
    for (const auto& i : log.intervals()) {
      if (i.name == "hook-1") hook = i;
    }
    EXPECT_TRUE(wait_until([&] { return !process_alive(hook.pid); }, 5s)) << "the hook still runs";
    EXPECT_GE(hook.terms, 1u) << "the hook never got SIGTERM";
    EXPECT_NE(c.log_of(1).find("timed out"), std::string::npos) << c.log_of(1);
    EXPECT_NE(c.log_of(1).find("start-failed"), std::string::npos) << c.log_of(1);

    const auto overlaps = check_no_overlap(c);
    auto record =
        round_record(c, "app: on_start hook hangs, ignores SIGTERM", inject, hook.pid, overlaps);
    for (const auto& i : log.intervals()) {
      if (i.name == "node-2") record.started_ms = ms_between(inject, i.start_ns);
    }
    record_fault(record);
  }
}

TEST(app_faults, on_start_hook_that_fails_hands_the_lease_to_the_next_node) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    node_options failing;
    failing.baton_args = {"--on-start", json_argv({"/bin/sh", "-c", "exit 1"})};
    auto& n1 = c.start_node(1, failing);
    ASSERT_TRUE(n1.wait_for_log("leading with token", 15s)) << c.logs();
    const std::int64_t inject = mono_now_ns();
    c.start_node(2);

    std::string why;
    auto leader = c.wait_for_single_worker(20s, &why);
    ASSERT_TRUE(leader) << why;
    EXPECT_EQ(leader->name, "node-2");
    const event_log log = c.log();
    EXPECT_EQ(log.start_count("node-1"), 0u) << "the child started although on_start failed";
    EXPECT_NE(c.log_of(1).find("start-failed"), std::string::npos) << c.log_of(1);
    // node-1 stands by behind node-2.
    EXPECT_TRUE(wait_until(
        [&] {
          auto s = c.status(1, 1s);
          return s && !(*s)["is_leader"].get<bool>() && (*s)["leader"] == "node-2";
        },
        10s, 50ms))
        << c.log_of(1);

    const auto overlaps = check_no_overlap(c);
    record_fault(
        round_record(c, "app: on_start hook fails (exit 1)", inject, std::nullopt, overlaps));
  }
}

TEST(app_faults, child_ignoring_sigterm_is_killed_by_the_deadline_before_the_successor) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    node_options deaf;
    deaf.worker_args = {"--ignore-term"};
    deaf.baton_args = {"--stop-timeout", "500ms"};
    c.start_node(1, deaf);
    c.start_node(2, deaf);
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why;
    const int l = fault_cluster::index_of(*leader);
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    ASSERT_TRUE(c.node(l).signal(SIGTERM));
    const auto code = c.node(l).wait_exit(15s);
    ASSERT_TRUE(code) << c.logs();
    EXPECT_EQ(*code, 0) << c.log_of(l);
    const auto gone = app.wait(1s);
    ASSERT_TRUE(gone) << c.logs();

    event_log log(c.events());
    ASSERT_TRUE(wait_for(
        log, [](const event_log& x) { return x.start_count() >= 2; }, 15s))
        << "no successor\n"
        << c.logs();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    EXPECT_GE(old->terms, 1u);
    EXPECT_FALSE(old->ended) << "it was meant to be SIGKILLed";
    ASSERT_TRUE(old->first_term_ns);
    // SIGKILL 500 ms after the SIGTERM; generous for a loaded machine.
    EXPECT_LE(ms_between(*old->first_term_ns, old->end_ns), 1500.0) << c.logs();
    EXPECT_GE(ms_between(*old->first_term_ns, old->end_ns), 400.0) << c.logs();
    EXPECT_NE(c.log_of(l).find("SIGKILL"), std::string::npos) << c.log_of(l);

    const auto overlaps = check_no_overlap(c);
    auto record = round_record(c, "app: child ignores SIGTERM (stop timeout 500 ms)", inject,
                               leader->pid, overlaps);
    record.gone_after_end_ms = ms_between(inject, *gone);
    record_fault(record);
  }
}

TEST(app_faults, child_exiting_at_once_in_a_loop_is_restarted_with_back_off) {
  fault_cluster c(round_name(1), ttl);
  c.start_node(1, with_worker_args({"--exit-after-ms", "0", "--exit-code", "3"}));
  event_log log(c.events());
  ASSERT_TRUE(wait_for(
      log, [](const event_log& x) { return x.start_count() >= 1; }, 15s))
      << c.logs();
  const std::int64_t first = log.intervals()[0].start_ns;
  // Watch for 10 s: a hot loop would start hundreds of times.
  hold_fault_until(first + 10'000'000'000LL);
  log.refresh();
  std::vector<std::int64_t> starts;
  for (const auto& i : log.intervals()) {
    if (i.start_ns <= first + 10'000'000'000LL) starts.push_back(i.start_ns);
  }
  EXPECT_GE(starts.size(), 2u) << "the child was never restarted\n" << c.logs();
  EXPECT_LE(starts.size(), 15u) << "no back-off: " << starts.size() << " starts in 10 s\n"
                                << c.logs();
  double min_gap_ms = 1e9;
  for (std::size_t i = 1; i < starts.size(); ++i) {
    min_gap_ms = std::min(min_gap_ms, ms_between(starts[i - 1], starts[i]));
  }
  EXPECT_GE(min_gap_ms, 250.0) << c.logs();
  // The gaps grow: the last is longer than the first.
  if (starts.size() >= 3) {
    EXPECT_GT(ms_between(starts[starts.size() - 2], starts.back()),
              ms_between(starts[0], starts[1]))
        << c.logs();
  }
  EXPECT_FALSE(c.node(1).exited()) << c.logs();
  std::printf("%zu starts in 10 s, shortest gap %.0f ms\n", starts.size(), min_gap_ms);

  const auto overlaps = check_no_overlap(c);
  fault_record record;
  record.kind = "app: child exits at once, in a loop (10 s)";
  record.injected = static_cast<int>(starts.size());
  record.overlaps = overlaps;
  record_fault(record);
}

}  // namespace
}  // namespace baton::testing::app_faults_test
