// Where the leader is, drained nodes and nodes that never lead, on every
// store kind (daemon_scenarios.hpp):
// - every candidate's `baton leader` names the leader, its token and the
//   address its advertise option publishes;
// - `baton drain` on the leader hands over to another node, as a
//   switchover does; a drained node never takes the lease, not even when
//   every other candidate is gone, and stays drained across a restart of
//   its daemon; `baton undrain` lets it lead again;
// - a never_lead candidate of the highest priority is listed as such, is
//   refused as a switchover's target, never preempts, and never takes the
//   lease when the leader dies.
#include <signal.h>

#include "daemon_scenarios.hpp"
#include "support/text_count.hpp"

namespace baton::testing::daemon_scenarios_test {
namespace {

std::string advertise_of(int index) {
  return "svc-" + std::to_string(index) + ".test:5432";
}

// Node `index`'s options: its advertise address and a drain file of its own
// name (a restarted node reads its predecessor's).
std::vector<std::string> standing_flags(const fault_cluster& c, int index,
                                        const std::string& name) {
  return {"--advertise", advertise_of(index), "--drain-file",
          (c.dir() / (name + ".drained")).string()};
}

cli_outcome ask_cli(const fault_cluster& c, int asked, const std::string& verb,
                    const std::string& name) {
  return run_cli(c, name, {verb, "--socket", c.socket_of(asked).string()});
}

// Polls node `index`'s status (bounded: 100 polls, 100 ms apart) until
// `holds` says yes of it.
bool status_shows(fault_cluster& c, int index,
                  const std::function<bool(const nlohmann::json&)>& holds) {
  for (int polls = 0; polls < 100; ++polls) {
    if (auto s = c.status(index); s && holds(*s)) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

// Whether node `index` comes to list `node` as `standing` (the store's
// registration changes with the node's next write).
bool lists_standing(fault_cluster& c, int index, const std::string& node,
                    const std::string& standing) {
  return status_shows(c, index, [&](const nlohmann::json& s) {
    if (!s.contains("candidates") || !s["candidates"].is_array()) return false;
    for (const auto& x : s["candidates"]) {
      if (x.value("node", "") == node && x.value("standing", nlohmann::json()) == standing) {
        return true;
      }
    }
    return false;
  });
}

TEST_P(daemon_scenarios, drained_leader_hands_over_and_stays_out_until_undrained) {
  auto c = election("drain");
  for (int i = 1; i <= 3; ++i) start(*c, i, standing_flags(*c, i, fault_cluster::name_of(i)));
  const auto leader = single_leader(*c);
  ASSERT_TRUE(leader);
  const int l = fault_cluster::index_of(*leader);
  const int x = l % 3 + 1;
  const int y = x % 3 + 1;
  ASSERT_TRUE(lists_candidates(*c, l, {fault_cluster::name_of(x), fault_cluster::name_of(y)}))
      << logs(*c);

  // Every candidate finds the leader's service without asking the others.
  for (int i = 1; i <= 3; ++i) {
    const auto said = ask_cli(*c, i, "leader", "leader-" + std::to_string(i));
    EXPECT_EQ(said.code, 0) << said.output;
    EXPECT_NE(said.output.find(leader->name + " token " + std::to_string(token_value(*leader)) +
                               " " + advertise_of(l)),
              std::string::npos)
        << "asked of " << fault_cluster::name_of(i) << ": " << said.output << logs(*c);
  }

  // The drained leader hands over, as a switchover does.
  const std::int64_t drained_at = mono_now_ns();
  const auto drained = ask_cli(*c, l, "drain", "drain");
  EXPECT_EQ(drained.code, 0) << drained.output << logs(*c);
  EXPECT_NE(drained.output.find("handing the lease over to"), std::string::npos) << drained.output;
  event_log log(c->events());
  ASSERT_TRUE(wait_for_new_term_after(log, drained_at, 20s)) << logs(*c);
  const auto next = first_started_after(log, drained_at);
  EXPECT_NE(next->name, leader->name) << logs(*c);
  EXPECT_GT(token_value(*next), token_value(*leader));
  const int n = fault_cluster::index_of(*next);
  EXPECT_TRUE(lists_standing(*c, n, leader->name, "drained")) << logs(*c);
  record_fault(record_of(*c, "drain of the leader", drained_at, leader->pid));

  // Every other candidate gone: the drained node still takes nothing.
  ASSERT_TRUE(c->node(x).signal_group(SIGKILL));
  ASSERT_TRUE(c->node(y).signal_group(SIGKILL));
  const std::int64_t alone = mono_now_ns();
  EXPECT_FALSE(wait_for_new_term_after(log, alone, 4 * scenario_ttl))
      << "the drained node took the lease\n"
      << logs(*c);

  // Restarted under the same node id and drain file: still drained.
  ASSERT_TRUE(c->node(l).signal_group(SIGTERM));
  ASSERT_TRUE(c->node(l).wait_exit(20s)) << logs(*c);
  const int again = 4;
  auto flags = standing_flags(*c, l, leader->name);
  flags.insert(flags.end(), {"--node-id", leader->name});
  start(*c, again, flags);
  ASSERT_TRUE(status_shows(*c, again, [](const nlohmann::json& s) {
    return s.value("standing", "") == "drained";
  })) << logs(*c);
  const std::int64_t restarted = mono_now_ns();
  EXPECT_FALSE(wait_for_new_term_after(log, restarted, 3 * scenario_ttl))
      << "a restart forgot the drain\n"
      << logs(*c);

  // Undrained: it leads again.
  const std::int64_t undrained_at = mono_now_ns();
  const auto undrained = ask_cli(*c, again, "undrain", "undrain");
  EXPECT_EQ(undrained.code, 0) << undrained.output << logs(*c);
  ASSERT_TRUE(wait_for_new_term_after(log, undrained_at, 20s)) << logs(*c);
  EXPECT_EQ(first_started_after(log, undrained_at)->name, fault_cluster::name_of(again));
  EXPECT_EQ(check_no_overlap(*c), 0u) << logs(*c);
}

TEST_P(daemon_scenarios, never_lead_candidate_never_leads_nor_is_handed_the_lease) {
  auto c = election("never");
  const std::vector<std::string> delay{"--preempt-delay", "2s"};
  start(*c, 1, delay);
  const auto leader = single_leader(*c);
  ASSERT_TRUE(leader);
  auto never = delay;
  never.insert(never.end(), {"--never-lead", "--priority", "9", "--advertise", advertise_of(2)});
  start(*c, 2, never);
  EXPECT_TRUE(lists_standing(*c, 1, fault_cluster::name_of(2), "never")) << logs(*c);
  ASSERT_TRUE(status_shows(*c, 2, [&](const nlohmann::json& s) {
    return s.value("standing", "") == "never" &&
           s.value("leader", nlohmann::json()) == leader->name;
  })) << logs(*c);

  // A switchover to it is refused; the preemption delay passes without one.
  const auto refused = switchover(*c, 1, fault_cluster::name_of(2), "never-switchover", false);
  EXPECT_EQ(refused.code, 1) << refused.output;
  EXPECT_NE(refused.output.find("never to lead"), std::string::npos) << refused.output;
  const std::int64_t listed_at = mono_now_ns();
  event_log log(c->events());
  EXPECT_FALSE(wait_for_new_term_after(log, listed_at, 4s)) << "leadership moved\n" << logs(*c);
  EXPECT_EQ(count_occurrences(c->logs(), "preempted:"), 0u) << logs(*c);

  // The leader gone: nobody takes the lease.
  ASSERT_TRUE(c->node(1).signal_group(SIGKILL));
  const std::int64_t gone = mono_now_ns();
  EXPECT_FALSE(wait_for_new_term_after(log, gone, 4 * scenario_ttl))
      << "the never_lead node took the lease\n"
      << logs(*c);
  EXPECT_EQ(check_no_overlap(*c), 0u) << logs(*c);
}

}  // namespace
}  // namespace baton::testing::daemon_scenarios_test
