// What operators use on a running daemon: the HTTP endpoint, systemd's
// notifications and SIGHUP reloads, checked against real daemons and a real
// redis-server.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "daemon_fixture.hpp"

namespace baton::testing {
namespace {

struct http_reply {
  int status = 0;
  std::string body;
};

// One HTTP/1.0 request to 127.0.0.1:port; status 0 when nothing came back.
http_reply http_request(unsigned short port, const std::string& method, const std::string& path) {
  http_reply reply;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return reply;
  }
  std::string request = method + " " + path + " HTTP/1.0\r\nHost: test\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) {
    ::close(fd);
    return reply;
  }
  std::string raw;
  char chunk[4096];
  for (int i = 0; i < 1000; ++i) {
    auto n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    raw.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  std::smatch m;
  if (std::regex_search(raw, m, std::regex("^HTTP/1\\.[01] (\\d{3})"))) reply.status = std::stoi(m[1]);
  if (auto end = raw.find("\r\n\r\n"); end != std::string::npos) reply.body = raw.substr(end + 4);
  return reply;
}

// The port the daemon bound for --http-listen 127.0.0.1:0, from its log.
unsigned short http_port_of(const baton_process& node) {
  std::smatch m;
  auto log = node.log_text();
  if (!std::regex_search(log, m, std::regex("HTTP on 127\\.0\\.0\\.1:(\\d+)"))) return 0;
  return static_cast<unsigned short>(std::stoi(m[1]));
}

class operate : public daemon_fixture {
 protected:
  bool wait_for_status(int index, const std::function<bool(const nlohmann::json&)>& pred,
                       std::chrono::milliseconds timeout = 15s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      auto line = socket_request(socket_of(index), R"({"cmd":"status"})", 2s);
      if (line) {
        auto s = nlohmann::json::parse(*line, nullptr, false);
        if (!s.is_discarded() && pred(s)) return true;
      }
      ::usleep(50'000);  // polling a daemon that offers no event for this
    }
    return false;
  }
};

TEST_F(operate, http_endpoints_answer_for_leader_and_standby) {
  auto& a = start_node(0, {}, {"--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(a.wait_for_log("HTTP on", 10s)) << logs();
  wait_for_single_worker();
  auto& b = start_node(1, {}, {"--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(b.wait_for_log("HTTP on", 10s)) << logs();
  ASSERT_TRUE(wait_for_status(1, [](const nlohmann::json& s) { return s["leader"] == "node-0"; }))
      << logs();
  auto pa = http_port_of(a);
  auto pb = http_port_of(b);
  ASSERT_NE(pa, 0);
  ASSERT_NE(pb, 0);

  EXPECT_EQ(http_request(pa, "GET", "/leader").status, 200);
  EXPECT_EQ(http_request(pa, "GET", "/standby").status, 503);
  EXPECT_EQ(http_request(pb, "GET", "/leader").status, 503);
  EXPECT_EQ(http_request(pb, "GET", "/standby").status, 200);
  EXPECT_EQ(http_request(pa, "GET", "/healthz").status, 200);
  EXPECT_EQ(http_request(pb, "GET", "/healthz").status, 200);

  auto status = http_request(pb, "GET", "/status");
  ASSERT_EQ(status.status, 200);
  auto s = nlohmann::json::parse(status.body, nullptr, false);
  ASSERT_FALSE(s.is_discarded()) << status.body;
  EXPECT_EQ(s["node_id"], "node-1");
  EXPECT_EQ(s["leader"], "node-0") << "a standby names the leader";
  EXPECT_GT(s["token"].get<std::uint64_t>(), 0u) << "and its fencing token";
  EXPECT_EQ(s["redis"], "connected");

  auto metrics = http_request(pa, "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("\nbaton_is_leader 1\n"), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("baton_state{state=\"working\"} 1"), std::string::npos);
  EXPECT_NE(metrics.body.find("baton_redis_command_duration_seconds_count{command=\"acquire\"}"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("baton_transitions_total{from=\"acquiring\",to=\"working\"} 1"),
            std::string::npos);
  EXPECT_NE(http_request(pb, "GET", "/metrics").body.find("\nbaton_is_leader 0\n"), std::string::npos);

  EXPECT_EQ(http_request(pa, "POST", "/leader").status, 405);
  EXPECT_EQ(http_request(pa, "GET", "/nope").status, 404);
  expect_no_overlap();
}

TEST_F(operate, http_listen_on_a_taken_port_fails_at_start) {
  auto& a = start_node(0, {}, {"--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(a.wait_for_log("HTTP on", 10s)) << logs();
  auto port = http_port_of(a);
  auto& b = start_node(1, {}, {"--http-listen", "127.0.0.1:" + std::to_string(port)});
  EXPECT_EQ(b.wait_exit(10s), 1) << logs();
  EXPECT_NE(b.log_text().find("cannot serve http.listen"), std::string::npos) << logs();
}

TEST_F(operate, systemd_hears_ready_status_and_watchdog) {
  auto path = dir / "notify";
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

  auto args = base_args(0);
  args.insert(args.end(), {"--", test_worker_binary().string(), "--log", events.string(), "--name",
                           "node-0"});
  nodes.push_back(std::make_unique<baton_process>(
      args, env_list{{"NOTIFY_SOCKET", path.string()}, {"WATCHDOG_USEC", "400000"}},
      dir / "n0.log"));

  bool ready = false, leader_status = false;
  int watchdogs = 0;
  for (int i = 0; i < 200 && !(ready && leader_status && watchdogs >= 2); ++i) {
    char buf[512];
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) continue;  // the 1s receive timeout bounds each round
    std::string message(buf, static_cast<std::size_t>(n));
    ready = ready || message.find("READY=1") != std::string::npos;
    leader_status = leader_status || message.find("STATUS=leader (working)") != std::string::npos;
    if (message.find("WATCHDOG=1") != std::string::npos) ++watchdogs;
  }
  ::close(fd);
  EXPECT_TRUE(ready) << logs();
  EXPECT_TRUE(leader_status) << logs();
  EXPECT_GE(watchdogs, 2) << logs();
}

TEST_F(operate, sighup_applies_what_may_change_and_refuses_the_rest) {
  auto file = dir / "baton.yaml";
  auto write = [&](const std::string& text) { std::ofstream(file) << text; };
  const std::string common = "election: " + election() + "\nnode_id: node-0\nredis:\n  url: " +
                             redis->url() + "\nsocket:\n  path: " + socket_of(0).string() + "\n";
  write(common + "lease:\n  ttl: 2s\nhooks:\n  timeout: 30s\n");
  nodes.push_back(std::make_unique<baton_process>(
      std::vector<std::string>{"run", "--config", file.string(), "--", test_worker_binary().string(),
                               "--log", events.string(), "--name", "node-0"},
      env_list{}, dir / "n0.log"));
  auto& node = *nodes.back();
  wait_for_single_worker();

  write(common + "lease:\n  ttl: 2s\nhooks:\n  timeout: 10s\n");
  ASSERT_TRUE(node.signal(SIGHUP));
  EXPECT_TRUE(node.wait_for_log("received SIGHUP: hooks.timeout: 30s -> 10s", 10s)) << logs();

  write(common + "lease:\n  ttl: 3s\nhooks:\n  timeout: 5s\n");
  ASSERT_TRUE(node.signal(SIGHUP));
  EXPECT_TRUE(node.wait_for_log("reload refused, nothing changed", 10s)) << logs();
  EXPECT_NE(node.log_text().find("lease.ttl: 2s -> 3s"), std::string::npos) << logs();

  write(common + "lease:\n  ttl: [oops\n");
  ASSERT_TRUE(node.signal(SIGHUP));
  EXPECT_TRUE(node.wait_for_log("the configuration is invalid, nothing changed", 10s)) << logs();

  EXPECT_FALSE(node.exited()) << "the daemon keeps running";
  EXPECT_TRUE(wait_for_status(0, [](const nlohmann::json& s) { return s["is_leader"] == true; }));
  expect_no_overlap();
}

}  // namespace
}  // namespace baton::testing
