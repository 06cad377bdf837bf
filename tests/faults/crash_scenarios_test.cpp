// The leader's daemon gone or stuck, on every store kind
// (daemon_scenarios.hpp):
// - a host crash (SIGKILL of the daemon's process group): the keeper kills
//   the app at once, a standby takes over once the store let the lease go
//   (never before the last renewal's lease could end), with a larger token;
// - a wedged daemon (SIGSTOP of the daemon alone, past the ttl, its app left
//   running): the keeper stops the app at the lease deadline, the standby
//   starts after it, and the thawed daemon stands by;
// - crash order by priority: standbys at priorities 1, 5 and 3; the leader
//   crashes and the priority-5 one takes over, as the others, told by the
//   store that it outranks them, try a step later.
#include <signal.h>

#include "daemon_scenarios.hpp"

namespace baton::testing::daemon_scenarios_test {
namespace {

TEST_P(daemon_scenarios, crash_takeover) {
  auto c = election("crash");
  for (int i = 1; i <= 3; ++i) start(*c, i);
  const auto leader = single_leader(*c);
  ASSERT_TRUE(leader);
  const int l = fault_cluster::index_of(*leader);
  exit_watch app(leader->pid);
  // Read before the kill: a renewal in between only keeps the lease longer.
  const auto kept_until = world().lease_kept_until_ns(c->election());
  ASSERT_TRUE(kept_until || !world().tells_lease_end()) << "the store has no lease\n" << logs(*c);

  const std::int64_t inject = mono_now_ns();
  ASSERT_TRUE(c->node(l).signal_group(SIGKILL));
  // The keeper sees the daemon's pipe close and kills the app at once.
  const auto gone = app.wait(5s);
  ASSERT_TRUE(gone) << "the app outlived its dead daemon\n" << logs(*c);
  EXPECT_LE(ms_between(inject, *gone), 1000.0) << logs(*c);
  EXPECT_NE(c->log_of(l).find("the daemon is gone"), std::string::npos) << c->log_of(l);

  event_log log(c->events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s)) << "no takeover\n" << logs(*c);
  const auto next = first_started_after(log, inject);
  EXPECT_NE(next->name, leader->name);
  EXPECT_GT(next->start_ns, *gone) << logs(*c);
  EXPECT_GT(token_value(*next), token_value(*leader)) << logs(*c);
  EXPECT_GE(next->start_ns, inject + ns_of(scenario_ttl - scenario_renew_interval - 100ms))
      << "a standby started before the dead leader's last renewal could end\n"
      << logs(*c);
  if (kept_until) {
    // The store's own remaining time is whole milliseconds: 1 ms of rounding.
    EXPECT_GE(next->start_ns, *kept_until - 1'000'000)
        << "a standby started before the store let the dead leader's lease go\n"
        << logs(*c);
  }
  auto r = record_of(*c, "leader's daemon group SIGKILL (host crash)", inject, leader->pid);
  r.gone_after_end_ms = ms_between(inject, *gone);
  record_fault(r);
}

TEST_P(daemon_scenarios, freeze_past_the_ttl) {
  auto c = election("freeze");
  start(*c, 1);
  start(*c, 2);
  const auto leader = single_leader(*c);
  ASSERT_TRUE(leader);
  const int l = fault_cluster::index_of(*leader);
  const std::string other = fault_cluster::name_of(l == 1 ? 2 : 1);
  exit_watch app(leader->pid);

  const std::int64_t inject = mono_now_ns();
  c->freeze_process(c->node(l).pid());
  ASSERT_TRUE(wait_until([&] { return process_stopped(c->node(l).pid()); }, 2s));
  // Read once the daemon stopped: no renewal can move the lease after this.
  const auto kept_until = world().lease_kept_until_ns(c->election());
  ASSERT_TRUE(kept_until || !world().tells_lease_end()) << "the store has no lease\n" << logs(*c);
  const auto gone = app.wait(scenario_ttl + 3s);
  ASSERT_TRUE(gone) << "the wedged daemon's app was never stopped\n" << logs(*c);

  event_log log(c->events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s)) << "no takeover\n" << logs(*c);
  const auto old = interval_of(log, leader->pid);
  ASSERT_TRUE(old);
  const auto next = first_started_after(log, inject);
  EXPECT_EQ(next->name, other);
  // Its last unit of work, as the app logged it, came before the deadline
  // (the last renewal before the freeze + ttl).
  EXPECT_LE(old->end_ns, inject + ns_of(scenario_ttl)) << "the app worked past its lease deadline\n"
                                                       << logs(*c);
  EXPECT_GT(next->start_ns, *gone) << logs(*c);
  EXPECT_GT(token_value(*next), token_value(*leader)) << logs(*c);
  if (kept_until) {
    EXPECT_LT(old->end_ns, *kept_until + 1'000'000)
        << "the app worked past the moment the store could let its lease go\n"
        << logs(*c);
    EXPECT_GE(next->start_ns, *kept_until - 1'000'000) << logs(*c);
  }
  EXPECT_NE(c->log_of(l).find("lease deadline passed"), std::string::npos) << c->log_of(l);

  // Thawed, it finds its term over and stands by behind the new leader,
  // and never starts its app again meanwhile.
  c->thaw_all();
  const bool standing_by = wait_until(
      [&] {
        auto s = c->status(l, 1s);
        return s && !(*s)["is_leader"].get<bool>() && (*s)["leader"] == other;
      },
      10s, 50ms);
  EXPECT_TRUE(standing_by) << "the thawed daemon does not stand by behind " << other << "\n"
                           << c->log_of(l);
  EXPECT_FALSE(wait_for(
      log, [&](const event_log& x) { return x.start_count(leader->name) > 1; }, scenario_ttl))
      << logs(*c);
  record_fault(
      record_of(*c, "leader's daemon SIGSTOP > ttl, app left running", inject, leader->pid));
}

// A leader at priority 0 and standbys at 1, 5 and 3, none preempting
// (preempt_delay far off). The leader's daemon and app are killed: the
// priority-5 standby takes over, as the others, told by the store that it
// outranks them, try a step or two later. The ttl is long enough (8 s, a
// step of 200 ms) for the order to survive a loaded machine's late timers.
TEST_P(daemon_scenarios, crash_order_by_priority) {
  constexpr auto long_ttl = 8000ms;
  auto c = election("crash-order", long_ttl);
  start(*c, 1, {"--preempt-delay", "10m"});
  const auto leader = single_leader(*c);
  ASSERT_TRUE(leader);
  ASSERT_EQ(fault_cluster::index_of(*leader), 1);
  const int priority_of[] = {0, 0, 1, 5, 3};
  for (int i = 2; i <= 4; ++i) {
    start(*c, i, {"--preempt-delay", "10m", "--priority", std::to_string(priority_of[i])});
  }
  ASSERT_TRUE(lists_candidates(*c, 1, {"node-2", "node-3", "node-4"})) << logs(*c);
  // Every standby's last answer must have seen the others registered: one
  // more attempt each, at most a ttl apart (nothing tells when it was made).
  std::this_thread::sleep_for(long_ttl);

  const std::int64_t killed = mono_now_ns();
  ASSERT_TRUE(c->node(1).signal_group(SIGKILL));
  event_log log(c->events());
  ASSERT_TRUE(wait_for_new_term_after(log, killed, 40s)) << "no takeover\n" << logs(*c);
  const auto next = first_started_after(log, killed);
  EXPECT_EQ(next->name, fault_cluster::name_of(3)) << "not the highest priority took over\n"
                                                   << logs(*c);
  EXPECT_GT(token_value(*next), token_value(*leader));
  // The outranked standbys, which tried later, found it held.
  EXPECT_FALSE(wait_for(
      log, [&](const event_log& x) { return x.start_count() > 2; }, long_ttl / 4))
      << logs(*c);
  record_fault(record_of(*c, "crash takeover by priority", killed, leader->pid));
}

}  // namespace
}  // namespace baton::testing::daemon_scenarios_test
