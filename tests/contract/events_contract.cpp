// The lease-store contract, continued: the events a store reports (wake-ups,
// releases, new terms), the rules of completion (never inline, exactly once,
// nothing after close or destruction), and failures.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "contract_calls.hpp"
#include "lease_store_contract.hpp"

namespace baton::contract {
namespace {

namespace asio = boost::asio;

// --- events ----------------------------------------------------------------------

TEST_P(lease_store_contract, watch_reports_trusted_wakeups_once_subscribed) {
  auto a = harness().make_store("node-a", ttl);
  EXPECT_EQ(a->status().wakeups, wakeup_state::off);
  auto heard = watch(*a);
  EXPECT_EQ(heard->events, 0) << "an event ran inline in watch()";
  ASSERT_TRUE(run_until(harness().io(), [&] { return !heard->wakeups.empty(); }))
      << "no wakeups event; wakeups " << to_string(a->status().wakeups);
  EXPECT_EQ(heard->wakeups, std::vector<bool>{true});
  EXPECT_EQ(a->status().wakeups, wakeup_state::subscribed);
}

TEST_P(lease_store_contract, a_release_is_announced_to_other_watchers_not_the_releaser) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto a_heard = watch(*a);
  auto b_heard = watch(*b);
  ASSERT_TRUE(run_until(io, [&] { return a_heard->trusted() && b_heard->trusted(); }));
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  const int a_before = a_heard->released;
  const int b_before = b_heard->released;

  ASSERT_EQ(release(io, *a).value, release_answer::released);
  ASSERT_TRUE(run_until(io, [&] { return b_heard->released > b_before; }))
      << "b never heard the release";

  // Announcements arrive in order: once a has heard b's new term, it would
  // have heard its own release before it.
  auto taken = acquire(io, *b);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message() << describe(taken.value);
  ASSERT_TRUE(run_until(io, [&] {
    for (const auto& t : a_heard->terms)
      if (t.token == taken.value.token) return true;
    return false;
  })) << "a never heard b's term";
  EXPECT_EQ(a_heard->released, a_before) << "a heard its own release";
  EXPECT_EQ(b_heard->released, b_before + 1);
}

TEST_P(lease_store_contract, new_terms_are_announced_to_every_watcher_the_acquirer_too) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto a_heard = watch(*a);
  auto b_heard = watch(*b);
  ASSERT_TRUE(run_until(io, [&] { return a_heard->trusted() && b_heard->trusted(); }));

  auto first = acquire(io, *a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message();
  ASSERT_TRUE(run_until(io, [&] { return !a_heard->terms.empty() && !b_heard->terms.empty(); }))
      << "terms heard: a " << a_heard->terms.size() << ", b " << b_heard->terms.size();
  for (const auto* h : {a_heard.get(), b_heard.get()}) {
    ASSERT_EQ(h->terms.size(), 1u);
    EXPECT_EQ(h->terms[0].holder, "node-a");
    EXPECT_EQ(h->terms[0].token, first.value.token);
  }

  ASSERT_EQ(release(io, *a).value, release_answer::released);
  auto second = acquire(io, *b);
  ASSERT_TRUE(second.value.acquired()) << second.error.message();
  ASSERT_TRUE(
      run_until(io, [&] { return a_heard->terms.size() >= 2 && b_heard->terms.size() >= 2; }))
      << "terms heard: a " << a_heard->terms.size() << ", b " << b_heard->terms.size();
  for (const auto* h : {a_heard.get(), b_heard.get()}) {
    ASSERT_EQ(h->terms.size(), 2u);
    EXPECT_EQ(h->terms[1].holder, "node-b");
    EXPECT_EQ(h->terms[1].token, second.value.token);
  }
}

// --- completion rules ------------------------------------------------------------

TEST_P(lease_store_contract, handlers_run_later_never_inline) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto acquired = start_acquire(*a);
  EXPECT_EQ(acquired->calls, 0) << "acquire completed inline";
  ASSERT_TRUE(await(io, acquired, "acquire").value.acquired());
  auto renewed = start_renew(*a);
  EXPECT_EQ(renewed->calls, 0) << "renew completed inline";
  EXPECT_EQ(await(io, renewed, "renew").value, renew_answer::renewed);
  auto released = start_release(*a);
  EXPECT_EQ(released->calls, 0) << "release completed inline";
  EXPECT_EQ(await(io, released, "release").value, release_answer::released);
}

TEST_P(lease_store_contract, close_aborts_calls_in_flight_exactly_once_and_later_calls_too) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto acquired = start_acquire(*a);
  auto renewed = start_renew(*a);
  auto released = start_release(*a);
  a->close();
  EXPECT_EQ(acquired->calls + renewed->calls + released->calls, 0) << "aborted inline";
  ASSERT_TRUE(run_until(
      io, [&] { return acquired->calls > 0 && renewed->calls > 0 && released->calls > 0; }))
      << "calls: " << acquired->calls << " " << renewed->calls << " " << released->calls;
  EXPECT_TRUE(is_aborted(acquired->error)) << acquired->error.message();
  EXPECT_TRUE(is_aborted(renewed->error)) << renewed->error.message();
  EXPECT_TRUE(is_aborted(released->error)) << released->error.message();

  // After close: aborted too, and still not inline; a second close is harmless.
  auto later = start_acquire(*a);
  EXPECT_EQ(later->calls, 0) << "aborted inline";
  a->close();
  auto late = await(io, later, "acquire after close");
  EXPECT_TRUE(is_aborted(late.error)) << late.error.message();

  // Let a full round trip of another store pass, then a little more: nothing
  // completes twice.
  auto other = acquire(io, *b);
  EXPECT_EQ(other.calls, 1);
  EXPECT_FALSE(other.error) << other.error.message();
  pass(io, 200ms);
  EXPECT_EQ(acquired->calls, 1);
  EXPECT_EQ(renewed->calls, 1);
  EXPECT_EQ(released->calls, 1);
  EXPECT_EQ(later->calls, 1);
}

TEST_P(lease_store_contract, a_closed_store_reports_no_more_events) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto a_heard = watch(*a);
  auto b_heard = watch(*b);
  ASSERT_TRUE(run_until(io, [&] { return a_heard->trusted() && b_heard->trusted(); }));
  const int before = a_heard->events;
  a->close();

  auto taken = acquire(io, *b);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message();
  ASSERT_TRUE(run_until(io, [&] { return !b_heard->terms.empty(); })) << "b never heard its term";
  ASSERT_EQ(release(io, *b).value, release_answer::released);
  pass(io, 200ms);
  EXPECT_EQ(a_heard->events, before) << "a closed store reported events";
}

TEST_P(lease_store_contract, a_listener_may_close_its_store) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  int events = 0;
  a->watch([&](const store_event&) {
    ++events;
    a->close();
  });
  ASSERT_TRUE(run_until(io, [&] { return events > 0; })) << "no event";
  auto after = acquire(io, *a);
  EXPECT_TRUE(is_aborted(after.error)) << after.error.message();
  EXPECT_EQ(events, 1);
}

TEST_P(lease_store_contract, a_listener_may_destroy_its_store) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  int events = 0;
  a->watch([&](const store_event&) {
    ++events;
    a.reset();
  });
  ASSERT_TRUE(run_until(io, [&] { return events > 0; })) << "no event";
  EXPECT_EQ(a, nullptr);
  // The world goes on: another store's term, announced, and nothing of a's.
  auto b_heard = watch(*b);
  ASSERT_TRUE(run_until(io, [&] { return b_heard->trusted(); }));
  ASSERT_TRUE(acquire(io, *b).value.acquired());
  ASSERT_TRUE(run_until(io, [&] { return !b_heard->terms.empty(); }));
  EXPECT_EQ(events, 1);
}

TEST_P(lease_store_contract, a_destroyed_store_never_calls_back) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto a_heard = watch(*a);
  auto acquired = start_acquire(*a);
  auto renewed = start_renew(*a);
  auto released = start_release(*a);
  a.reset();

  // Another store's round trip, and a little more: nothing of a's runs.
  auto other = acquire(io, *b);
  EXPECT_FALSE(other.error) << other.error.message();
  pass(io, 300ms);
  EXPECT_EQ(acquired->calls, 0);
  EXPECT_EQ(renewed->calls, 0);
  EXPECT_EQ(released->calls, 0);
  EXPECT_EQ(a_heard->events, 0);
}

// --- failures --------------------------------------------------------------------

TEST_P(lease_store_contract, an_unreachable_store_fails_calls_as_unavailable) {
  if (!harness().can_make_unreachable())
    GTEST_SKIP() << harness().name() << " cannot be made unreachable";
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  harness().make_unreachable();
  const auto failed_after = mono_clock::now();

  auto r = acquire(io, *a);
  ASSERT_TRUE(r.error) << "acquire succeeded: " << describe(r.value);
  EXPECT_EQ(r.error.code, store_errc::unavailable) << r.error.code.message();
  EXPECT_STREQ(store_error_kind(r.error.code), "unavailable");
  EXPECT_FALSE(r.error.message().empty());
  auto rn = renew(io, *a);
  EXPECT_EQ(rn.error.code, store_errc::unavailable) << rn.error.message();
  auto rl = release(io, *a);
  EXPECT_EQ(rl.error.code, store_errc::unavailable) << rl.error.message();

  auto s = a->status();
  EXPECT_NE(s.link, link_state::connected);
  EXPECT_NE(s.last_error, "");
  EXPECT_EQ(s.last_error_kind, "unavailable");
  ASSERT_TRUE(s.last_error_at.has_value());
  EXPECT_GE(*s.last_error_at, failed_after);
}

}  // namespace
}  // namespace baton::contract
