// A small cluster for integration tests: one real redis-server on a free
// loopback port, and baton candidates, each supervising a test_worker that logs
// start/tick/stop lines to one shared event log. Tests judge safety from that
// log (what the apps did), not from what the daemons report.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/baton_process.hpp"
#include "support/event_log.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::testing {

using namespace std::chrono_literals;

class daemon_fixture : public ::testing::Test {
 protected:
  temp_dir dir{"baton-it-"};
  std::unique_ptr<redis_server> redis = std::make_unique<redis_server>();
  std::filesystem::path events = dir / "events.log";
  std::vector<std::unique_ptr<baton_process>> nodes;

  /// Every test's election has run before, as a long-lived Redis would have
  /// it: its fencing counter exists, so the first election is not held back
  /// for a ttl the way it is on a Redis that lost its data (the acquire script
  /// in src/redis/acquire_script.cpp fences when the counter is missing). Seeded now,
  /// before any node can start, whichever way the test starts its nodes;
  /// restarting the redis-server empties it again. Tests about that hold-back
  /// are left a fresh Redis: see is_a_hold_back_test().
  daemon_fixture() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    if (!is_a_hold_back_test(test->test_suite_name(), test->name())) {
      redis->command({"SET", token_counter_key(), "1000"});
    }
  }

  ~daemon_fixture() override {
    nodes.clear();  // SIGKILLs each daemon's process group
    kill_leftover_workers(event_log::read(events));
  }

  std::string election() const {
    return ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  std::filesystem::path socket_of(int index) const {
    return dir / ("n" + std::to_string(index) + ".sock");
  }

  /// Baton flags shared by every candidate: a short ttl keeps tests quick.
  std::vector<std::string> base_args(int index) const {
    return {"run",
            "--election", election(),
            "--node-id", "node-" + std::to_string(index),
            "--redis-url", redis->url(),
            "--ttl", "2s",
            "--stop-timeout", "3s",
            "--socket", socket_of(index).string(),
            "--log-level", "debug"};
  }

  /// Start candidate `index`, supervising a test_worker with `worker_args`.
  baton_process& start_node(int index, std::vector<std::string> worker_args = {},
                            std::vector<std::string> extra_args = {}) {
    auto args = base_args(index);
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    args.insert(args.end(), {"--", test_worker_binary().string(), "--log", events.string(),
                             "--name", "node-" + std::to_string(index)});
    args.insert(args.end(), worker_args.begin(), worker_args.end());
    nodes.push_back(std::make_unique<baton_process>(
        args, env_list{}, dir / ("n" + std::to_string(index) + ".log")));
    return *nodes.back();
  }

  /// Wait until exactly one worker runs; returns it.
  interval wait_for_single_worker(std::chrono::milliseconds timeout = 15s) {
    event_log log(events);
    std::optional<interval> current;
    bool ok = wait_for(
        log,
        [&](const event_log& l) {
          auto live = l.live_workers();
          if (live.size() != 1 || live[0].ticks == 0) return false;
          current = live[0];
          return true;
        },
        timeout);
    EXPECT_TRUE(ok) << "no single working app within " << timeout.count() << "ms\n"
                    << logs();
    return current.value_or(interval{});
  }

  /// Index of the node whose worker is `w`.
  int index_of(const interval& w) const { return std::stoi(w.name.substr(5)); }

  void expect_no_overlap() {
    auto log = event_log::read(events);
    EXPECT_TRUE(log.bad_lines().empty());
    EXPECT_TRUE(log.overlaps().empty()) << to_string(log.overlaps());
  }

  std::string logs() const {
    std::string all;
    for (const auto& n : nodes) all += "---- " + n->log_path().string() + "\n" + n->log_text();
    return all;
  }

  struct client_outcome {
    int code;
    std::string output;  ///< stdout and stderr together
  };

  /// Runs the client `baton args...` (status, health, ...) to completion.
  client_outcome run_client(std::vector<std::string> args,
                            std::chrono::milliseconds timeout = 20s) {
    auto log = dir / ("client-" + std::to_string(++clients_) + ".log");
    baton_process client(std::move(args), env_list{}, log);
    auto code = client.wait_exit(timeout);
    EXPECT_TRUE(code) << "the client did not exit within " << timeout.count() << "ms";
    return {code.value_or(-1), client.log_text()};
  }

  /// The opt-out from the seeded counter, for the tests of the hold-back
  /// after data loss (safety_reset_test.cpp): the first start on an empty
  /// Redis is itself such a hold-back, and the restart test relies on it to
  /// have every candidate connected to the old server before the restart
  /// (seeded, the leader starts at once and Redis may restart before the
  /// standby ever reached it, which then sees no run_id change). Matched by
  /// name, so a renamed one gets seeded (and its assertions then fail).
  static bool is_a_hold_back_test(std::string_view suite, std::string_view name) {
    return suite == "daemon_fixture" &&
           (name == "first_start_on_an_empty_redis_is_held_back_one_ttl" ||
            name == "redis_restarted_empty_holds_the_standbys_back_one_ttl");
  }

  /// The election's fencing counter.
  std::string token_counter_key() const { return "baton:{" + election() + "}:token"; }

  /// Milliseconds to live of the lease key, read from Redis.
  long long lease_pttl() const {
    auto reply = redis->command({"PTTL", "baton:{" + election() + "}:lease"});
    return reply.empty() ? -3 : std::stoll(reply[0]);
  }

 private:
  int clients_ = 0;  // names each client's log file
};

/// A client connection that sent {"cmd":"subscribe"} and reads lines.
class line_stream {
 public:
  explicit line_stream(const std::filesystem::path& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
    const char request[] = "{\"cmd\":\"subscribe\"}\n";
    if (::write(fd_, request, sizeof(request) - 1) != static_cast<ssize_t>(sizeof(request) - 1)) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~line_stream() {
    if (fd_ >= 0) ::close(fd_);
  }
  line_stream(const line_stream&) = delete;
  line_stream& operator=(const line_stream&) = delete;

  bool valid() const { return fd_ >= 0; }

  /// The next line, or nullopt after `timeout` or at end of stream.
  std::optional<std::string> next_line(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (int reads = 0; reads < 100000; ++reads) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        auto line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char chunk[4096];
      auto n = ::read(fd_, chunk, sizeof(chunk));
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
    return std::nullopt;
  }

 private:
  int fd_ = -1;
  std::string buffer_;
};

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace baton::testing
