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
#include <variant>
#include <vector>

#include "redis/lease_keys.hpp"
#include "redis/redis_store.hpp"
#include "store_test_util.hpp"
#include "support/servers/redis_server.hpp"

namespace {

namespace asio = boost::asio;
using baton::milliseconds;
using namespace std::chrono_literals;

using namespace baton::testing::store_test_util;

// Short, so that the fence (one ttl) passes quickly; every store here has it.
constexpr milliseconds reset_ttl{1500};

// After a restart the first command meets the dead connection
// (connection_lost); the next one reconnects. Bounded retries.
acquired acquire_answered(asio::io_context& io, baton::redis_store& store) {
  acquired out;
  for (int i = 0; i < 3; ++i) {
    out = acquire(io, store);
    if (!out.error) break;
  }
  return out;
}

baton::renew_answer renew_once(asio::io_context& io, baton::redis_store& store) {
  baton::renew_answer out = baton::renew_answer::lost;
  baton::store_error last;
  for (int i = 0; i < 3; ++i) {
    int calls = 0;
    store.async_renew([&](baton::store_error e, baton::renew_answer r) {
      ++calls;
      last = std::move(e);
      out = r;
    });
    EXPECT_TRUE(run_until(io, [&] { return calls > 0; })) << "renew never completed";
    if (!last) break;
  }
  EXPECT_FALSE(last) << last.message();
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
    last = acquire(io, store);
    if (last.error || last.value.acquired()) return last;
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
    a.watch(collect_resets(a_resets));
    b.watch(collect_resets(b_resets));
  }

  // A listener that keeps the `why` of every store_events::reset.
  static baton::lease_store::event_listener collect_resets(std::vector<std::string>& whys) {
    return [&whys](const baton::store_event& e) {
      if (const auto* reset = std::get_if<baton::store_events::reset>(&e))
        whys.push_back(reset->why);
    };
  }

  // An election that has run before: the counter exists.
  void seed() { seed_counter(server); }

  static bool held_back_without_holder(const baton::acquire_answer& answer) {
    return answer.outcome == baton::acquire_outcome::held_back && answer.holder.empty();
  }

  baton::testing::redis_server server;
  asio::io_context io;
  baton::redis_store a{io, options_for(server, "node-a", reset_ttl)};
  baton::redis_store b{io, options_for(server, "node-b", reset_ttl)};
  std::vector<std::string> a_resets;
  std::vector<std::string> b_resets;
};

// `baton init-store`: the record is created from TIME, so the first start of
// a new election acquires at once and its tokens are above any a lost
// counter could have reached; a second call changes nothing.
TEST_F(redis_store_reset_test, creating_the_record_lets_a_new_election_start_at_once) {
  outcome<baton::record_answer> made;
  a.async_create_record([&](baton::store_error e, baton::record_answer r) {
    ++made.calls;
    made.error = e;
    made.value = r;
  });
  ASSERT_TRUE(run_until(io, [&] { return made.calls > 0; }));
  ASSERT_FALSE(made.error) << made.error.message();
  EXPECT_EQ(made.value, baton::record_answer::created);
  const auto counter = std::stoull(server.command({"GET", baton::token_key(election)}).at(0));
  EXPECT_GT(counter, 1'700'000'000'000'000ULL) << "seeded from TIME in microseconds";

  auto r = acquire(io, b);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
  EXPECT_EQ(r.value.token, counter + 1);
  EXPECT_TRUE(b_resets.empty());

  outcome<baton::record_answer> again;
  a.async_create_record([&](baton::store_error e, baton::record_answer r2) {
    ++again.calls;
    again.error = e;
    again.value = r2;
  });
  ASSERT_TRUE(run_until(io, [&] { return again.calls > 0; }));
  EXPECT_EQ(again.value, baton::record_answer::existed);
  EXPECT_EQ(server.command({"GET", baton::token_key(election)}).at(0), std::to_string(counter + 1));
}

TEST_F(redis_store_reset_test, existing_counter_and_first_connection_acquire_at_once) {
  seed();
  auto r = acquire(io, a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
  EXPECT_EQ(r.value.token, 1001u);
  EXPECT_TRUE(a_resets.empty());
  EXPECT_EQ(a.status().last_reset, "");
  EXPECT_EQ(key_pttl(server, baton::fence_key(election)), -2) << "no fence";
}

TEST_F(redis_store_reset_test, missing_counter_holds_every_acquire_back_for_one_ttl) {
  seed();
  auto first = acquire(io, a);
  ASSERT_TRUE(first.value.acquired()) << last_error_of(a);
  // The lease ends and then the data goes: nothing in Redis tells a standby
  // that a leader may still be working.
  server.command({"DEL", baton::lease_key(election), baton::token_key(election)});

  const auto before_us = server_time_us(server);
  auto held = acquire(io, b);
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_FALSE(held.value.acquired());
  EXPECT_PRED1(held_back_without_holder, held.value);
  EXPECT_GT(held.value.remaining, reset_ttl - 500ms);
  EXPECT_LE(held.value.remaining, reset_ttl);
  // Re-seeded from the server's clock: above every token handed out before.
  EXPECT_GT(held.value.token, first.value.token);
  EXPECT_GE(held.value.token, before_us);
  EXPECT_EQ(counter(server), held.value.token);
  EXPECT_EQ(b_resets, std::vector<std::string>{"token counter missing"});
  EXPECT_EQ(b.status().last_reset, "token counter missing");
  EXPECT_EQ(server.command({"GET", baton::fence_key(election)}),
            std::vector<std::string>{"token counter missing"});
  EXPECT_TRUE(server.command({"GET", baton::lease_key(election)}).empty()) << "nothing acquired";

  // The fence holds everyone back, the old holder too; only the one that
  // found the loss reports it.
  auto also_held = acquire(io, a);
  ASSERT_FALSE(also_held.error) << also_held.error.message();
  EXPECT_FALSE(also_held.value.acquired());
  EXPECT_PRED1(held_back_without_holder, also_held.value);
  EXPECT_GT(also_held.value.remaining, 0ms);
  EXPECT_LE(also_held.value.remaining, held.value.remaining);
  EXPECT_TRUE(a_resets.empty());

  // Once the fence is gone, the next acquire wins with a larger token.
  const auto fenced_at = std::chrono::steady_clock::now();
  auto won = acquire_when_free(io, b, 10s);
  const auto waited = std::chrono::steady_clock::now() - fenced_at;
  ASSERT_FALSE(won.error) << won.error.message();
  ASSERT_TRUE(won.value.acquired());
  EXPECT_GT(won.value.token, held.value.token);
  EXPECT_GE(waited, also_held.value.remaining - 50ms);
  EXPECT_EQ(key_pttl(server, baton::fence_key(election)), -2);
}

TEST_F(redis_store_reset_test, a_holder_keeps_renewing_under_the_fence) {
  seed();
  auto first = acquire(io, a);
  ASSERT_TRUE(first.value.acquired()) << last_error_of(a);
  server.command({"DEL", baton::token_key(election)});

  auto held = acquire(io, b);
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_FALSE(held.value.acquired());
  // The lease survived: the real holder is reported, and the wait covers
  // both the fence and the lease.
  EXPECT_EQ(held.value.holder, "node-a");
  EXPECT_GT(held.value.remaining, reset_ttl - 500ms);
  EXPECT_EQ(renew_once(io, a), baton::renew_answer::renewed);
  // Even our own lease cannot be re-acquired while the fence is up.
  auto again = acquire(io, a);
  EXPECT_FALSE(again.value.acquired());
  EXPECT_EQ(again.value.holder, "node-a");
}

TEST_F(redis_store_reset_test, restart_empty_holds_a_standby_back_for_one_ttl) {
  seed();
  auto first = acquire(io, a);
  ASSERT_TRUE(first.value.acquired()) << last_error_of(a);
  auto standby = acquire(io, b);
  ASSERT_FALSE(standby.value.acquired()) << last_error_of(b);

  server.restart();
  const auto restarted_at = std::chrono::steady_clock::now();
  // The old leader learns at its next renewal that its lease is gone.
  EXPECT_EQ(renew_once(io, a), baton::renew_answer::lost);

  auto held = acquire_answered(io, b);
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_FALSE(held.value.acquired());
  EXPECT_PRED1(held_back_without_holder, held.value);
  EXPECT_GT(held.value.remaining, reset_ttl - 600ms);
  EXPECT_GT(held.value.token, first.value.token);
  ASSERT_EQ(b_resets.size(), 1u);
  EXPECT_EQ(b_resets[0].rfind("run_id changed from ", 0), 0u) << b_resets[0];

  auto won = acquire_when_free(io, b, 10s);
  ASSERT_FALSE(won.error) << won.error.message();
  ASSERT_TRUE(won.value.acquired());
  // The fence was set at the first contact after the restart, so no acquire
  // could succeed sooner than one ttl after the restart (less the time to
  // notice it).
  EXPECT_GE(std::chrono::steady_clock::now() - restarted_at, reset_ttl - 200ms);
  EXPECT_GT(won.value.token, first.value.token);
  EXPECT_EQ(b_resets.size(), 1u) << "reported once";
}

TEST_F(redis_store_reset_test, run_id_change_with_the_counter_intact_sets_the_fence) {
  seed();
  auto first = acquire(io, a);
  ASSERT_TRUE(first.value.acquired()) << last_error_of(a);
  auto standby = acquire(io, b);
  ASSERT_FALSE(standby.value.acquired()) << last_error_of(b);

  // As a promoted replica that had the counter but not the lease: a new
  // run_id, the counter as it was, no lease key.
  server.restart();
  server.command({"SET", baton::token_key(election), std::to_string(first.value.token)});
  const auto before_us = server_time_us(server);

  auto held = acquire_answered(io, b);
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_FALSE(held.value.acquired()) << "a changed run_id must hold the acquire back";
  EXPECT_PRED1(held_back_without_holder, held.value);
  EXPECT_GT(held.value.remaining, reset_ttl - 500ms);
  EXPECT_LE(held.value.remaining, reset_ttl);
  EXPECT_EQ(server.command({"GET", baton::fence_key(election)}),
            std::vector<std::string>{"run_id changed"});
  // The counter is lifted to the server's clock, far above the old term.
  EXPECT_GE(held.value.token, before_us);
  EXPECT_GT(held.value.token, first.value.token);
  ASSERT_EQ(b_resets.size(), 1u);
  EXPECT_NE(b_resets[0].find("run_id changed"), std::string::npos) << b_resets[0];
  EXPECT_NE(b.status().last_reset.find("run_id changed"), std::string::npos);
}

TEST_F(redis_store_reset_test, a_new_store_on_a_restarted_server_sees_no_change) {
  seed();
  server.restart();
  seed();
  // Its first connection: nothing to compare with.
  auto r = acquire(io, a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
  EXPECT_TRUE(a_resets.empty());
}

TEST_F(redis_store_reset_test, a_longer_fence_is_never_shortened) {
  seed();
  server.command({"SET", baton::fence_key(election), "operator hold", "PX", "60000"});
  auto held = acquire(io, a);
  ASSERT_FALSE(held.value.acquired()) << last_error_of(a);
  EXPECT_GT(held.value.remaining, 50s);
  server.command({"DEL", baton::token_key(election)});
  auto reset = acquire(io, a);
  ASSERT_FALSE(reset.value.acquired()) << last_error_of(a);
  EXPECT_GT(key_pttl(server, baton::fence_key(election)), 50000);
  EXPECT_EQ(server.command({"GET", baton::fence_key(election)}),
            std::vector<std::string>{"operator hold"});
  // A fence without expiry (an operator's hold) stays until deleted.
  server.command({"SET", baton::fence_key(election), "operator hold"});
  auto forever = acquire(io, b);
  ASSERT_FALSE(forever.value.acquired()) << last_error_of(b);
  EXPECT_EQ(forever.value.remaining, milliseconds(-1));
  server.command({"DEL", baton::fence_key(election)});
  EXPECT_TRUE(acquire(io, b).value.acquired()) << last_error_of(b);
}

}  // namespace
