// The etcd store's fault tests' fixture (etcd_faults_test.cpp,
// etcd_raft_faults_test.cpp, etcd_connection_faults_test.cpp): one etcd
// member per test, stores on one loop, the calls run to their answer, the
// events a store reports, and the figures a run prints for docs/safety.md.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "etcd/etcd_store.hpp"
#include "support/fault_proxy.hpp"
#include "support/servers/etcd_server.hpp"

namespace baton::testing::etcd_fault_fixture {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

inline constexpr const char* election = "faults";

inline long long ms_since(clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - t).count();
}

// A measured figure, for docs/safety.md ("etcd"): one line a run.
#define FIGURE(...) std::printf("[figure] " __VA_ARGS__), std::printf("\n"), std::fflush(stdout)

inline bool run_until(asio::io_context& io, const std::function<bool()>& done,
                      std::chrono::milliseconds within = 15s) {
  const auto deadline = clock::now() + within;
  while (!done()) {
    const auto now = clock::now();
    if (now >= deadline) return false;
    if (io.stopped()) io.restart();
    io.run_one_for(std::min<clock::duration>(deadline - now, 50ms));
  }
  return true;
}

inline void pass(asio::io_context& io, std::chrono::milliseconds d) {
  asio::steady_timer t(io, d);
  bool fired = false;
  t.async_wait([&](const boost::system::error_code&) { fired = true; });
  run_until(
      io, [&] { return fired; }, d + 5s);
}

template <typename T>
struct result {
  bool done = false;
  store_error error;
  T value{};
};

template <typename T, typename Start>
result<T> call(asio::io_context& io, Start start) {
  auto r = std::make_shared<result<T>>();
  start([r](store_error e, T v) {
    r->done = true;
    r->error = std::move(e);
    r->value = std::move(v);
  });
  EXPECT_TRUE(run_until(io, [&] { return r->done; })) << "a call never completed";
  return *r;
}

inline result<acquire_answer> acquire(asio::io_context& io, lease_store& s) {
  return call<acquire_answer>(io, [&](auto h) { s.async_acquire(h); });
}
inline result<renew_answer> renew(asio::io_context& io, lease_store& s) {
  return call<renew_answer>(io, [&](auto h) { s.async_renew(h); });
}

struct heard {
  int released = 0;
  std::vector<std::uint64_t> terms;
  std::vector<bool> wakeups;
  std::vector<std::string> resets;
  std::vector<std::string> notes;
  bool noted(const std::string& part) const {
    return std::any_of(notes.begin(), notes.end(),
                       [&](const std::string& n) { return n.find(part) != std::string::npos; });
  }
  bool trusted() const { return !wakeups.empty() && wakeups.back(); }
};

inline std::shared_ptr<heard> watch(lease_store& s) {
  auto h = std::make_shared<heard>();
  s.watch([h](const store_event& e) {
    if (std::holds_alternative<store_events::released>(e)) ++h->released;
    if (const auto* t = std::get_if<store_events::acquired>(&e)) h->terms.push_back(t->token);
    if (const auto* w = std::get_if<store_events::wakeups>(&e)) h->wakeups.push_back(w->trusted);
    if (const auto* r = std::get_if<store_events::reset>(&e)) h->resets.push_back(r->why);
    if (const auto* n = std::get_if<store_events::note>(&e)) h->notes.push_back(n->text);
  });
  return h;
}

class etcd_faults : public ::testing::Test {
 protected:
  void SetUp() override {
    auto init = store("init", 1000ms);
    auto r = call<record_answer>(io_, [&](auto h) { init->async_create_record(h); });
    ASSERT_FALSE(r.error) << r.error.message();
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "etcd log:\n" << etcd_.log_tail();
  }

  std::unique_ptr<etcd_store> store(const std::string& node, std::chrono::milliseconds ttl,
                                    const std::string& url = "",
                                    std::chrono::milliseconds command_timeout = 500ms,
                                    std::chrono::milliseconds ping_interval = 300ms) {
    etcd_store_options o;
    o.endpoints = {url.empty() ? etcd_.client_url() : url};
    o.identity = {election, node, ttl};
    o.connect_timeout = std::max(500ms, command_timeout);
    o.command_timeout = command_timeout;
    o.watch_ping_interval = ping_interval;
    o.rewatch_backoff_max = 500ms;
    return std::make_unique<etcd_store>(io_, std::move(o));
  }

  // `holder` acquires while another store watches (what it heard is
  // `watcher_heard`): the first term, once the watcher heard it.
  acquire_answer lead_watched(lease_store& holder, const heard& watcher_heard) {
    EXPECT_TRUE(run_until(io_, [&] { return watcher_heard.trusted(); }));
    const auto first = acquire(io_, holder);
    EXPECT_TRUE(first.value.acquired()) << first.error.message();
    EXPECT_TRUE(run_until(io_, [&] { return watcher_heard.terms.size() == 1; }));
    return first.value;
  }

  // A raft leader change: the one member restarted (its raft term goes up),
  // then `holder`'s term renewed across it.
  void change_raft_leader_under(lease_store& holder) {
    etcd_.stop(false);
    etcd_.start();
    bool renewed = false;
    for (int tries = 0; tries < 20 && !renewed; ++tries) {
      const auto r = renew(io_, holder);
      renewed = !r.error && r.value == renew_answer::renewed;
      if (!renewed) pass(io_, 100ms);
    }
    EXPECT_TRUE(renewed) << "the holder's term did not outlive the restart";
  }

  etcd_server etcd_;
  asio::io_context io_;
};

}  // namespace baton::testing::etcd_fault_fixture
