// Faults of the leader's own processes that only a pause of the whole host
// brings: a VM pause (SIGSTOP of the daemon and of the app's group, longer
// than the ttl, then SIGCONT), with an app that follows its deadline and with
// one that does not. The event log must show no two apps at work at once, and
// the old app must be stopped by the keeper or by itself, never by a daemon
// that cannot run. A host crash (SIGKILL of the daemon's group) and a wedged
// daemon (SIGSTOP of the daemon alone) are scenarios of every store kind:
// crash_scenarios_test.cpp.
#include <signal.h>
#include <unistd.h>

#include "scenario.hpp"

namespace baton::testing::process_faults_test {
namespace {

constexpr auto ttl = 2000ms;

// The keeper's pid (= its process group, which holds the app) from the
// daemon's status, checked against the worker's actual process group.
std::optional<pid_t> keeper_group(fault_cluster& c, int index, pid_t worker_pid) {
  auto status = c.status(index);
  if (!status || !status->contains("child_pid")) return std::nullopt;
  const auto keeper = (*status)["child_pid"].get<pid_t>();
  if (keeper <= 1 || ::getpgid(worker_pid) != keeper) return std::nullopt;
  return keeper;
}

TEST(process_faults, vm_pause_of_daemon_and_app_longer_than_ttl_deadline_aware_app) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    node_options follow;
    follow.deadline_worker = true;
    c.start_node(1, follow);
    c.start_node(2, follow);
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why;
    const int l = fault_cluster::index_of(*leader);
    const auto keeper = keeper_group(c, l, leader->pid);
    ASSERT_TRUE(keeper) << "cannot find the keeper's process group\n" << c.logs();
    exit_watch app(leader->pid);

    // The whole "VM": the app's group first, so it cannot work while the
    // daemon is being stopped.
    const std::int64_t inject = mono_now_ns();
    c.freeze_group(*keeper);
    c.freeze_group(c.node(l).pgid());
    ASSERT_TRUE(wait_until(
        [&] { return process_stopped(leader->pid) && process_stopped(c.node(l).pid()); }, 2s));

    event_log log(c.events());
    // While it is frozen the lease expires and the other node takes over.
    ASSERT_TRUE(wait_for(
        log, [](const event_log& x) { return x.start_count() >= 2; }, ttl + 5s))
        << "no takeover during the pause\n"
        << c.logs();
    hold_fault_until(inject + std::chrono::nanoseconds(ttl + 1s).count());

    const std::int64_t thaw = mono_now_ns();
    c.thaw_all();
    const auto gone = app.wait(3s);
    ASSERT_TRUE(gone) << "the old app survived the thaw\n" << c.logs();
    log.refresh();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    EXPECT_LT(old->end_ns, thaw) << "the old app did a unit of work after the thaw\n" << c.logs();
    EXPECT_LE(ms_between(thaw, *gone), 200.0) << c.logs();
    // Why it stopped: its own deadline check, the keeper, or the thawed
    // daemon, whichever ran first after the thaw.
    const std::string cause = stop_cause(log, leader->pid, c.log_of(l));
    EXPECT_FALSE(cause.empty()) << c.logs();
    std::printf("round %d: app gone %.1f ms after the thaw (%s)\n", round, ms_between(thaw, *gone),
                cause.c_str());

    // And the old daemon stands by.
    EXPECT_TRUE(wait_until(
        [&] {
          auto s = c.status(l, 1s);
          return s && !(*s)["is_leader"].get<bool>();
        },
        10s, 50ms))
        << c.log_of(l);

    const auto overlaps = check_no_overlap(c);
    auto record = round_record(c, "process: VM pause > ttl (daemon + app), deadline-aware app",
                               inject, leader->pid, overlaps);
    record.gone_after_end_ms = ms_between(thaw, *gone);
    record_fault(record);
  }
}

// An app that does not follow the deadline itself: only the keeper stops it,
// and after a thaw the keeper and the app race; the app may do one overdue
// unit of work. That is why the test has a single node (a standby would have
// taken over during the pause: this is the hazard docs/safety.md lists for
// apps without deadline support), and why the bound is "within 200 ms".
TEST(process_faults, vm_pause_plain_app_is_killed_by_the_keeper_right_after_the_thaw) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    c.start_node(1);
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why;
    const auto keeper = keeper_group(c, 1, leader->pid);
    ASSERT_TRUE(keeper) << "cannot find the keeper's process group\n" << c.logs();
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    c.freeze_group(*keeper);
    c.freeze_group(c.node(1).pgid());
    ASSERT_TRUE(wait_until(
        [&] { return process_stopped(leader->pid) && process_stopped(c.node(1).pid()); }, 2s));
    hold_fault_until(inject + std::chrono::nanoseconds(ttl + 1s).count());

    const std::int64_t thaw = mono_now_ns();
    c.thaw_all();
    const auto gone = app.wait(3s);
    ASSERT_TRUE(gone) << "the old app survived the thaw\n" << c.logs();
    EXPECT_LE(ms_between(thaw, *gone), 200.0) << c.logs();
    const event_log log = c.log();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    EXPECT_LE(ms_between(thaw, old->end_ns), 200.0)
        << "the old app's last work after the thaw came too late\n"
        << c.logs();
    std::size_t ticks_after_thaw = 0;
    for (const auto& e : log.events()) {
      if (e.pid == leader->pid && e.kind == event_kind::tick && e.ns >= thaw) ++ticks_after_thaw;
    }
    EXPECT_LE(ticks_after_thaw, 2u) << c.logs();
    const std::string cause = stop_cause(log, leader->pid, c.log_of(1));
    EXPECT_FALSE(cause.empty()) << c.logs();

    const auto overlaps = check_no_overlap(c);
    fault_record record;
    record.kind = "process: VM pause > ttl, plain app, one node (keeper only)";
    record.overlaps = overlaps;
    record.stopped_ms = std::max(0.0, ms_between(inject, old->end_ns));
    record.gone_after_end_ms = ms_between(thaw, *gone);
    record_fault(record);
    std::printf("round %d: %zu tick(s) after the thaw, app gone %.1f ms after it (%s)\n", round,
                ticks_after_thaw, ms_between(thaw, *gone), cause.c_str());
  }
}

}  // namespace
}  // namespace baton::testing::process_faults_test
