// The scripted fake store itself: calls wait for the test's answers, in
// order and never inline; a call the test did not allow fails the test;
// close() aborts what is pending once; events reach the watcher by post.
#include "support/fakes/scripted_lease_store.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

namespace {

namespace answers = baton::testing::answers;
using baton::acquire_answer;
using baton::release_answer;
using baton::renew_answer;
using baton::store_error;
using baton::testing::scripted_lease_store;
using namespace std::chrono_literals;

TEST(scripted_lease_store_test, answers_reach_the_oldest_call_later_never_inline) {
  boost::asio::io_context io;
  scripted_lease_store store(io);
  store.expect_acquire(2);
  std::vector<std::string> seen;
  store.async_acquire([&](store_error e, acquire_answer a) {
    EXPECT_FALSE(e);
    seen.push_back("first " + std::to_string(a.token));
  });
  store.async_acquire([&](store_error, acquire_answer a) {
    seen.push_back("second " + a.holder);
  });
  EXPECT_EQ(store.acquire_calls(), 2);
  EXPECT_EQ(store.pending_acquires(), 2u);

  store.answer_acquire(answers::acquired(7));
  store.answer_acquire(answers::held("node-b", 7, 900ms));
  EXPECT_TRUE(seen.empty()) << "answered inline";
  EXPECT_EQ(store.pending_acquires(), 0u);
  io.run();
  EXPECT_EQ(seen, (std::vector<std::string>{"first 7", "second node-b"}));
  store.verify_expectations();
}

TEST(scripted_lease_store_test, a_call_not_allowed_fails_the_test_naming_it) {
  boost::asio::io_context io;
  scripted_lease_store store(io);
  store.expect_renew();
  store.async_renew([](store_error, renew_answer) {});
  EXPECT_NONFATAL_FAILURE(store.async_release([](store_error, release_answer) {}),
                          "unexpected async_release");
  EXPECT_NONFATAL_FAILURE(store.async_renew([](store_error, renew_answer) {}),
                          "unexpected async_renew");
  EXPECT_EQ(store.calls(), (std::vector<std::string>{"renew", "release", "renew"}));
  // allow_any lets everything through.
  store.allow_any();
  store.async_acquire([](store_error, acquire_answer) {});
  EXPECT_EQ(store.acquire_calls(), 1);
  // Expected calls never made are reported too.
  store.expect_acquire();
  EXPECT_NONFATAL_FAILURE(store.verify_expectations(), "expected acquire(s) not made");
  // The refused release is still held: it can be answered, once.
  EXPECT_EQ(store.pending_releases(), 1u);
  store.answer_release(release_answer::released);
  EXPECT_NONFATAL_FAILURE(store.answer_release(release_answer::released), "no release pending");
}

TEST(scripted_lease_store_test, close_aborts_pending_calls_once_and_later_calls_too) {
  boost::asio::io_context io;
  scripted_lease_store store(io);
  store.allow_any();
  int aborted = 0;
  int other = 0;
  auto count = [&](const store_error& e) {
    if (e.code == std::errc::operation_canceled) {
      ++aborted;
    } else {
      ++other;
    }
  };
  store.async_acquire([&](store_error e, acquire_answer) { count(e); });
  store.async_renew([&](store_error e, renew_answer) { count(e); });
  store.async_release([&](store_error e, release_answer) { count(e); });
  store.close();
  store.close();
  EXPECT_EQ(aborted, 0) << "aborted inline";
  store.async_acquire([&](store_error e, acquire_answer) { count(e); });
  io.run();
  EXPECT_EQ(aborted, 4);
  EXPECT_EQ(other, 0);
  EXPECT_EQ(store.close_calls(), 2);
  EXPECT_EQ(store.pending_acquires() + store.pending_renews() + store.pending_releases(), 0u);
}

TEST(scripted_lease_store_test, events_reach_the_watcher_by_post_until_closed) {
  boost::asio::io_context io;
  scripted_lease_store store(io);
  std::vector<std::uint64_t> terms;
  store.watch([&](const baton::store_event& e) {
    if (const auto* t = std::get_if<baton::store_events::acquired>(&e)) terms.push_back(t->token);
  });
  EXPECT_TRUE(store.watching());
  store.emit(baton::store_events::acquired{"node-b", 3});
  EXPECT_TRUE(terms.empty()) << "delivered inline";
  io.run();
  EXPECT_EQ(terms, std::vector<std::uint64_t>{3});

  store.emit(baton::store_events::acquired{"node-b", 4});
  store.close();
  io.restart();
  io.run();
  EXPECT_EQ(terms, std::vector<std::uint64_t>{3}) << "an event after close";
}

TEST(scripted_lease_store_test, emit_without_a_watcher_fails_the_test) {
  boost::asio::io_context io;
  scripted_lease_store store(io);
  EXPECT_NONFATAL_FAILURE(store.emit(baton::store_events::released{}), "nobody watches");
}

TEST(scripted_lease_store_test, a_destroyed_store_never_calls_back) {
  boost::asio::io_context io;
  int calls = 0;
  {
    scripted_lease_store store(io);
    store.allow_any();
    store.async_renew([&](store_error, renew_answer) { ++calls; });
    store.answer_renew(renew_answer::renewed);
  }
  io.run();
  EXPECT_EQ(calls, 0);
}

TEST(scripted_lease_store_test, status_and_identity_are_what_the_test_set) {
  boost::asio::io_context io;
  scripted_lease_store store(io, {"web", "node-c", 1500ms});
  EXPECT_EQ(store.identity().election, "web");
  EXPECT_EQ(store.identity().node_id, "node-c");
  EXPECT_EQ(store.identity().ttl, 1500ms);
  EXPECT_EQ(store.status().kind, "scripted");
  baton::store_status s;
  s.kind = "redis";
  s.link = baton::link_state::disconnected;
  store.set_status(s);
  EXPECT_EQ(store.status().kind, "redis");
  EXPECT_EQ(store.status().link, baton::link_state::disconnected);
}

}  // namespace
