#include "failsafe_checks.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "scenario.hpp"
#include "support/free_port.hpp"

namespace baton::testing {

std::chrono::seconds failsafe_outage(std::chrono::seconds fallback) {
  if (const char* s = std::getenv("BATON_FAILSAFE_OUTAGE_S"); s && *s) {
    const long value = std::strtol(s, nullptr, 10);
    if (value > 0 && value <= 600) return std::chrono::seconds(value);
  }
  return fallback;
}

failsafe_peer_ports::failsafe_peer_ports(fault_cluster& c) : secret_(c.dir() / "peer.secret") {
  std::ofstream(secret_) << "failsafe-test-secret-0123456789abcdef\n";
}

unsigned short failsafe_peer_ports::port(int index) {
  if (!ports_.count(index)) ports_[index] = free_loopback_port();
  return ports_[index];
}

std::vector<std::string> failsafe_peer_ports::flags(int index) {
  return {"--failsafe",
          "peers",
          "--failsafe-secret-file",
          secret_.string(),
          "--failsafe-listen",
          "127.0.0.1:" + std::to_string(port(index))};
}

bool record_lists_the_standbys(int leader, const std::function<std::string()>& read,
                               const std::function<std::string(const std::string&)>& names,
                               std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (int i = 0; i < 1000 && std::chrono::steady_clock::now() < until; ++i) {
    const auto record = read();
    int listed = 0;
    for (int n = 1; n <= 3; ++n) {
      if (n != leader && record.find(names(fault_cluster::name_of(n))) != std::string::npos) {
        ++listed;
      }
    }
    if (listed == 2) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

bool standby_sees(fault_cluster& c, int n, const std::string& leader,
                  std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (int i = 0; i < 1000 && std::chrono::steady_clock::now() < until; ++i) {
    if (auto s = c.status(n, 1s)) {
      if ((*s)["leader"] == leader && !s->contains("held_back_why")) return true;
    }
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

void expect_on_confirmations(fault_cluster& c, int l) {
  const auto mid = c.status(l);
  ASSERT_TRUE(mid) << c.logs();
  EXPECT_TRUE((*mid)["is_leader"].get<bool>()) << mid->dump();
  EXPECT_TRUE((*mid)["failsafe"]["on_confirmations"].get<bool>()) << mid->dump();
  EXPECT_EQ((*mid)["failsafe"]["round_asked"], 2) << mid->dump();
  EXPECT_TRUE((*mid)["healthy"].get<bool>()) << "a leader on confirmations is not wedged";
}

void expect_same_app_throughout(fault_cluster& c, int l, const interval& leader,
                                std::uint64_t token, std::chrono::milliseconds see) {
  event_log log(c.events());
  log.refresh();
  const auto before = interval_of(log, leader.pid);
  ASSERT_TRUE(before);
  // Still the same app, ticking on after the outage.
  ASSERT_TRUE(wait_for(
      log,
      [&](const event_log& x) {
        auto now = interval_of(x, leader.pid);
        return now && now->ticks > before->ticks + 5;
      },
      5s))
      << c.logs();
  EXPECT_EQ(log.start_count(), 1u) << "another app started\n" << c.logs();
  const auto live = log.live_workers();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].pid, leader.pid);
  EXPECT_EQ(token_value(live[0]), token) << "the app kept its BATON_TOKEN";
  for (int n = 1; n <= 3; ++n) {
    if (n == l) continue;
    EXPECT_TRUE(standby_sees(c, n, fault_cluster::name_of(l), see)) << c.log_of(n);
  }
  log.refresh();
  EXPECT_EQ(log.start_count(), 1u) << "another app started\n" << c.logs();
}

void expect_held_on_confirmations(fault_cluster& c, int l, std::int64_t inject,
                                  std::chrono::milliseconds held) {
  for (int n = 1; n <= 3; ++n) {
    if (n == l) continue;
    EXPECT_TRUE(c.node(n).wait_for_log("failsafe hold", held)) << c.log_of(n);
  }
  hold_fault_until(inject + std::chrono::nanoseconds(held).count());
  const auto cut = c.status(l);
  ASSERT_TRUE(cut);
  EXPECT_TRUE((*cut)["is_leader"].get<bool>()) << cut->dump();
  EXPECT_TRUE((*cut)["failsafe"]["on_confirmations"].get<bool>()) << cut->dump();
}

void expect_resumed_alone(fault_cluster& c, int l, const interval& leader, std::uint64_t token) {
  ASSERT_TRUE(c.node(l).wait_for_log("resumed term " + std::to_string(token), 10s)) << c.logs();
  event_log log(c.events());
  log.refresh();
  EXPECT_EQ(log.start_count(), 1u) << "a standby started while the leader ran\n" << c.logs();
  const auto live = log.live_workers();
  ASSERT_EQ(live.size(), 1u) << c.logs();
  EXPECT_EQ(live[0].pid, leader.pid);
}

void print_failsafe_lines(fault_cluster& c, int l) {
  std::istringstream text(c.log_of(l));
  for (std::string line; std::getline(text, line);) {
    if (line.find("cannot be reached") != std::string::npos ||
        line.find("peer confirmations") != std::string::npos ||
        line.find("resumed term") != std::string::npos ||
        line.find("resuming term") != std::string::npos) {
      std::printf("  %s\n", line.c_str());
    }
  }
}

}  // namespace baton::testing
