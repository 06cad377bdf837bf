// What operators use on a running daemon: the HTTP endpoint, systemd's
// notifications and SIGHUP reloads, checked against real daemons and a real
// redis-server.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <thread>

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

// A datagram socket standing in for systemd's NOTIFY_SOCKET. A thread reads
// every message as it comes: sd_notify blocks once the socket's queue is full
// (net.unix.max_dgram_qlen, 10 by default), which would stall the daemon.
class notify_listener {
 public:
  explicit notify_listener(std::filesystem::path path) : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    timeval tv{0, 200'000};  // bounds each read, so the destructor's join
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (bound_) reader_ = std::thread([this] { read_until_stopped(); });
  }
  ~notify_listener() {
    stop_ = true;
    if (reader_.joinable()) reader_.join();
    ::close(fd_);
  }
  notify_listener(const notify_listener&) = delete;
  notify_listener& operator=(const notify_listener&) = delete;

  bool bound() const { return bound_; }
  /// The environment that points a daemon here, with a watchdog of `usec`.
  env_list environment(const std::string& usec) const {
    return {{"NOTIFY_SOCKET", path_.string()}, {"WATCHDOG_USEC", usec}};
  }
  /// How many messages so far contain `needle`.
  int count(const std::string& needle) const {
    std::lock_guard lock(mutex_);
    return count_locked(needle);
  }
  /// Waits until `n` messages contain `needle`, for at most `timeout`.
  bool await(const std::string& needle, int n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return arrived_.wait_for(lock, timeout, [&] { return count_locked(needle) >= n; });
  }

 private:
  int count_locked(const std::string& needle) const {
    return static_cast<int>(std::count_if(messages_.begin(), messages_.end(), [&](const auto& m) {
      return m.find(needle) != std::string::npos;
    }));
  }
  void read_until_stopped() {
    while (!stop_) {
      char buf[512];
      auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) continue;
      {
        std::lock_guard lock(mutex_);
        messages_.emplace_back(buf, static_cast<std::size_t>(n));
      }
      arrived_.notify_all();
    }
  }

  std::filesystem::path path_;
  int fd_ = -1;
  bool bound_ = false;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<std::string> messages_;
  std::thread reader_;
};

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
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    EXPECT_EQ(http_request(pa, "GET", path).status, 200) << path;
    EXPECT_EQ(http_request(pb, "GET", path).status, 200) << path;
  }

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

// The value of the one sample of `series` (name and label block as the
// exposition writes it) in a /metrics body; nullopt when it is missing.
std::optional<double> metric_value(const std::string& body, const std::string& series) {
  const auto at = body.find("\n" + series + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::stod(body.substr(at + series.size() + 2));
}

// What the alert rules and the dashboard (monitoring/) read, from real
// daemons: the term's token and its leader on leader and standby alike, the
// probes, each renewal's share of the renew deadline, and a stop that ends
// in SIGKILL.
TEST_F(operate, metrics_name_the_term_its_leader_and_each_renewal) {
  auto& a = start_node(0, {"--ignore-term"},
                       {"--http-listen", "127.0.0.1:0", "--stop-timeout", "500ms"});
  ASSERT_TRUE(a.wait_for_log("HTTP on", 10s)) << logs();
  wait_for_single_worker();
  auto& b = start_node(1, {}, {"--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(b.wait_for_log("HTTP on", 10s)) << logs();
  ASSERT_TRUE(wait_for_status(1, [](const nlohmann::json& s) { return s["leader"] == "node-0"; }))
      << logs();
  const unsigned short pa = http_port_of(a);
  const unsigned short pb = http_port_of(b);
  auto scrape = [](unsigned short port) { return http_request(port, "GET", "/metrics").body; };
  // Renewals come every third of the ttl (2s): polled, no event says so.
  const std::string renewals = "baton_renewal_deadline_ratio_count";
  ASSERT_TRUE(wait_until([&] { return metric_value(scrape(pa), renewals).value_or(0) >= 2; }, 10s))
      << scrape(pa);

  auto status = socket_request(socket_of(0), R"({"cmd":"status"})", 2s);
  ASSERT_TRUE(status);
  const auto token = nlohmann::json::parse(*status)["token"].get<std::uint64_t>();
  ASSERT_GT(token, 0u);
  for (const auto port : {pa, pb}) {
    const auto body = scrape(port);
    EXPECT_EQ(metric_value(body, "baton_term_token"), static_cast<double>(token)) << body;
    EXPECT_EQ(metric_value(body, R"(baton_leader_info{node_id="node-0"})"), 1.0) << body;
    EXPECT_EQ(metric_value(body, "baton_live"), 1.0) << body;
    EXPECT_EQ(metric_value(body, "baton_ready"), 1.0) << body;
  }
  // renew_interval / renew_deadline is 0.5 with these timings; a renewal on
  // loopback adds little, and none may have come near the deadline.
  const auto body = scrape(pa);
  const double mean = metric_value(body, "baton_renewal_deadline_ratio_sum").value_or(0) /
                      metric_value(body, renewals).value_or(1);
  EXPECT_GT(mean, 0.3) << body;
  EXPECT_LT(mean, 0.75) << body;
  EXPECT_EQ(metric_value(body, R"(baton_renewal_deadline_ratio_bucket{le="0.3"})"), 0.0) << body;
  EXPECT_EQ(metric_value(body, R"(baton_app_failures_total{kind="killed"})"), 0.0) << body;

  // node-0's app ignores SIGTERM: the resign's stop ends in SIGKILL, and
  // node-1 leads a new term.
  EXPECT_EQ(run_client({"resign", "--socket", socket_of(0).string()}).code, 0);
  ASSERT_TRUE(wait_until(
      [&] { return metric_value(scrape(pb), R"(baton_leader_info{node_id="node-1"})") == 1.0; },
      15s))
      << logs();
  EXPECT_EQ(metric_value(scrape(pa), R"(baton_app_failures_total{kind="killed"})"), 1.0) << logs();
  for (const auto port : {pa, pb}) {
    ASSERT_TRUE(wait_until(
        [&] { return metric_value(scrape(port), "baton_term_token").value_or(0) > token; }, 10s))
        << scrape(port);
    EXPECT_EQ(scrape(port).find(R"(baton_leader_info{node_id="node-0"})"), std::string::npos)
        << "one leader series at a time";
  }
  expect_no_overlap();
}

// An app that cannot start and one that exits by itself are counted where
// they happened.
TEST_F(operate, metrics_count_apps_that_fail_to_start_or_exit) {
  auto& a = start_node(0, {"--exit-after-ms", "50", "--exit-code", "3"},
                       {"--http-listen", "127.0.0.1:0"});
  auto& b = start_node(1, {}, {"--http-listen", "127.0.0.1:0", "--on-start", R"(["/bin/false"])"});
  ASSERT_TRUE(a.wait_for_log("HTTP on", 10s)) << logs();
  ASSERT_TRUE(b.wait_for_log("HTTP on", 10s)) << logs();
  auto count = [](const baton_process& node, const char* kind) {
    const auto body = http_request(http_port_of(node), "GET", "/metrics").body;
    return metric_value(body, std::string("baton_app_failures_total{kind=\"") + kind + "\"}");
  };
  // They take turns at the lease, each backing off after its failure.
  EXPECT_TRUE(wait_until([&] { return count(a, "exited").value_or(0) >= 1; }, 20s)) << logs();
  EXPECT_TRUE(wait_until([&] { return count(b, "start_failed").value_or(0) >= 1; }, 20s)) << logs();
  EXPECT_EQ(count(a, "start_failed"), 0.0);
  EXPECT_EQ(count(b, "exited"), 0.0);
  EXPECT_EQ(count(a, "killed"), 0.0);
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
  notify_listener systemd(dir / "notify");
  ASSERT_TRUE(systemd.bound());

  auto args = base_args(0);
  args.insert(args.end(), {"--", test_worker_binary().string(), "--log", events.string(), "--name",
                           "node-0"});
  nodes.push_back(
      std::make_unique<baton_process>(args, systemd.environment("400000"), dir / "n0.log"));

  EXPECT_TRUE(systemd.await("READY=1", 1, 30s)) << logs();
  EXPECT_TRUE(systemd.await("STATUS=leader (working)", 1, 30s)) << logs();
  EXPECT_TRUE(systemd.await("WATCHDOG=1", 2, 30s)) << logs();
}

// A store outage makes every node not ready, and none of them not live: what
// liveness fails restarts the node (a livenessProbe, the image's
// HEALTHCHECK under an orchestrator, systemd's watchdog), and restarting every
// node at once cures nothing while the store is down. ttl 2s: readiness goes
// after one ttl of failing calls; the test then keeps asking for liveness
// until 3 × ttl after the outage began, the leader's app long stopped.
TEST_F(operate, a_store_outage_makes_nodes_not_ready_and_keeps_them_live) {
  notify_listener systemd(dir / "notify");
  ASSERT_TRUE(systemd.bound());
  auto leader_args = base_args(0);
  leader_args.insert(leader_args.end(),
                     {"--http-listen", "127.0.0.1:0", "--", test_worker_binary().string(), "--log",
                      events.string(), "--name", "node-0"});
  nodes.push_back(std::make_unique<baton_process>(leader_args, systemd.environment("400000"),
                                                  dir / "n0.log"));
  auto& a = *nodes.back();
  ASSERT_TRUE(a.wait_for_log("HTTP on", 10s)) << logs();
  wait_for_single_worker();
  auto& b = start_node(1, {}, {"--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(b.wait_for_log("HTTP on", 10s)) << logs();
  ASSERT_TRUE(wait_for_status(1, [](const nlohmann::json& s) { return s["leader"] == "node-0"; }))
      << logs();
  const std::vector<unsigned short> ports{http_port_of(a), http_port_of(b)};
  for (int i = 0; i < 2; ++i) {
    ASSERT_NE(ports[i], 0);
    EXPECT_EQ(http_request(ports[i], "GET", "/readyz").status, 200) << "node-" << i;
    EXPECT_EQ(run_client({"health", "--ready", "--socket", socket_of(i).string()}).code, 0);
  }

  const auto outage = std::chrono::steady_clock::now();
  redis->kill_and_wait();
  // Polled: readiness changes with time alone, and no event announces it.
  auto not_ready = [&](int i) { return http_request(ports[i], "GET", "/readyz").status == 503; };
  for (int round = 0; round < 400 && !(not_ready(0) && not_ready(1)); ++round) ::usleep(50'000);
  ASSERT_TRUE(not_ready(0) && not_ready(1)) << logs();
  EXPECT_GE(std::chrono::steady_clock::now() - outage, 2s) << "not ready before one ttl of failing";
  const auto readyz = http_request(ports[1], "GET", "/readyz");
  EXPECT_EQ(readyz.body.rfind("not ready: the store has not answered for ", 0), 0u) << readyz.body;
  // What the BatonStoreUnreachable alert reads (monitoring/baton-alerts.yaml).
  for (int i = 0; i < 2; ++i) {
    const auto metrics = http_request(ports[i], "GET", "/metrics").body;
    EXPECT_EQ(metric_value(metrics, "baton_ready"), 0.0) << metrics;
    EXPECT_EQ(metric_value(metrics, "baton_live"), 1.0) << metrics;
  }

  // The leader stopped its app at its renew deadline, and stays live.
  event_log log(events);
  EXPECT_TRUE(wait_for(log, [](const event_log& l) { return l.live_workers().empty(); }, 10s))
      << logs();
  int rounds = 0;
  while (std::chrono::steady_clock::now() - outage < 3 * 2s && rounds++ < 200) {
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(http_request(ports[i], "GET", "/healthz").status, 200) << "node-" << i;
      EXPECT_EQ(http_request(ports[i], "GET", "/livez").status, 200) << "node-" << i;
    }
    ::usleep(100'000);
  }
  for (int i = 0; i < 2; ++i) {
    auto live = run_client({"health", "--socket", socket_of(i).string()});
    EXPECT_EQ(live.code, 0) << live.output;
    auto ready = run_client({"health", "--ready", "--socket", socket_of(i).string()});
    EXPECT_EQ(ready.code, 1) << ready.output;
    EXPECT_NE(ready.output.find("baton: not ready: the store has not answered for "),
              std::string::npos)
        << ready.output;
  }
  EXPECT_TRUE(systemd.await("WATCHDOG=1", systemd.count("WATCHDOG=1") + 2, 10s))
      << "the watchdog goes on\n" << logs();

  // Ready again as soon as the store answers.
  redis->restart();
  auto ready = [&](int i) { return http_request(ports[i], "GET", "/readyz").status == 200; };
  for (int round = 0; round < 400 && !(ready(0) && ready(1)); ++round) ::usleep(50'000);
  EXPECT_TRUE(ready(0) && ready(1)) << logs();
  for (auto& node : nodes) EXPECT_FALSE(node->exited()) << logs();
  expect_no_overlap();
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
