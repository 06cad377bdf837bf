// `baton switchover --to NODE` to a node that would not take the lease, or
// would give it back, against real daemons on a real redis-server: a target
// frozen for longer than a standby waits between attempts, a target cooling
// down after it gave the lease up, and a target that a live candidate
// outranks (refused, and with --force accepted with a warning). Each refusal
// names the cause and leaves the leader's app working; the vetting is the
// same for every store kind (its table: tests/unit/daemon).
#include <signal.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon_fixture.hpp"

namespace baton::testing {
namespace {

class switchover_target : public daemon_fixture {
 protected:
  // The leader's view of candidate `node`, or null until it lists it.
  nlohmann::json listed(int leader, const std::string& node) {
    auto line = socket_request(socket_of(leader), R"({"cmd":"status"})", 2s);
    if (!line) return nullptr;
    auto s = nlohmann::json::parse(*line, nullptr, false);
    if (s.is_discarded() || !s.contains("candidates") || !s["candidates"].is_array()) {
      return nullptr;
    }
    for (const auto& c : s["candidates"])
      if (c.value("node", "") == node) return c;
    return nullptr;
  }

  // Polls the leader's status (the daemon offers no event for a listing)
  // until `pred` holds of its entry for `node`; bounded in count and time.
  bool await_listing(int leader, const std::string& node,
                     const std::function<bool(const nlohmann::json&)>& pred,
                     std::chrono::milliseconds timeout = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (int polls = 0; polls < 1000 && std::chrono::steady_clock::now() < deadline; ++polls) {
      if (auto c = listed(leader, node); !c.is_null() && pred(c)) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }

  client_outcome switchover(int leader, const std::string& to, std::vector<std::string> more = {}) {
    std::vector<std::string> args{"switchover", "--socket", socket_of(leader).string(), "--to", to};
    args.insert(args.end(), more.begin(), more.end());
    return run_client(std::move(args));
  }
};

// A standby frozen (SIGSTOP) for longer than a live one goes between
// attempts is refused, named, and the leader works on. A ttl of 4 s: the
// gap is about 5 s (ttl + ttl/6 + the renew interval) and the frozen node
// stays listed for 8 s, two ttls; the leader renews (and lists) every
// 300 ms, so the switchover meets the node still listed, past the gap.
TEST_F(switchover_target, a_frozen_standby_is_refused) {
  start_node(1, {}, {"--ttl", "4s", "--renew-interval", "300ms"});
  const auto leader = wait_for_single_worker();
  ASSERT_EQ(leader.name, "node-1") << logs();
  auto& standby = start_node(2, {}, {"--ttl", "4s"});
  ASSERT_TRUE(await_listing(1, "node-2", [](const nlohmann::json&) { return true; })) << logs();

  ASSERT_TRUE(standby.signal_group(SIGSTOP));
  ASSERT_TRUE(await_listing(1, "node-2", [](const nlohmann::json& c) {
    return c["last_attempt_ms_ago"].is_number() && c["last_attempt_ms_ago"].get<long>() > 5300;
  })) << logs();
  const auto refused = switchover(1, "node-2");
  standby.signal_group(SIGCONT);
  EXPECT_EQ(refused.code, 1) << refused.output;
  EXPECT_NE(refused.output.find("'node-2' made no acquire attempt for"), std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("frozen, stopped or cut off"), std::string::npos)
      << refused.output;

  // Nothing moved: node-1's app works on, and node-2 is taken once it is
  // back and heard from.
  const auto still = wait_for_single_worker();
  EXPECT_EQ(still.pid, leader.pid) << logs();
  ASSERT_TRUE(await_listing(1, "node-2", [](const nlohmann::json& c) {
    return c["last_attempt_ms_ago"].is_number() && c["last_attempt_ms_ago"].get<long>() < 4000;
  })) << logs();
  const auto moved = switchover(1, "node-2", {"--wait"});
  EXPECT_EQ(moved.code, 0) << moved.output << logs();
  expect_no_overlap();
}

// node-1 hands over to node-2 and cools down for 20 s; asked to hand back at
// once, node-2 refuses, saying when the cool-down ends.
TEST_F(switchover_target, a_target_cooling_down_is_refused_with_when_it_ends) {
  const std::vector<std::string> slow_to_return{"--ttl", "4s", "--resign-cooldown", "20s"};
  start_node(1, {}, slow_to_return);
  ASSERT_EQ(wait_for_single_worker().name, "node-1") << logs();
  start_node(2, {}, slow_to_return);
  ASSERT_TRUE(await_listing(1, "node-2", [](const nlohmann::json&) { return true; })) << logs();
  const auto moved = switchover(1, "node-2", {"--wait"});
  ASSERT_EQ(moved.code, 0) << moved.output << logs();

  ASSERT_TRUE(await_listing(2, "node-1", [](const nlohmann::json& c) {
    return c["cooling_down_ms"].is_number() && c["cooling_down_ms"].get<long>() > 0;
  })) << logs();
  const auto refused = switchover(2, "node-1");
  EXPECT_EQ(refused.code, 1) << refused.output;
  EXPECT_NE(refused.output.find("'node-1' is cooling down"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("hand over to it in "), std::string::npos) << refused.output;
  const auto working = wait_for_single_worker();
  EXPECT_EQ(working.name, "node-2") << logs();
  expect_no_overlap();
}

// node-3 (priority 5) outranks node-2 (priority 0): a switchover to node-2
// is refused, naming node-3 and --force; forced, it goes, with a warning.
TEST_F(switchover_target, an_outranked_target_needs_force_and_draws_a_warning) {
  // Preemption far off, so that node-3 does not take the lease meanwhile.
  const std::vector<std::string> no_preemption{"--preempt-delay", "10m"};
  start_node(1, {}, no_preemption);
  ASSERT_EQ(wait_for_single_worker().name, "node-1") << logs();
  start_node(2, {}, no_preemption);
  auto high = no_preemption;
  high.insert(high.end(), {"--priority", "5"});
  start_node(3, {}, high);
  ASSERT_TRUE(await_listing(1, "node-2", [](const nlohmann::json&) { return true; })) << logs();
  ASSERT_TRUE(await_listing(1, "node-3", [](const nlohmann::json&) { return true; })) << logs();

  const auto refused = switchover(1, "node-2");
  EXPECT_EQ(refused.code, 1) << refused.output;
  EXPECT_NE(refused.output.find("'node-3' (priority 5) outranks 'node-2' (priority 0)"),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("--force"), std::string::npos) << refused.output;
  EXPECT_EQ(wait_for_single_worker().name, "node-1") << "a refusal moved nothing\n" << logs();

  const auto forced = switchover(1, "node-2", {"--force", "--wait"});
  EXPECT_EQ(forced.code, 0) << forced.output << logs();
  EXPECT_NE(forced.output.find("warning: 'node-3' (priority 5) outranks 'node-2'"),
            std::string::npos)
      << forced.output;
  EXPECT_NE(forced.output.find("lease.preempt_delay (10m)"), std::string::npos) << forced.output;
  EXPECT_NE(forced.output.find("new leader: node-2"), std::string::npos) << forced.output;
  expect_no_overlap();
}

}  // namespace
}  // namespace baton::testing
