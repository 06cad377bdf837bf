// `baton resign [--wait]` against a fake daemon whose resign command and
// status are scripted: success, refusals, a successor appearing after a few
// polls, no successor, and the daemon going away while waiting.
#include <atomic>
#include <chrono>

#include "cli_test_util.hpp"

namespace baton::cli_test {
namespace {

json resigned() { return {{"node_id", "web-1"}, {"token", 42}, {"cooldown_ms", 15'000}}; }

json status_with_leader(json leader, int token) {
  return {{"node_id", "web-1"},
          {"is_leader", false},
          {"state", "idle"},
          {"leader", std::move(leader)},
          {"token", token}};
}

using resign_test = cli_test;

TEST_F(resign_test, leader_resigns_and_exits_0) {
  fake_daemon daemon(socket_path());
  json seen;
  daemon.set_resign([&](const json& request) {
    seen = request;
    return resigned();
  });
  auto r = run_cli({"resign", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "resigned: stopping the app and releasing the lease; staying out of the election for "
            "15.0s\n");
  EXPECT_EQ(seen.value("cmd", ""), "resign");
  EXPECT_EQ(daemon.resign_calls(), 1);
}

TEST_F(resign_test, not_the_leader_exits_3) {
  fake_daemon daemon(socket_path());
  daemon.set_resign(
      [](const json&) -> json { throw std::runtime_error("not the leader (leader is web-2)"); });
  auto r = run_cli({"resign", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "baton: not the leader (leader is web-2)\n");
}

TEST_F(resign_test, other_refusals_exit_1) {
  fake_daemon daemon(socket_path());
  daemon.set_resign([](const json&) -> json { throw std::runtime_error("permission denied"); });
  auto r = run_cli({"resign", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "baton: the daemon refused to resign: permission denied\n");
}

TEST_F(resign_test, unexpected_reply_exits_1) {
  fake_daemon daemon(socket_path());
  daemon.set_resign([](const json&) -> json { return {{"type", "surprise"}}; });
  auto r = run_cli({"resign", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("unexpected reply to resign"), std::string::npos) << r.err;
}

TEST_F(resign_test, unreachable_daemon_exits_1) {
  auto r = run_cli({"resign", "--wait", "--socket", socket_path("nobody.sock")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot reach the daemon"), std::string::npos);
}

TEST_F(resign_test, wait_reports_the_successor) {
  fake_daemon daemon(socket_path());
  std::atomic<int> status_after_resign{-1};
  daemon.set_resign([&](const json&) {
    status_after_resign = daemon.status_calls();
    return resigned();
  });
  // Our own name, then nobody, then web-2: only web-2 counts.
  daemon.set_status_fn([&](int call) {
    const int since = call - status_after_resign.load();
    if (status_after_resign < 0 || since < 2) return status_with_leader("web-1", 42);
    if (since < 4) return status_with_leader(nullptr, 0);
    return status_with_leader("web-2", 43);
  });
  auto r = run_cli({"resign", "--wait", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("resigned: "), std::string::npos);
  EXPECT_NE(r.out.find("\nnew leader: web-2 (token 43)\n"), std::string::npos) << r.out;
  EXPECT_EQ(daemon.status_calls(), 5);
}

TEST_F(resign_test, wait_gives_up_with_exit_4) {
  fake_daemon daemon(socket_path());
  daemon.set_resign([](const json&) { return resigned(); });
  daemon.set_status(status_with_leader(nullptr, 0));
  const auto started = std::chrono::steady_clock::now();
  auto r = run_cli({"resign", "--wait", "--timeout", "300ms", "--socket", daemon.path()});
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(r.err, "baton: no other node took over within 300ms\n");
  EXPECT_GE(took, 200ms);
  EXPECT_LT(took, 4s);
  EXPECT_GE(daemon.status_calls(), 1);
}

TEST_F(resign_test, daemon_gone_while_waiting_exits_1) {
  fake_daemon daemon(socket_path());
  daemon.set_resign([](const json&) { return resigned(); });
  daemon.set_status_fn([&](int call) {
    if (call >= 1) daemon.close_clients();
    return status_with_leader("web-1", 42);
  });
  auto r = run_cli({"resign", "--wait", "--timeout", "20s", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot reach the daemon"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("closed the connection"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace baton::cli_test
