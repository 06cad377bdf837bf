// What the memory store offers beyond the contract (tests/contract/): its
// error category, the latency that keeps a call in flight, the watch going
// down and up with the backend, and the backend's view for tests.
#include "support/fakes/memory_lease_store.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <stdexcept>
#include <system_error>
#include <variant>
#include <vector>

namespace {

using baton::acquire_answer;
using baton::milliseconds;
using baton::store_errc;
using baton::store_error;
using baton::store_identity;
using baton::testing::memory_errc;
using baton::testing::memory_lease_backend;
using baton::testing::memory_lease_store;
using namespace std::chrono_literals;

TEST(memory_lease_store_test, unavailable_is_the_store_neutral_unavailable) {
  std::error_code ec = memory_errc::unavailable;
  EXPECT_EQ(ec, store_errc::unavailable);
  EXPECT_NE(ec, store_errc::timeout);
  EXPECT_STREQ(baton::store_error_kind(ec), "unavailable");
  EXPECT_STREQ(ec.category().name(), "baton.memory");
}

TEST(memory_lease_store_test, a_bad_identity_is_rejected) {
  boost::asio::io_context io;
  memory_lease_backend backend;
  EXPECT_THROW(memory_lease_store(io, backend, store_identity{"", "a", 1s}), std::invalid_argument);
  EXPECT_THROW(memory_lease_store(io, backend, store_identity{"jobs", "", 1s}),
               std::invalid_argument);
  EXPECT_THROW(memory_lease_store(io, backend, store_identity{"jobs", "a", 0ms}),
               std::invalid_argument);
}

TEST(memory_lease_store_test, latency_keeps_a_call_in_flight_and_applies_it_after) {
  boost::asio::io_context io;
  memory_lease_backend backend(50ms);
  memory_lease_store a(io, backend, {"jobs", "node-a", 2s});
  int calls = 0;
  a.async_acquire([&](store_error e, acquire_answer r) {
    ++calls;
    EXPECT_FALSE(e);
    EXPECT_TRUE(r.acquired());
  });
  EXPECT_EQ(a.in_flight(), 1u);
  io.run_for(10ms);
  EXPECT_EQ(calls, 0) << "completed before its latency";
  EXPECT_EQ(backend.view("jobs").holder, "") << "applied before its latency";
  io.restart();
  io.run();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(a.in_flight(), 0u);
  const auto v = backend.view("jobs");
  EXPECT_EQ(v.holder, "node-a");
  EXPECT_EQ(v.token, 1u);
  EXPECT_EQ(v.counter, 1u);
  EXPECT_GT(v.remaining, 1s);

  backend.expire("jobs");
  EXPECT_EQ(backend.view("jobs").holder, "");
}

TEST(memory_lease_store_test, unavailable_fails_calls_and_takes_the_watch_down_and_up) {
  boost::asio::io_context io;
  memory_lease_backend backend;
  memory_lease_store a(io, backend, {"jobs", "node-a", 2s});
  std::vector<std::string> heard;
  a.watch([&](const baton::store_event& e) {
    if (const auto* w = std::get_if<baton::store_events::wakeups>(&e))
      heard.push_back(w->trusted ? "trusted" : "untrusted");
    if (std::holds_alternative<baton::store_events::released>(e)) heard.push_back("released");
  });
  io.run();
  ASSERT_EQ(heard, std::vector<std::string>{"trusted"});

  backend.set_unavailable(true);
  store_error error;
  a.async_acquire([&](store_error e, acquire_answer) { error = std::move(e); });
  io.restart();
  io.run();
  EXPECT_EQ(error.code, memory_errc::unavailable);
  EXPECT_EQ(a.status().link, baton::link_state::disconnected);
  EXPECT_EQ(a.status().wakeups, baton::wakeup_state::disconnected);
  EXPECT_EQ(a.status().last_error_kind, "unavailable");
  EXPECT_EQ(backend.view("jobs").holder, "") << "a failed call changed the lease";

  backend.set_unavailable(false);
  io.restart();
  io.run();
  EXPECT_EQ(heard, (std::vector<std::string>{"trusted", "untrusted", "trusted", "released"}));
  EXPECT_EQ(a.status().link, baton::link_state::connected);
  EXPECT_EQ(a.status().last_error_kind, "unavailable") << "kept after recovery";
}

TEST(memory_lease_store_test, reset_fences_for_the_longest_ttl_unless_told) {
  boost::asio::io_context io;
  memory_lease_backend backend;
  memory_lease_store a(io, backend, {"jobs", "node-a", 1s});
  memory_lease_store b(io, backend, {"jobs", "node-b", 3s});
  backend.reset("test");
  EXPECT_GT(backend.view("jobs").hold_back, 2500ms);
  EXPECT_EQ(a.status().last_reset, "test");
  // Only ever lengthened.
  backend.reset("shorter", 100ms);
  EXPECT_GT(backend.view("jobs").hold_back, 2500ms);
  backend.reset("longer", 10s);
  EXPECT_GT(backend.view("jobs").hold_back, 9s);
}

}  // namespace
