// The client verbs (`baton status|health|watch|resign`) run as separate
// processes against real daemons and a real redis-server: exit codes on the
// leader and a standby, a watcher that follows a node until it stops, and a
// resign that hands the lease to the other node.
#include <signal.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon_fixture.hpp"

namespace baton::testing {
namespace {

class cli : public daemon_fixture {
 protected:
  static int other_than(int index) { return index == 1 ? 2 : 1; }

  /// Nodes 1 and 2, once both answer on their sockets (a leader's worker can
  /// start before the standby has opened its socket).
  void start_two_nodes() {
    auto& one = start_node(1);
    auto& two = start_node(2);
    ASSERT_TRUE(one.wait_for_log("socket: listening on", 10s)) << logs();
    ASSERT_TRUE(two.wait_for_log("socket: listening on", 10s)) << logs();
  }
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(cli, status_exits_0_on_the_leader_and_3_on_a_standby) {
  start_two_nodes();
  auto worker = wait_for_single_worker();
  const int leader = index_of(worker);
  const int standby = other_than(leader);

  auto on_leader = run_client({"status", "--socket", socket_of(leader).string()});
  EXPECT_EQ(on_leader.code, 0) << on_leader.output;
  EXPECT_NE(on_leader.output.find("leader    " + worker.name + " (this node), token "),
            std::string::npos)
      << on_leader.output;
  EXPECT_NE(on_leader.output.find("state     "), std::string::npos) << on_leader.output;

  auto on_standby = run_client({"status", "--socket", socket_of(standby).string()});
  EXPECT_EQ(on_standby.code, 3) << on_standby.output;

  auto as_json = run_client({"status", "--json", "--socket", socket_of(leader).string()});
  EXPECT_EQ(as_json.code, 0) << as_json.output;
  auto parsed = nlohmann::json::parse(as_json.output, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << as_json.output;
  EXPECT_EQ(parsed.value("node_id", ""), worker.name);
  EXPECT_EQ(parsed.value("is_leader", false), true);
  EXPECT_FALSE(parsed.contains("type"));

  auto health = run_client({"health", "--socket", socket_of(standby).string()});
  EXPECT_EQ(health.code, 0) << health.output;
  EXPECT_EQ(health.output, "");
}

TEST_F(cli, status_of_a_stopped_daemon_exits_1) {
  auto r = run_client({"status", "--socket", socket_of(1).string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("baton: cannot reach the daemon at " + socket_of(1).string()),
            std::string::npos)
      << r.output;
}

TEST_F(cli, watch_follows_a_node_until_it_stops) {
  auto& node = start_node(1);
  wait_for_single_worker();
  baton_process watch({"watch", "--json", "--socket", socket_of(1).string()}, env_list{},
                      dir / "watch.log");
  // The status line comes after the subscription took effect.
  ASSERT_TRUE(watch.wait_for_log("\"type\":\"status\"", 10s)) << watch.log_text() << logs();
  ASSERT_TRUE(node.signal(SIGTERM));
  ASSERT_TRUE(watch.wait_for_log("\"event\":\"stop\"", 15s)) << watch.log_text() << logs();
  auto code = watch.wait_exit(15s);
  ASSERT_TRUE(code) << watch.log_text();
  EXPECT_EQ(*code, 1);
  EXPECT_EQ(node.wait_exit(15s), 0) << logs();

  bool saw_stop = false;
  bool saw_state = false;
  const auto lines = lines_of(watch.log_text());
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "baton: the daemon closed the connection");
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    auto message = nlohmann::json::parse(lines[i], nullptr, false);
    ASSERT_TRUE(message.is_object()) << lines[i];
    if (i == 0) {
      EXPECT_EQ(message.value("type", ""), "status");
      continue;
    }
    EXPECT_EQ(message.value("type", ""), "event") << lines[i];
    saw_stop = saw_stop || message.value("event", "") == "stop";
    saw_state = saw_state || message.value("event", "") == "state";
  }
  EXPECT_TRUE(saw_stop) << watch.log_text();
  EXPECT_TRUE(saw_state) << watch.log_text();
}

TEST_F(cli, resign_wait_hands_the_lease_to_the_other_node) {
  start_two_nodes();
  auto worker = wait_for_single_worker();
  const int leader = index_of(worker);
  const int standby = other_than(leader);

  auto refused = run_client({"resign", "--socket", socket_of(standby).string()});
  EXPECT_EQ(refused.code, 3) << refused.output;
  EXPECT_NE(refused.output.find("baton: not the leader"), std::string::npos) << refused.output;

  auto r = run_client(
      {"resign", "--wait", "--timeout", "20s", "--socket", socket_of(leader).string()}, 30s);
  EXPECT_EQ(r.code, 0) << r.output << logs();
  EXPECT_NE(r.output.find("resigned: stopping the app and releasing the lease"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("new leader: node-" + std::to_string(standby)), std::string::npos)
      << r.output;

  event_log log(events);
  ASSERT_TRUE(wait_for(
      log, [](const event_log& l) { return l.start_count() >= 2; }, 15s))
      << logs();
  EXPECT_EQ(log.intervals()[1].name, "node-" + std::to_string(standby));
  expect_no_overlap();
  auto after = run_client({"status", "--socket", socket_of(standby).string()});
  EXPECT_EQ(after.code, 0) << after.output;
}

}  // namespace
}  // namespace baton::testing
