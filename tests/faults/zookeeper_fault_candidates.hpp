// The ZooKeeper store's fault tests' candidates (zookeeper_faults_test.cpp,
// zookeeper_ensemble_faults_test.cpp): each acts as the election machine
// does (acquire when not leading; renew every ttl/3 while leading; stop at
// the send time of the last acknowledged acquire or renewal + ttl, or at a
// lost answer), all on one loop, and records its terms, so that a case can
// check that no two overlap and that tokens only rise.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "support/fault_proxy.hpp"
#include "support/free_port.hpp"
#include "support/servers/zookeeper_server.hpp"
#include "zookeeper/zk_link.hpp"
#include "zookeeper/zookeeper_store.hpp"

namespace baton::zookeeper_faults_test {

namespace asio = boost::asio;
using namespace std::chrono_literals;

inline constexpr milliseconds ttl{2000};
inline constexpr milliseconds tick{50};

struct term {
  std::string who;
  std::uint64_t token = 0;
  time_point began{};  // when the acquire's answer arrived
  time_point ended{};  // when it stopped: lost, or its lease ran out
};

// One candidate acting as the machine would, on the shared loop.
class candidate {
 public:
  candidate(asio::io_context& io, std::string name, std::unique_ptr<lease_store> store,
            std::vector<term>& terms)
      : io_(io), name_(std::move(name)), store_(std::move(store)), timer_(io), terms_(terms) {}

  void start() { schedule(); }
  // Gone without a release or a close: its process died.
  void vanish() {
    if (leading_) end(std::min(mono_clock::now(), valid_until_));
    stopped_ = true;
    timer_.cancel();
    store_.reset();
  }
  // A switchover: at its next step, while leading and no call is in flight,
  // it stops leading (as the machine stops its app first) and hands the
  // lease over to `to`; then it goes on as a standby.
  void hand_over(std::string to, milliseconds window) {
    hand_over_to_ = std::move(to);
    hand_over_window_ = window;
  }
  bool leading() const { return leading_; }
  const std::string& name() const { return name_; }
  std::vector<release_answer> handed_over;
  lease_store& store() { return *store_; }
  std::vector<acquire_answer> answers;
  std::vector<std::string> errors;
  int lost = 0;

 private:
  void schedule() {
    if (stopped_) return;
    timer_.expires_after(tick);
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || stopped_) return;
      step();
      schedule();
    });
  }

  void step() {
    const auto now = mono_clock::now();
    if (leading_ && now >= valid_until_) end(valid_until_);
    if (busy_) return;
    if (leading_ && !hand_over_to_.empty()) return step_down();
    if (leading_) {
      if (now - last_sent_ >= ttl / 3) renew();
      return;
    }
    acquire();
  }

  void acquire() {
    busy_ = true;
    const auto sent = mono_clock::now();
    store_->async_acquire([this, sent](store_error e, acquire_answer a) {
      busy_ = false;
      if (e) return errors.push_back(e.message());
      answers.push_back(a);
      if (!a.acquired()) return;
      leading_ = true;
      last_sent_ = sent;
      valid_until_ = sent + ttl;
      terms_.push_back({name_, a.token, mono_clock::now(), {}});
      current_ = terms_.size() - 1;
    });
  }

  void renew() {
    busy_ = true;
    const auto sent = mono_clock::now();
    last_sent_ = sent;
    store_->async_renew([this, sent](store_error e, renew_answer a) {
      busy_ = false;
      if (e) return errors.push_back(e.message());
      if (!leading_) return;
      if (a == renew_answer::lost) {
        ++lost;
        end(std::min(mono_clock::now(), valid_until_));
        return;
      }
      valid_until_ = sent + ttl;
    });
  }

  void step_down() {
    end(mono_clock::now());
    busy_ = true;
    store_->async_hand_over(std::exchange(hand_over_to_, {}), hand_over_window_,
                            [this](store_error e, release_answer a) {
                              busy_ = false;
                              if (e) return errors.push_back(e.message());
                              handed_over.push_back(a);
                            });
  }

  void end(time_point at) {
    if (!leading_) return;
    leading_ = false;
    terms_[current_].ended = at;
  }

  asio::io_context& io_;
  std::string name_;
  std::unique_ptr<lease_store> store_;
  asio::steady_timer timer_;
  std::vector<term>& terms_;
  bool busy_ = false;
  bool leading_ = false;
  bool stopped_ = false;
  time_point last_sent_{};
  time_point valid_until_{};
  std::size_t current_ = 0;
  std::string hand_over_to_;
  milliseconds hand_over_window_{0};
};

class candidates_on_one_loop : public ::testing::Test {
 protected:
  virtual std::string servers() const = 0;
  zookeeper_store_options options(const std::string& node) {
    zookeeper_store_options o;
    o.servers = servers();
    o.identity = {"faults", node, ttl};
    o.connect_timeout = 1500ms;
    o.command_timeout = 1000ms;
    return o;
  }
  candidate& add(const std::string& node) { return add(options(node)); }
  candidate& add(const zookeeper_store_options& o) {
    all.push_back(std::make_unique<candidate>(io, o.identity.node_id,
                                              std::make_unique<zookeeper_store>(io, o), terms));
    all.back()->start();
    return *all.back();
  }
  candidate& add(const std::string& node, int priority) {
    auto o = options(node);
    o.identity.priority = priority;
    return add(o);
  }
  // The store's candidates, by node id.
  std::vector<candidate_info> list(lease_store& store) {
    std::vector<candidate_info> out;
    bool done = false;
    store.async_candidates([&](store_error e, std::vector<candidate_info> c) {
      EXPECT_FALSE(e) << e.message();
      out = std::move(c);
      done = true;
    });
    EXPECT_TRUE(run_until([&] { return done; }, 10s));
    std::sort(out.begin(), out.end(),
              [](const candidate_info& x, const candidate_info& y) { return x.node < y.node; });
    return out;
  }
  // Runs the loop until `done` or `within` passes.
  bool run_until(const std::function<bool()>& done, milliseconds within) {
    const auto deadline = mono_clock::now() + within;
    while (!done()) {
      if (mono_clock::now() >= deadline) return false;
      // Out of work for a while (every candidate gone) stops the loop.
      if (io.stopped()) io.restart();
      io.run_one_for(std::chrono::milliseconds(20));
    }
    return true;
  }
  void run_for(milliseconds d) {
    run_until([] { return false; }, d);
  }
  bool anyone_leads() const {
    for (const auto& c : all)
      if (c->leading()) return true;
    return false;
  }
  candidate* leader() const {
    for (const auto& c : all)
      if (c->leading()) return c.get();
    return nullptr;
  }

  // No two terms overlap (a term still running ends now), tokens rise.
  void expect_no_overlap() {
    const auto now = mono_clock::now();
    for (std::size_t i = 1; i < terms.size(); ++i) {
      const auto prev_end = terms[i - 1].ended == time_point{} ? now : terms[i - 1].ended;
      EXPECT_GE(terms[i].began, prev_end)
          << terms[i].who << " began "
          << std::chrono::duration_cast<milliseconds>(prev_end - terms[i].began).count()
          << " ms before " << terms[i - 1].who << "'s term ended";
      EXPECT_GT(terms[i].token, terms[i - 1].token) << "term " << i;
    }
  }
  static std::string describe(const candidate& c) {
    std::string out = c.name() + ":";
    for (const auto& a : c.answers) {
      out += " [" + std::to_string(static_cast<int>(a.outcome)) + " " + a.holder + " " +
             std::to_string(a.remaining.count()) + "ms " + a.why +
             (a.outranked_by > 0 ? " outranked by " + std::to_string(a.outranked_by) : "") + "]";
    }
    for (const auto& e : c.errors) out += " error: " + e;
    return out;
  }
  void report(const char* what, milliseconds figure) {
    std::printf("[ figure ] %s: %lld ms\n", what, static_cast<long long>(figure.count()));
  }

  asio::io_context io;
  std::vector<term> terms;
  std::vector<std::unique_ptr<candidate>> all;
};

}  // namespace baton::zookeeper_faults_test
