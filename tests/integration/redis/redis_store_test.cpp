// redis_store against a real redis-server: the lease semantics. Two stores
// with different node ids play two candidates; the fixture's synchronous
// client checks what actually sits in Redis. The fixture creates the token
// counter first, as in an election that has run before: on a Redis without
// it every acquire is held back for one ttl (see redis_store_reset_test.cpp).
#include "redis/redis_store.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <regex>
#include <stdexcept>
#include <string>
#include <variant>

#include "redis/lease_keys.hpp"
#include "redis/redis_error.hpp"
#include "store_test_util.hpp"
#include "support/servers/redis_server.hpp"

namespace {

namespace asio = boost::asio;
using baton::milliseconds;
using namespace std::chrono_literals;
using namespace baton::testing::store_test_util;

long long pttl(const baton::testing::redis_server& server) {
  return std::stoll(server.command({"PTTL", baton::lease_key(election)}).at(0));
}

class redis_store_test : public ::testing::Test {
 protected:
  redis_store_test() { seed_counter(server); }

  baton::testing::redis_server server;
  asio::io_context io;
  // Both with the default ttl (5 s).
  baton::redis_store a{io, options_for(server, "node-a")};
  baton::redis_store b{io, options_for(server, "node-b")};
};

TEST_F(redis_store_test, lease_value_is_node_id_and_128_bit_nonce) {
  EXPECT_TRUE(std::regex_match(a.lease_value(), std::regex("node-a:[0-9a-f]{32}")))
      << a.lease_value();
  EXPECT_EQ(link_of(a), "disconnected");
  EXPECT_EQ(last_error_of(a), "");
}

TEST_F(redis_store_test, acquires_a_free_lease_with_a_token) {
  auto r = acquire(io, a);
  ASSERT_FALSE(r.error) << r.error.code.message() << ": " << r.error.detail;
  EXPECT_EQ(r.calls, 1);
  EXPECT_TRUE(r.value.acquired());
  EXPECT_GT(r.value.token, 0u);
  EXPECT_EQ(server.command({"GET", baton::lease_key(election)}),
            std::vector<std::string>{a.lease_value()});
  EXPECT_EQ(server.command({"GET", baton::token_key(election)}),
            std::vector<std::string>{std::to_string(r.value.token)});
  const auto left = pttl(server);
  EXPECT_GT(left, 3000);
  EXPECT_LE(left, 5000);
  EXPECT_EQ(link_of(a), "connected");
}

TEST_F(redis_store_test, tokens_are_seeded_from_server_time) {
  server.command({"DEL", baton::token_key(election)});
  // The missing counter holds the acquire back (and is seeded); lift the
  // hold-back by hand to see the first token.
  auto held = acquire(io, a);
  ASSERT_FALSE(held.error) << held.error.message();
  ASSERT_FALSE(held.value.acquired());
  server.command({"DEL", baton::fence_key(election)});
  auto r = acquire(io, a);
  ASSERT_FALSE(r.error) << r.error.message();
  ASSERT_TRUE(r.value.acquired());
  const auto time = server.command({"TIME"});
  const auto now_us = std::stoull(time.at(0)) * 1000000ull + std::stoull(time.at(1));
  EXPECT_LE(r.value.token, now_us + 1);
  EXPECT_GT(r.value.token, now_us - 60ull * 1000000ull);
}

TEST_F(redis_store_test, second_candidate_sees_the_holder) {
  baton::redis_store a8(io, options_for(server, "node-a", 8000ms));
  baton::redis_store b8(io, options_for(server, "node-b", 8000ms));
  auto first = acquire(io, a8);
  ASSERT_TRUE(first.value.acquired()) << first.error.message();
  auto second = acquire(io, b8);
  ASSERT_FALSE(second.error) << second.error.message();
  EXPECT_FALSE(second.value.acquired());
  EXPECT_EQ(second.value.holder, "node-a");
  EXPECT_EQ(second.value.token, first.value.token);
  EXPECT_GT(second.value.remaining, 5000ms);
  EXPECT_LE(second.value.remaining, 8000ms);
  // The free time to the microsecond: PTTL plus the rest of its millisecond.
  EXPECT_GT(second.value.free_in, second.value.remaining);
  EXPECT_LE(second.value.free_in, second.value.remaining + 1000us);
  // The holder's lease is untouched.
  EXPECT_EQ(server.command({"GET", baton::lease_key(election)}),
            std::vector<std::string>{a.lease_value()});
}

TEST_F(redis_store_test, reacquiring_our_own_lease_succeeds_with_a_new_token) {
  auto first = acquire(io, a);
  auto again = acquire(io, a);
  ASSERT_TRUE(first.value.acquired());
  ASSERT_TRUE(again.value.acquired());
  EXPECT_GT(again.value.token, first.value.token);
}

TEST_F(redis_store_test, holder_renews_and_the_ttl_is_reset) {
  // The same node (the same lease value) with a 2 s and a 20 s ttl.
  baton::redis_store short_lived(io, options_for(server, "node-a", 2000ms));
  baton::redis_store long_lived(io, options_for(server, "node-a", 20000ms));
  auto taken = acquire(io, short_lived);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message();
  auto r = renew(io, long_lived);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, baton::renew_answer::renewed);
  EXPECT_GT(pttl(server), 15000);
}

TEST_F(redis_store_test, non_holder_renew_is_lost) {
  baton::redis_store b20(io, options_for(server, "node-b", 20000ms));
  auto taken = acquire(io, a);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message();
  auto r = renew(io, b20);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, baton::renew_answer::lost);
  EXPECT_LE(pttl(server), 5000);
}

TEST_F(redis_store_test, renew_of_an_expired_lease_is_lost) {
  auto r = renew(io, a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, baton::renew_answer::lost);
}

TEST_F(redis_store_test, non_holder_release_deletes_nothing) {
  auto taken = acquire(io, a);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message();
  auto r = release(io, b);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, baton::release_answer::not_ours);
  EXPECT_EQ(server.command({"GET", baton::lease_key(election)}),
            std::vector<std::string>{a.lease_value()});
}

// A held answer counts the candidates listening for the election's
// announcements (the standbys' herd spreads by it); without a subscription
// the store cannot tell and says so.
TEST_F(redis_store_test, a_held_answer_counts_the_candidates_listening) {
  auto unwatched = acquire(io, a);
  ASSERT_TRUE(unwatched.value.acquired()) << unwatched.error.message();
  auto before = acquire(io, b);
  ASSERT_FALSE(before.error) << before.error.message();
  ASSERT_FALSE(before.value.acquired());
  EXPECT_EQ(before.value.contenders, 0);  // a channel, nobody on it yet

  a.watch([](const baton::store_event&) {});
  b.watch([](const baton::store_event&) {});
  ASSERT_TRUE(run_until(io,
                        [&] { return wakeups_of(a) == "subscribed" && wakeups_of(b) == "subscribed"; }))
      << wakeups_of(a) << " " << wakeups_of(b);
  auto held = acquire(io, b);
  ASSERT_FALSE(held.error) << held.error.message();
  ASSERT_FALSE(held.value.acquired());
  EXPECT_EQ(held.value.contenders, 2);
}

TEST_F(redis_store_test, holder_release_deletes_and_announces) {
  int a_heard = 0;
  int b_heard = 0;
  a.watch([&](const baton::store_event& e) {
    if (std::holds_alternative<baton::store_events::released>(e)) ++a_heard;
  });
  b.watch([&](const baton::store_event& e) {
    if (std::holds_alternative<baton::store_events::released>(e)) ++b_heard;
  });
  ASSERT_TRUE(run_until(io,
                        [&] { return wakeups_of(a) == "subscribed" && wakeups_of(b) == "subscribed"; }))
      << wakeups_of(a) << " " << wakeups_of(b);

  auto first = acquire(io, a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message();
  auto r = release(io, a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, baton::release_answer::released);
  EXPECT_TRUE(server.command({"GET", baton::lease_key(election)}).empty());

  ASSERT_TRUE(run_until(io, [&] { return b_heard > 0; })) << "b's listener did not fire";
  run_for(io, 200ms);
  EXPECT_EQ(b_heard, 1);
  EXPECT_EQ(a_heard, 0) << "a heard its own release";

  // Now b takes over, with a larger token.
  auto taken = acquire(io, b);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message();
  EXPECT_GT(taken.value.token, first.value.token);
  // A second release of a lease no longer ours deletes nothing.
  auto again = release(io, a);
  ASSERT_FALSE(again.error);
  EXPECT_EQ(again.value, baton::release_answer::not_ours);
}

TEST_F(redis_store_test, watch_says_whether_wakeups_are_trusted) {
  std::vector<bool> trusted;
  a.watch([&](const baton::store_event& e) {
    if (const auto* w = std::get_if<baton::store_events::wakeups>(&e)) trusted.push_back(w->trusted);
  });
  ASSERT_TRUE(run_until(io, [&] { return !trusted.empty(); }))
      << "no wakeups event; wakeups " << wakeups_of(a);
  EXPECT_EQ(trusted, std::vector<bool>{true});
  EXPECT_EQ(wakeups_of(a), "subscribed");

  // The subscription drops: no longer trusted; back: trusted again.
  server.kill_and_wait();
  ASSERT_TRUE(run_until(io, [&] { return trusted.size() >= 2; })) << wakeups_of(a);
  EXPECT_EQ(trusted, (std::vector<bool>{true, false}));
  EXPECT_NE(wakeups_of(a), "subscribed");
  server.restart();
  ASSERT_TRUE(run_until(
      io, [&] { return trusted.size() >= 3; }, 20s))
      << wakeups_of(a);
  EXPECT_EQ(trusted, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(wakeups_of(a), "subscribed");
}

TEST_F(redis_store_test, watchers_hear_each_new_term_with_its_holder_and_token) {
  std::vector<baton::store_events::acquired> a_terms;
  std::vector<baton::store_events::acquired> b_terms;
  a.watch([&](const baton::store_event& e) {
    if (const auto* t = std::get_if<baton::store_events::acquired>(&e)) a_terms.push_back(*t);
  });
  b.watch([&](const baton::store_event& e) {
    if (const auto* t = std::get_if<baton::store_events::acquired>(&e)) b_terms.push_back(*t);
  });
  ASSERT_TRUE(run_until(io,
                        [&] { return wakeups_of(a) == "subscribed" && wakeups_of(b) == "subscribed"; }))
      << wakeups_of(a) << " " << wakeups_of(b);

  auto first = acquire(io, a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message();
  ASSERT_TRUE(run_until(io, [&] { return !a_terms.empty() && !b_terms.empty(); }))
      << a_terms.size() << " " << b_terms.size();
  run_for(io, 200ms);
  // Every watcher hears the term, the new holder too.
  ASSERT_EQ(b_terms.size(), 1u);
  EXPECT_EQ(b_terms[0].holder, "node-a");
  EXPECT_EQ(b_terms[0].token, first.value.token);
  ASSERT_EQ(a_terms.size(), 1u);
  EXPECT_EQ(a_terms[0].holder, "node-a");
  EXPECT_EQ(a_terms[0].token, first.value.token);
}

TEST_F(redis_store_test, token_keeps_growing_after_the_counter_is_lost) {
  auto first = acquire(io, a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message();
  // As after a Redis that lost its data: the counter is gone. That acquire is
  // held back (redis_store_reset_test.cpp); the next term's token still grows.
  server.command({"DEL", baton::token_key(election)});
  auto held = acquire(io, a);
  ASSERT_FALSE(held.value.acquired()) << held.error.message();
  EXPECT_GT(held.value.token, first.value.token);
  server.command({"DEL", baton::fence_key(election)});
  auto second = acquire(io, a);
  ASSERT_TRUE(second.value.acquired()) << second.error.message();
  EXPECT_GT(second.value.token, held.value.token);
}

TEST_F(redis_store_test, scripts_are_reloaded_after_script_flush) {
  ASSERT_TRUE(acquire(io, a).value.acquired()) << last_error_of(a);
  ASSERT_TRUE(acquire(io, a).value.acquired()) << last_error_of(a);
  // The first call loaded the script (EVAL); the second ran it by its SHA1.
  const auto stats = server.command({"INFO", "commandstats"}).at(0);
  EXPECT_NE(stats.find("cmdstat_eval:calls=1,"), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_evalsha:calls=1,"), std::string::npos) << stats;

  // An operator's SCRIPT FLUSH on the live connection: NOSCRIPT, then EVAL.
  server.command({"SCRIPT", "FLUSH"});
  const auto again = acquire(io, a);
  ASSERT_TRUE(again.value.acquired()) << again.error.message();
  auto r = renew(io, a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, baton::renew_answer::renewed);
}

// After a restart (the server forgot every script), a release sent right
// before an acquire runs before it. It once went EVALSHA, met NOSCRIPT and
// was sent again as EVAL behind the acquire, whose script the server knew
// again by then: the late release deleted the grant it had been sent before.
TEST_F(redis_store_test, a_release_sent_before_an_acquire_runs_first_after_a_restart) {
  ASSERT_TRUE(acquire(io, a).value.acquired()) << last_error_of(a);
  ASSERT_EQ(release(io, a).value, baton::release_answer::released);
  server.restart();
  seed_counter(server);
  // The first call after the restart meets the dropped connection; on the
  // new one the acquire is held back (run_id changed) and loads the acquire
  // script. The fence is then lifted by hand.
  auto held = acquire(io, a);
  if (held.error) held = acquire(io, a);
  ASSERT_FALSE(held.error) << held.error.message();
  ASSERT_EQ(held.value.outcome, baton::acquire_outcome::held_back);
  server.command({"DEL", baton::fence_key(election)});

  int released = 0;
  a.async_release([&](baton::store_error e, baton::release_answer) {
    EXPECT_FALSE(e) << e.message();
    ++released;
  });
  auto granted = start_acquire(a);
  ASSERT_TRUE(run_until(io, [&] { return released == 1 && granted->calls == 1; }));
  ASSERT_TRUE(granted->value.acquired()) << granted->error.message();
  EXPECT_EQ(server.command({"GET", baton::lease_key(election)}),
            std::vector<std::string>{a.lease_value()})
      << "the release ran after the acquire sent behind it";
}

TEST_F(redis_store_test, pipelined_commands_complete_in_order) {
  // All four are written before the first reply comes back.
  std::vector<int> order;
  a.async_acquire([&](baton::store_error e, baton::acquire_answer r) {
    EXPECT_FALSE(e) << e.message();
    EXPECT_TRUE(r.acquired());
    order.push_back(1);
  });
  a.async_renew([&](baton::store_error e, baton::renew_answer r) {
    EXPECT_FALSE(e) << e.message();
    EXPECT_EQ(r, baton::renew_answer::renewed);
    order.push_back(2);
  });
  a.async_release([&](baton::store_error e, baton::release_answer r) {
    EXPECT_FALSE(e) << e.message();
    EXPECT_EQ(r, baton::release_answer::released);
    order.push_back(3);
  });
  a.async_renew([&](baton::store_error e, baton::renew_answer r) {
    EXPECT_FALSE(e) << e.message();
    EXPECT_EQ(r, baton::renew_answer::lost);
    order.push_back(4);
  });
  ASSERT_TRUE(run_until(io, [&] { return order.size() == 4; }));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
}

TEST_F(redis_store_test, handlers_never_run_inline) {
  bool done = false;
  a.async_acquire([&](baton::store_error, baton::acquire_answer) { done = true; });
  EXPECT_FALSE(done);
  ASSERT_TRUE(run_until(io, [&] { return done; }));
  // A call refused without a round trip (the store is closed) is not
  // answered inline either.
  a.close();
  done = false;
  a.async_renew([&](baton::store_error e, baton::renew_answer) {
    EXPECT_EQ(e.code, std::errc::operation_canceled) << e.message();
    done = true;
  });
  EXPECT_FALSE(done);
  ASSERT_TRUE(run_until(io, [&] { return done; }));
}

TEST_F(redis_store_test, non_positive_ttl_is_rejected_when_the_store_is_made) {
  // The ttl is fixed at construction, so that is where a bad one is refused.
  EXPECT_THROW({ baton::redis_store c(io, options_for(server, "node-c", 0ms)); },
               std::invalid_argument);
  EXPECT_THROW({ baton::redis_store c(io, options_for(server, "node-c", -1ms)); },
               std::invalid_argument);
}

TEST_F(redis_store_test, selects_the_configured_database) {
  auto opts = options_for(server, "node-c");
  opts.endpoint.db = 3;
  seed_counter(server, 3);
  baton::redis_store c(io, opts);
  ASSERT_TRUE(acquire(io, c).value.acquired()) << last_error_of(c);
  EXPECT_TRUE(server.command({"GET", baton::lease_key(election)}).empty());
  const auto keyspace = server.command({"INFO", "keyspace"}).at(0);
  // The lease, the token counter, the holder record and the candidates.
  EXPECT_NE(keyspace.find("db3:keys=4"), std::string::npos) << keyspace;
}

TEST_F(redis_store_test, bad_database_fails_to_connect) {
  auto opts = options_for(server, "node-c");
  opts.endpoint.db = 999;
  baton::redis_store c(io, opts);
  auto r = acquire(io, c);
  EXPECT_EQ(r.error.code, baton::redis_errc::connect_failed);
  EXPECT_NE(r.error.detail.find("SELECT 999"), std::string::npos) << r.error.detail;
  EXPECT_NE(last_error_of(c).find("SELECT 999"), std::string::npos) << last_error_of(c);
}

}  // namespace
