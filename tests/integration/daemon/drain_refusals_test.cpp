// `baton drain` refused, against real daemons on a real redis-server: a
// leader that no candidate can take over from keeps leading and is not
// drained; a daemon that cannot write its drain file refuses the drain and
// changes nothing. Each refusal names the cause; `baton undrain` of a node
// not drained says so; and `baton leader` on a fresh standby. The drains
// that go through are the daemon scenarios'
// (tests/faults/standing_scenarios_test.cpp, on every kind).
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon_fixture.hpp"

namespace baton::testing {
namespace {

class drain_refusals : public daemon_fixture {
 protected:
  client_outcome drain_verb(int node, const std::string& verb) {
    return run_client({verb, "--socket", socket_of(node).string()});
  }

  // Node `node`'s status field `key` ("" when it does not answer).
  std::string status_of(int node, const char* key) {
    auto line = socket_request(socket_of(node), R"({"cmd":"status"})", 2s);
    if (!line) return {};
    auto s = nlohmann::json::parse(*line, nullptr, false);
    if (s.is_discarded() || !s.contains(key) || !s[key].is_string()) return {};
    return s[key].get<std::string>();
  }
};

TEST_F(drain_refusals, a_leader_nobody_can_take_over_from_keeps_leading) {
  start_node(1);
  const auto leader = wait_for_single_worker();
  ASSERT_EQ(leader.name, "node-1");
  // Wait for the leader's first listing of the candidates (with a renewal).
  for (int polls = 0; polls < 100; ++polls) {
    auto line = socket_request(socket_of(1), R"({"cmd":"status"})", 2s);
    if (line && line->find("\"candidates\":[") != std::string::npos) break;
    std::this_thread::sleep_for(100ms);
  }
  const auto refused = drain_verb(1, "drain");
  EXPECT_EQ(refused.code, 1) << refused.output;
  EXPECT_NE(refused.output.find("baton: the daemon refused to drain: refused: no candidate can "
                                "take over (no other candidate is listed); this node keeps "
                                "leading and is not drained"),
            std::string::npos)
      << refused.output;
  EXPECT_EQ(status_of(1, "standing"), "eligible");
  EXPECT_FALSE(std::filesystem::exists(socket_of(1).string() + ".drained"));
  const auto undrained = drain_verb(1, "undrain");
  EXPECT_EQ(undrained.code, 0) << undrained.output;
  EXPECT_NE(undrained.output.find("undrained node-1 (it was not drained)"), std::string::npos)
      << undrained.output;
  EXPECT_TRUE(event_log::read(events).live_workers().size() == 1) << logs();
  expect_no_overlap();
}

// `baton leader` end to end, on a standby just started: the leader and its
// token. (Its asking again while the standby's list lacks the leader, on a
// new connection each time, is leader_command_test's, which can make that
// moment happen; here it may or may not.)
TEST_F(drain_refusals, leader_on_a_fresh_standby_names_the_leader_and_its_token) {
  start_node(1);
  ASSERT_EQ(wait_for_single_worker().name, "node-1");
  start_node(2);
  for (int polls = 0; polls < 100 && status_of(2, "leader") != "node-1"; ++polls) {
    std::this_thread::sleep_for(20ms);
  }
  const auto leader = run_client({"leader", "--socket", socket_of(2).string()});
  EXPECT_EQ(leader.code, 0) << leader.output;
  EXPECT_EQ(leader.output.rfind("node-1 token ", 0), 0u) << leader.output;
}

TEST_F(drain_refusals, a_drain_file_that_cannot_be_written_refuses_the_drain) {
  const auto missing = (dir / "no-such-dir" / "node-2.drained").string();
  start_node(1);
  ASSERT_EQ(wait_for_single_worker().name, "node-1");
  start_node(2, {}, {"--drain-file", missing});
  for (int polls = 0; polls < 100 && status_of(2, "leader") != "node-1"; ++polls) {
    std::this_thread::sleep_for(100ms);
  }
  const auto refused = drain_verb(2, "drain");
  EXPECT_EQ(refused.code, 1) << refused.output;
  EXPECT_NE(refused.output.find("refused: cannot write the drain file " + missing +
                                ": No such file or directory; nothing changed"),
            std::string::npos)
      << refused.output;
  EXPECT_EQ(status_of(2, "standing"), "eligible");
  EXPECT_NE(nodes[1]->log_text().find("drain refused: cannot write the drain file"),
            std::string::npos)
      << logs();
}

}  // namespace
}  // namespace baton::testing
