// redis_store against a real redis-server: the lease semantics. Two stores
// with different node ids play two candidates; the fixture's synchronous
// client checks what actually sits in Redis. The fixture creates the token
// counter first, as in an election that has run before: on a Redis without
// it every acquire is held back for one ttl (see redis_store_reset_test.cpp).
#include "baton/redis_store.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <regex>
#include <string>

#include "baton/lease_keys.hpp"
#include "baton/redis_error.hpp"
#include "store_test_util.hpp"
#include "support/redis_server.hpp"

namespace {

namespace asio = boost::asio;
using baton::milliseconds;
using namespace std::chrono_literals;
using namespace baton::testing::store_test_util;

outcome<baton::renew_reply> renew(asio::io_context& io, baton::redis_store& store,
                                  milliseconds ttl) {
  outcome<baton::renew_reply> out;
  store.async_renew(ttl, [&](std::error_code ec, baton::renew_reply r) {
    ++out.calls;
    out.ec = ec;
    out.value = r;
  });
  EXPECT_TRUE(run_until(io, [&] { return out.calls > 0; })) << "renew never completed";
  return out;
}

outcome<bool> release(asio::io_context& io, baton::redis_store& store) {
  outcome<bool> out;
  store.async_release([&](std::error_code ec, bool released) {
    ++out.calls;
    out.ec = ec;
    out.value = released;
  });
  EXPECT_TRUE(run_until(io, [&] { return out.calls > 0; })) << "release never completed";
  return out;
}

long long pttl(const baton::testing::redis_server& server) {
  return std::stoll(server.command({"PTTL", baton::lease_key(election)}).at(0));
}

class redis_store_test : public ::testing::Test {
 protected:
  redis_store_test() { seed_counter(server); }

  baton::testing::redis_server server;
  asio::io_context io;
  baton::redis_store a{io, options_for(server, "node-a")};
  baton::redis_store b{io, options_for(server, "node-b")};
};

TEST_F(redis_store_test, lease_value_is_node_id_and_128_bit_nonce) {
  EXPECT_TRUE(std::regex_match(a.lease_value(), std::regex("node-a:[0-9a-f]{32}")))
      << a.lease_value();
  EXPECT_EQ(a.connection_state(), "disconnected");
  EXPECT_EQ(a.last_error(), "");
}

TEST_F(redis_store_test, acquires_a_free_lease_with_a_token) {
  auto r = acquire(io, a, 5000ms);
  ASSERT_FALSE(r.ec) << r.ec.message() << ": " << a.last_error();
  EXPECT_EQ(r.calls, 1);
  EXPECT_TRUE(r.value.acquired);
  EXPECT_GT(r.value.token, 0u);
  EXPECT_EQ(server.command({"GET", baton::lease_key(election)}),
            std::vector<std::string>{a.lease_value()});
  EXPECT_EQ(server.command({"GET", baton::token_key(election)}),
            std::vector<std::string>{std::to_string(r.value.token)});
  const auto left = pttl(server);
  EXPECT_GT(left, 3000);
  EXPECT_LE(left, 5000);
  EXPECT_EQ(a.connection_state(), "connected");
}

TEST_F(redis_store_test, tokens_are_seeded_from_server_time) {
  server.command({"DEL", baton::token_key(election)});
  // The missing counter holds the acquire back (and is seeded); lift the
  // hold-back by hand to see the first token.
  auto held = acquire(io, a, 5000ms);
  ASSERT_FALSE(held.ec) << a.last_error();
  ASSERT_FALSE(held.value.acquired);
  server.command({"DEL", baton::fence_key(election)});
  auto r = acquire(io, a, 5000ms);
  ASSERT_FALSE(r.ec) << a.last_error();
  ASSERT_TRUE(r.value.acquired);
  const auto time = server.command({"TIME"});
  const auto now_us = std::stoull(time.at(0)) * 1000000ull + std::stoull(time.at(1));
  EXPECT_LE(r.value.token, now_us + 1);
  EXPECT_GT(r.value.token, now_us - 60ull * 1000000ull);
}

TEST_F(redis_store_test, second_candidate_sees_the_holder) {
  auto first = acquire(io, a, 8000ms);
  ASSERT_TRUE(first.value.acquired) << a.last_error();
  auto second = acquire(io, b, 8000ms);
  ASSERT_FALSE(second.ec) << b.last_error();
  EXPECT_FALSE(second.value.acquired);
  EXPECT_EQ(second.value.holder, "node-a");
  EXPECT_EQ(second.value.token, first.value.token);
  EXPECT_GT(second.value.holder_ttl, 5000ms);
  EXPECT_LE(second.value.holder_ttl, 8000ms);
  // The holder's lease is untouched.
  EXPECT_EQ(server.command({"GET", baton::lease_key(election)}),
            std::vector<std::string>{a.lease_value()});
}

TEST_F(redis_store_test, reacquiring_our_own_lease_succeeds_with_a_new_token) {
  auto first = acquire(io, a, 5000ms);
  auto again = acquire(io, a, 5000ms);
  ASSERT_TRUE(first.value.acquired);
  ASSERT_TRUE(again.value.acquired);
  EXPECT_GT(again.value.token, first.value.token);
}

TEST_F(redis_store_test, holder_renews_and_the_ttl_is_reset) {
  ASSERT_TRUE(acquire(io, a, 2000ms).value.acquired) << a.last_error();
  auto r = renew(io, a, 20000ms);
  ASSERT_FALSE(r.ec) << a.last_error();
  EXPECT_EQ(r.value, baton::renew_reply::renewed);
  EXPECT_GT(pttl(server), 15000);
}

TEST_F(redis_store_test, non_holder_renew_is_lost) {
  ASSERT_TRUE(acquire(io, a, 5000ms).value.acquired) << a.last_error();
  auto r = renew(io, b, 20000ms);
  ASSERT_FALSE(r.ec) << b.last_error();
  EXPECT_EQ(r.value, baton::renew_reply::lost);
  EXPECT_LE(pttl(server), 5000);
}

TEST_F(redis_store_test, renew_of_an_expired_lease_is_lost) {
  auto r = renew(io, a, 5000ms);
  ASSERT_FALSE(r.ec) << a.last_error();
  EXPECT_EQ(r.value, baton::renew_reply::lost);
}

TEST_F(redis_store_test, non_holder_release_deletes_nothing) {
  ASSERT_TRUE(acquire(io, a, 5000ms).value.acquired) << a.last_error();
  auto r = release(io, b);
  ASSERT_FALSE(r.ec) << b.last_error();
  EXPECT_FALSE(r.value);
  EXPECT_EQ(server.command({"GET", baton::lease_key(election)}),
            std::vector<std::string>{a.lease_value()});
}

TEST_F(redis_store_test, holder_release_deletes_and_announces) {
  int a_heard = 0;
  int b_heard = 0;
  a.watch_releases([&] { ++a_heard; });
  b.watch_releases([&] { ++b_heard; });
  ASSERT_TRUE(run_until(io,
                        [&] {
                          return a.subscription_state() == "subscribed" &&
                                 b.subscription_state() == "subscribed";
                        }))
      << a.subscription_state() << " " << b.subscription_state();

  auto first = acquire(io, a, 5000ms);
  ASSERT_TRUE(first.value.acquired) << a.last_error();
  auto r = release(io, a);
  ASSERT_FALSE(r.ec) << a.last_error();
  EXPECT_TRUE(r.value);
  EXPECT_TRUE(server.command({"GET", baton::lease_key(election)}).empty());

  ASSERT_TRUE(run_until(io, [&] { return b_heard > 0; })) << "b's listener did not fire";
  run_for(io, 200ms);
  EXPECT_EQ(b_heard, 1);
  EXPECT_EQ(a_heard, 0) << "a heard its own release";

  // Now b takes over, with a larger token.
  auto taken = acquire(io, b, 5000ms);
  ASSERT_TRUE(taken.value.acquired) << b.last_error();
  EXPECT_GT(taken.value.token, first.value.token);
  // A second release of a lease no longer ours deletes nothing.
  auto again = release(io, a);
  ASSERT_FALSE(again.ec);
  EXPECT_FALSE(again.value);
}

TEST_F(redis_store_test, token_keeps_growing_after_the_counter_is_lost) {
  auto first = acquire(io, a, 5000ms);
  ASSERT_TRUE(first.value.acquired) << a.last_error();
  // As after a Redis that lost its data: the counter is gone. That acquire is
  // held back (redis_store_reset_test.cpp); the next term's token still grows.
  server.command({"DEL", baton::token_key(election)});
  auto held = acquire(io, a, 5000ms);
  ASSERT_FALSE(held.value.acquired) << a.last_error();
  EXPECT_GT(held.value.token, first.value.token);
  server.command({"DEL", baton::fence_key(election)});
  auto second = acquire(io, a, 5000ms);
  ASSERT_TRUE(second.value.acquired) << a.last_error();
  EXPECT_GT(second.value.token, held.value.token);
}

TEST_F(redis_store_test, scripts_are_reloaded_after_script_flush) {
  ASSERT_TRUE(acquire(io, a, 5000ms).value.acquired) << a.last_error();
  ASSERT_TRUE(acquire(io, a, 5000ms).value.acquired) << a.last_error();
  // The second acquire found the script cached: one EVAL, the rest EVALSHA.
  const auto stats = server.command({"INFO", "commandstats"}).at(0);
  EXPECT_NE(stats.find("cmdstat_eval:calls=1,"), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_evalsha:calls=2,"), std::string::npos) << stats;

  server.command({"SCRIPT", "FLUSH"});
  auto r = renew(io, a, 5000ms);
  ASSERT_FALSE(r.ec) << a.last_error();
  EXPECT_EQ(r.value, baton::renew_reply::renewed);
}

TEST_F(redis_store_test, pipelined_commands_complete_in_order) {
  // All four are written before the first reply comes back.
  std::vector<int> order;
  a.async_acquire(5000ms, [&](std::error_code ec, baton::acquire_reply r) {
    EXPECT_FALSE(ec);
    EXPECT_TRUE(r.acquired);
    order.push_back(1);
  });
  a.async_renew(5000ms, [&](std::error_code ec, baton::renew_reply r) {
    EXPECT_FALSE(ec);
    EXPECT_EQ(r, baton::renew_reply::renewed);
    order.push_back(2);
  });
  a.async_release([&](std::error_code ec, bool released) {
    EXPECT_FALSE(ec);
    EXPECT_TRUE(released);
    order.push_back(3);
  });
  a.async_renew(5000ms, [&](std::error_code ec, baton::renew_reply r) {
    EXPECT_FALSE(ec);
    EXPECT_EQ(r, baton::renew_reply::lost);
    order.push_back(4);
  });
  ASSERT_TRUE(run_until(io, [&] { return order.size() == 4; }));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
}

TEST_F(redis_store_test, handlers_never_run_inline) {
  bool done = false;
  a.async_acquire(5000ms, [&](std::error_code, baton::acquire_reply) { done = true; });
  EXPECT_FALSE(done);
  ASSERT_TRUE(run_until(io, [&] { return done; }));
  done = false;
  a.async_renew(0ms, [&](std::error_code ec, baton::renew_reply) {
    EXPECT_EQ(ec, std::errc::invalid_argument);
    done = true;
  });
  EXPECT_FALSE(done);
  ASSERT_TRUE(run_until(io, [&] { return done; }));
}

TEST_F(redis_store_test, selects_the_configured_database) {
  auto opts = options_for(server, "node-c");
  opts.endpoint.db = 3;
  seed_counter(server, 3);
  baton::redis_store c(io, opts);
  ASSERT_TRUE(acquire(io, c, 5000ms).value.acquired) << c.last_error();
  EXPECT_TRUE(server.command({"GET", baton::lease_key(election)}).empty());
  const auto keyspace = server.command({"INFO", "keyspace"}).at(0);
  EXPECT_NE(keyspace.find("db3:keys=2"), std::string::npos) << keyspace;
}

TEST_F(redis_store_test, bad_database_fails_to_connect) {
  auto opts = options_for(server, "node-c");
  opts.endpoint.db = 999;
  baton::redis_store c(io, opts);
  auto r = acquire(io, c, 5000ms);
  EXPECT_EQ(r.ec, baton::redis_errc::connect_failed);
  EXPECT_NE(c.last_error().find("SELECT 999"), std::string::npos) << c.last_error();
}

}  // namespace
