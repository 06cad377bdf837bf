// Choosing who leads, on every store kind (daemon_scenarios.hpp):
// - `baton switchover --to NODE`: to a node that is not a candidate,
//   refused and nothing moves; asked of a standby, refused; to a standby,
//   the app moves to NODE with a larger token; to a standby frozen just
//   before (still listed, it cannot take the lease), the reservation lapses
//   after its window and another node leads;
// - preemption: a candidate of a higher priority that keeps restarting never
//   pulls leadership over; once it stays up for lease.preempt_delay, the
//   leader hands over to it, once.
#include <signal.h>

#include "daemon_scenarios.hpp"
#include "support/text_count.hpp"

namespace baton::testing::daemon_scenarios_test {
namespace {

TEST_P(daemon_scenarios, switchover) {
  auto c = election("switchover");
  for (int i = 1; i <= 3; ++i) start(*c, i);
  const auto leader = single_leader(*c);
  ASSERT_TRUE(leader);
  const int l = fault_cluster::index_of(*leader);
  const int t = l % 3 + 1;
  const int u = t % 3 + 1;
  ASSERT_TRUE(lists_candidates(*c, l, {fault_cluster::name_of(t), fault_cluster::name_of(u)}))
      << logs(*c);

  // No such candidate: refused, and the app works on; a standby asked: it
  // does not lead (exit 3).
  const auto refused = switchover(*c, l, "node-9", "refused", false);
  EXPECT_EQ(refused.code, 1) << refused.output;
  EXPECT_NE(refused.output.find("'node-9' is not a live candidate"), std::string::npos)
      << refused.output;
  const auto standby = switchover(*c, t, fault_cluster::name_of(u), "standby-asked", false);
  EXPECT_EQ(standby.code, 3) << standby.output;

  // To a standby.
  const std::int64_t asked = mono_now_ns();
  const auto moved = switchover(*c, l, fault_cluster::name_of(t), "moved", true);
  EXPECT_EQ(moved.code, 0) << moved.output << logs(*c);
  EXPECT_NE(moved.output.find("new leader: " + fault_cluster::name_of(t)), std::string::npos)
      << moved.output;
  event_log log(c->events());
  ASSERT_TRUE(wait_for_new_term_after(log, asked, 20s)) << logs(*c);
  const auto next = first_started_after(log, asked);
  EXPECT_EQ(next->name, fault_cluster::name_of(t)) << logs(*c);
  EXPECT_GT(token_value(*next), token_value(*leader));
  const auto old = interval_of(log, leader->pid);
  ASSERT_TRUE(old && old->ended);
  record_fault(record_of(*c, "switchover to a standby", asked, leader->pid));
  std::printf(
      "[%s] switchover: old app gone %.1f ms after the request, new app started %.1f ms "
      "after it was gone\n",
      GetParam().c_str(), ms_between(asked, old->end_ns), ms_between(old->end_ns, next->start_ns));

  // To a standby that froze just before: listed still, it cannot take the
  // lease; another node leads once the window (the ttl) is over.
  ASSERT_TRUE(lists_candidates(*c, t, {fault_cluster::name_of(u)})) << logs(*c);
  c->freeze_group(c->node(u).pgid());
  const std::int64_t frozen = mono_now_ns();
  const auto lapsed = switchover(*c, t, fault_cluster::name_of(u), "lapsed", false);
  EXPECT_EQ(lapsed.code, 0) << lapsed.output << logs(*c);
  ASSERT_TRUE(wait_for_new_term_after(log, frozen, 20s)) << logs(*c);
  const auto after = first_started_after(log, frozen);
  EXPECT_NE(after->name, fault_cluster::name_of(u));
  const auto gone = interval_of(log, next->pid);
  ASSERT_TRUE(gone && gone->ended);
  // The reservation held the lease for its window (the ttl): allow for the
  // stop and a server's coarse clock.
  EXPECT_GE(ms_between(gone->end_ns, after->start_ns), 0.5 * scenario_ttl.count()) << logs(*c);
  record_fault(record_of(*c, "switchover to a frozen standby", frozen, next->pid));
  c->thaw_all();
}

// Nodes 1 and 2 at priority 0 lead; a node at priority 5 restarts three
// times, each time before preempt_delay: leadership stays. Then it stays
// up: the leader hands over to it once.
TEST_P(daemon_scenarios, preemption_only_once_a_higher_priority_stays) {
  constexpr auto preempt_delay = 3000ms;
  const std::vector<std::string> delay{"--preempt-delay", "3s"};
  auto c = election("preempt");
  start(*c, 1, delay);
  start(*c, 2, delay);
  const auto leader = single_leader(*c);
  ASSERT_TRUE(leader);

  // One node id for every start of the high-priority node: a restart, as a
  // crash loop would be.
  const std::vector<std::string> high{"--preempt-delay", "3s",  "--priority", "5",
                                      "--node-id",       "high"};
  for (int flap = 0; flap < 3; ++flap) {
    auto& node = start(*c, 3 + flap, high);
    // Up for well under preempt_delay, then gone for good.
    std::this_thread::sleep_for(preempt_delay / 2);
    ASSERT_TRUE(node.signal_group(SIGKILL));
  }
  const std::int64_t steady = mono_now_ns();
  start(*c, 6, high);
  // The claims are about the high node's terms and the hand-overs to it;
  // a term of node 1 or 2 that a store's hiccup on a loaded machine ended
  // and began again is none of them (and the overlap check still holds).
  const std::string steady_node = fault_cluster::name_of(6);
  const auto term_of = [](const event_log& x, const std::string& name) -> std::optional<interval> {
    for (const auto& i : x.intervals())
      if (i.name == name) return i;
    return std::nullopt;
  };
  event_log log(c->events());
  ASSERT_TRUE(wait_for(
      log, [&](const event_log& x) { return term_of(x, steady_node).has_value(); }, 30s))
      << "the high node never led once it stayed up\n"
      << logs(*c);
  const auto high_term = term_of(log, steady_node);
  EXPECT_GE(ms_between(steady, high_term->start_ns), preempt_delay.count() * 0.9) << logs(*c);
  EXPECT_EQ(count_occurrences(c->logs(), "preempted: high (priority 5"), 1u)
      << "not one hand-over to the high node\n"
      << logs(*c);
  for (int flap = 3; flap <= 5; ++flap) {
    EXPECT_FALSE(term_of(log, fault_cluster::name_of(flap)))
        << "a restarting node pulled leadership over\n"
        << logs(*c);
  }
  record_fault(record_of(*c, "preemption by a restarting node", steady, leader->pid));
}

}  // namespace
}  // namespace baton::testing::daemon_scenarios_test
