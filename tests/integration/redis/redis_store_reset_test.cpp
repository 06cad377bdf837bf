// redis_store when Redis forgets: the token counter deleted, Redis restarted
// empty, Redis restarted with the counter put back (as a promoted replica that
// had the counter but not the lease). In each case every acquisition must be
// held back for one ttl by the fence key, so an old leader whose lease vanished
// has stopped before anyone else starts, and tokens never go down.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "baton/lease_keys.hpp"
#include "baton/redis_store.hpp"
#include "store_test_util.hpp"
#include "support/redis_server.hpp"

namespace {

namespace asio = boost::asio;
using baton::milliseconds;
using namespace std::chrono_literals;

using namespace baton::testing::store_test_util;

// Short, so that the fence (one ttl) passes quickly; every acquire and renew
// here uses it.
constexpr milliseconds ttl{1500};

// After a restart the first command meets the dead connection
// (connection_lost); the next one reconnects. Bounded retries.
acquired acquire_answered(asio::io_context& io, baton::redis_store& store) {
  acquired out;
  for (int i = 0; i < 3; ++i) {
    out = acquire(io, store, ttl);
    if (!out.ec) break;
  }
  return out;
}

baton::renew_reply renew(asio::io_context& io, baton::redis_store& store) {
  baton::renew_reply out = baton::renew_reply::lost;
  std::error_code last;
  for (int i = 0; i < 3; ++i) {
    int calls = 0;
    store.async_renew(ttl, [&](std::error_code ec, baton::renew_reply r) {
      ++calls;
      last = ec;
      out = r;
    });
    EXPECT_TRUE(run_until(io, [&] { return calls > 0; })) << "renew never completed";
    if (!last) break;
  }
  EXPECT_FALSE(last) << store.last_error();
  return out;
}

long long key_pttl(const baton::testing::redis_server& server, const std::string& key) {
  return std::stoll(server.command({"PTTL", key}).at(0));
}

std::uint64_t counter(const baton::testing::redis_server& server) {
  auto v = server.command({"GET", baton::token_key(election)});
  return v.empty() ? 0 : std::stoull(v[0]);
}

std::uint64_t server_time_us(const baton::testing::redis_server& server) {
  auto t = server.command({"TIME"});
  return std::stoull(t.at(0)) * 1000000ull + std::stoull(t.at(1));
}

// Retries every 20 ms (each a real round trip) until `store` acquires; bounded.
acquired acquire_when_free(asio::io_context& io, baton::redis_store& store, milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  acquired last;
  for (int i = 0; i < 1000 && std::chrono::steady_clock::now() < deadline; ++i) {
    last = acquire(io, store, ttl);
    if (last.ec || last.value.acquired) return last;
    asio::steady_timer pause(io, 20ms);
    bool waited = false;
    pause.async_wait([&](const boost::system::error_code&) { waited = true; });
    run_until(io, [&] { return waited; });
  }
  return last;
}

class redis_store_reset_test : public ::testing::Test {
 protected:
  redis_store_reset_test() {
    a.on_store_reset([this](const std::string& why) { a_resets.push_back(why); });
    b.on_store_reset([this](const std::string& why) { b_resets.push_back(why); });
  }

  // An election that has run before: the counter exists.
  void seed() { seed_counter(server); }

  baton::testing::redis_server server;
  asio::io_context io;
  baton::redis_store a{io, options_for(server, "node-a")};
  baton::redis_store b{io, options_for(server, "node-b")};
  std::vector<std::string> a_resets;
  std::vector<std::string> b_resets;
};

TEST_F(redis_store_reset_test, existing_counter_and_first_connection_acquire_at_once) {
  seed();
  auto r = acquire(io, a, ttl);
  ASSERT_FALSE(r.ec) << a.last_error();
  EXPECT_TRUE(r.value.acquired);
  EXPECT_EQ(r.value.token, 1001u);
  EXPECT_TRUE(a_resets.empty());
  EXPECT_EQ(a.last_reset(), "");
  EXPECT_EQ(key_pttl(server, baton::fence_key(election)), -2) << "no fence";
}

TEST_F(redis_store_reset_test, missing_counter_holds_every_acquire_back_for_one_ttl) {
  seed();
  auto first = acquire(io, a, ttl);
  ASSERT_TRUE(first.value.acquired) << a.last_error();
  // The lease ends and then the data goes: nothing in Redis tells a standby
  // that a leader may still be working.
  server.command({"DEL", baton::lease_key(election), baton::token_key(election)});

  const auto before_us = server_time_us(server);
  auto held = acquire(io, b, ttl);
  ASSERT_FALSE(held.ec) << b.last_error();
  EXPECT_FALSE(held.value.acquired);
  EXPECT_EQ(held.value.holder, "(store reset)");
  EXPECT_GT(held.value.holder_ttl, ttl - 500ms);
  EXPECT_LE(held.value.holder_ttl, ttl);
  // Re-seeded from the server's clock: above every token handed out before.
  EXPECT_GT(held.value.token, first.value.token);
  EXPECT_GE(held.value.token, before_us);
  EXPECT_EQ(counter(server), held.value.token);
  EXPECT_EQ(b_resets, std::vector<std::string>{"token counter missing"});
  EXPECT_EQ(b.last_reset(), "token counter missing");
  EXPECT_EQ(server.command({"GET", baton::fence_key(election)}),
            std::vector<std::string>{"token counter missing"});
  EXPECT_TRUE(server.command({"GET", baton::lease_key(election)}).empty()) << "nothing acquired";

  // The fence holds everyone back, the old holder too; only the one that
  // found the loss reports it.
  auto also_held = acquire(io, a, ttl);
  ASSERT_FALSE(also_held.ec) << a.last_error();
  EXPECT_FALSE(also_held.value.acquired);
  EXPECT_EQ(also_held.value.holder, "(store reset)");
  EXPECT_GT(also_held.value.holder_ttl, 0ms);
  EXPECT_LE(also_held.value.holder_ttl, held.value.holder_ttl);
  EXPECT_TRUE(a_resets.empty());

  // Once the fence is gone, the next acquire wins with a larger token.
  const auto fenced_at = std::chrono::steady_clock::now();
  auto won = acquire_when_free(io, b, 10s);
  const auto waited = std::chrono::steady_clock::now() - fenced_at;
  ASSERT_FALSE(won.ec) << b.last_error();
  ASSERT_TRUE(won.value.acquired);
  EXPECT_GT(won.value.token, held.value.token);
  EXPECT_GE(waited, also_held.value.holder_ttl - 50ms);
  EXPECT_EQ(key_pttl(server, baton::fence_key(election)), -2);
}

TEST_F(redis_store_reset_test, a_holder_keeps_renewing_under_the_fence) {
  seed();
  auto first = acquire(io, a, ttl);
  ASSERT_TRUE(first.value.acquired) << a.last_error();
  server.command({"DEL", baton::token_key(election)});

  auto held = acquire(io, b, ttl);
  ASSERT_FALSE(held.ec) << b.last_error();
  EXPECT_FALSE(held.value.acquired);
  // The lease survived: the real holder is reported, and the wait covers
  // both the fence and the lease.
  EXPECT_EQ(held.value.holder, "node-a");
  EXPECT_GT(held.value.holder_ttl, ttl - 500ms);
  EXPECT_EQ(renew(io, a), baton::renew_reply::renewed);
  // Even our own lease cannot be re-acquired while the fence is up.
  auto again = acquire(io, a, ttl);
  EXPECT_FALSE(again.value.acquired);
  EXPECT_EQ(again.value.holder, "node-a");
}

TEST_F(redis_store_reset_test, restart_empty_holds_a_standby_back_for_one_ttl) {
  seed();
  auto first = acquire(io, a, ttl);
  ASSERT_TRUE(first.value.acquired) << a.last_error();
  auto standby = acquire(io, b, ttl);
  ASSERT_FALSE(standby.value.acquired) << b.last_error();

  server.restart();
  const auto restarted_at = std::chrono::steady_clock::now();
  // The old leader learns at its next renewal that its lease is gone.
  EXPECT_EQ(renew(io, a), baton::renew_reply::lost);

  auto held = acquire_answered(io, b);
  ASSERT_FALSE(held.ec) << b.last_error();
  EXPECT_FALSE(held.value.acquired);
  EXPECT_EQ(held.value.holder, "(store reset)");
  EXPECT_GT(held.value.holder_ttl, ttl - 600ms);
  EXPECT_GT(held.value.token, first.value.token);
  ASSERT_EQ(b_resets.size(), 1u);
  EXPECT_EQ(b_resets[0].rfind("run_id changed from ", 0), 0u) << b_resets[0];

  auto won = acquire_when_free(io, b, 10s);
  ASSERT_FALSE(won.ec) << b.last_error();
  ASSERT_TRUE(won.value.acquired);
  // The fence was set at the first contact after the restart, so no acquire
  // could succeed sooner than one ttl after the restart (less the time to
  // notice it).
  EXPECT_GE(std::chrono::steady_clock::now() - restarted_at, ttl - 200ms);
  EXPECT_GT(won.value.token, first.value.token);
  EXPECT_EQ(b_resets.size(), 1u) << "reported once";
}

TEST_F(redis_store_reset_test, run_id_change_with_the_counter_intact_sets_the_fence) {
  seed();
  auto first = acquire(io, a, ttl);
  ASSERT_TRUE(first.value.acquired) << a.last_error();
  auto standby = acquire(io, b, ttl);
  ASSERT_FALSE(standby.value.acquired) << b.last_error();

  // As a promoted replica that had the counter but not the lease: a new
  // run_id, the counter as it was, no lease key.
  server.restart();
  server.command({"SET", baton::token_key(election), std::to_string(first.value.token)});
  const auto before_us = server_time_us(server);

  auto held = acquire_answered(io, b);
  ASSERT_FALSE(held.ec) << b.last_error();
  EXPECT_FALSE(held.value.acquired) << "a changed run_id must hold the acquire back";
  EXPECT_EQ(held.value.holder, "(store reset)");
  EXPECT_GT(held.value.holder_ttl, ttl - 500ms);
  EXPECT_LE(held.value.holder_ttl, ttl);
  EXPECT_EQ(server.command({"GET", baton::fence_key(election)}),
            std::vector<std::string>{"run_id changed"});
  // The counter is lifted to the server's clock, far above the old term.
  EXPECT_GE(held.value.token, before_us);
  EXPECT_GT(held.value.token, first.value.token);
  ASSERT_EQ(b_resets.size(), 1u);
  EXPECT_NE(b_resets[0].find("run_id changed"), std::string::npos) << b_resets[0];
  EXPECT_NE(b.last_reset().find("run_id changed"), std::string::npos);
}

TEST_F(redis_store_reset_test, a_new_store_on_a_restarted_server_sees_no_change) {
  seed();
  server.restart();
  seed();
  // Its first connection: nothing to compare with.
  auto r = acquire(io, a, ttl);
  ASSERT_FALSE(r.ec) << a.last_error();
  EXPECT_TRUE(r.value.acquired);
  EXPECT_TRUE(a_resets.empty());
}

TEST_F(redis_store_reset_test, a_longer_fence_is_never_shortened) {
  seed();
  server.command({"SET", baton::fence_key(election), "operator hold", "PX", "60000"});
  auto held = acquire(io, a, ttl);
  ASSERT_FALSE(held.value.acquired) << a.last_error();
  EXPECT_GT(held.value.holder_ttl, 50s);
  server.command({"DEL", baton::token_key(election)});
  auto reset = acquire(io, a, ttl);
  ASSERT_FALSE(reset.value.acquired) << a.last_error();
  EXPECT_GT(key_pttl(server, baton::fence_key(election)), 50000);
  EXPECT_EQ(server.command({"GET", baton::fence_key(election)}),
            std::vector<std::string>{"operator hold"});
  // A fence without expiry (an operator's hold) stays until deleted.
  server.command({"SET", baton::fence_key(election), "operator hold"});
  auto forever = acquire(io, b, ttl);
  ASSERT_FALSE(forever.value.acquired) << b.last_error();
  EXPECT_EQ(forever.value.holder_ttl, milliseconds(-1));
  server.command({"DEL", baton::fence_key(election)});
  EXPECT_TRUE(acquire(io, b, ttl).value.acquired) << b.last_error();
}

}  // namespace
