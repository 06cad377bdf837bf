// The lease key vanishes before its time (a DEL, an eviction): the holder
// record keeps every other candidate out until the lease would have ended,
// the holder's own renewal reports the loss, and a release ends the hold.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>

#include "redis/lease_keys.hpp"
#include "redis/redis_store.hpp"
#include "store_test_util.hpp"
#include "support/servers/redis_server.hpp"

namespace {

namespace asio = boost::asio;
using namespace baton::testing::store_test_util;

baton::renew_answer renew_before_loss(asio::io_context& io, baton::redis_store& store) {
  int calls = 0;
  baton::renew_answer answer{};
  store.async_renew([&](baton::store_error e, baton::renew_answer r) {
    ++calls;
    EXPECT_FALSE(e) << e.message();
    answer = r;
  });
  EXPECT_TRUE(run_until(io, [&] { return calls > 0; }));
  return answer;
}

TEST(redis_early_loss, a_deleted_lease_key_holds_others_back_until_its_expiry) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  baton::redis_store a(io, options_for(server, "a"));
  baton::redis_store b(io, options_for(server, "b"));
  ASSERT_TRUE(acquire(io, a).value.acquired());
  server.command({"DEL", baton::lease_key(election)});

  const auto r = acquire(io, b);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value.outcome, baton::acquire_outcome::held_back);
  EXPECT_EQ(r.value.holder, "a");
  EXPECT_GT(r.value.remaining.count(), 0);
  EXPECT_LE(r.value.remaining, default_ttl);
  EXPECT_NE(r.value.why.find("vanished before its expiry"), std::string::npos) << r.value.why;
  EXPECT_EQ(server.command({"EXISTS", baton::lease_key(election)}).front(), "0")
      << "a held-back acquire must not take the key";

  // The holder learns it at its next renewal, and stops.
  EXPECT_EQ(renew_before_loss(io, a), baton::renew_answer::lost);
}

TEST(redis_early_loss, the_hold_ends_when_the_lease_would_have) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  constexpr baton::milliseconds short_ttl{400};
  baton::redis_store a(io, options_for(server, "a", short_ttl));
  baton::redis_store b(io, options_for(server, "b", short_ttl));
  ASSERT_TRUE(acquire(io, a).value.acquired());
  server.command({"DEL", baton::lease_key(election)});
  const auto held = acquire(io, b);
  ASSERT_EQ(held.value.outcome, baton::acquire_outcome::held_back);
  // Wait out the remaining time the store named, and a little more.
  run_for(io, held.value.remaining + baton::milliseconds(50));
  const auto r = acquire(io, b);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
}

TEST(redis_early_loss, a_release_ends_the_hold_at_once) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  baton::redis_store a(io, options_for(server, "a"));
  baton::redis_store b(io, options_for(server, "b"));
  ASSERT_TRUE(acquire(io, a).value.acquired());
  int calls = 0;
  a.async_release([&](baton::store_error e, baton::release_answer r) {
    ++calls;
    EXPECT_FALSE(e);
    EXPECT_EQ(r, baton::release_answer::released);
  });
  ASSERT_TRUE(run_until(io, [&] { return calls > 0; }));
  EXPECT_EQ(server.command({"EXISTS", baton::holder_key(election)}).front(), "0");
  EXPECT_TRUE(acquire(io, b).value.acquired());
}

TEST(redis_early_loss, the_holder_itself_may_take_its_vanished_key_back) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  baton::redis_store a(io, options_for(server, "a"));
  ASSERT_TRUE(acquire(io, a).value.acquired());
  server.command({"DEL", baton::lease_key(election)});
  EXPECT_TRUE(acquire(io, a).value.acquired());
}

TEST(redis_early_loss, an_evicted_lease_key_holds_others_back) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  baton::redis_store a(io, options_for(server, "a"));
  baton::redis_store b(io, options_for(server, "b"));
  ASSERT_TRUE(acquire(io, a).value.acquired());
  const auto info = server.command({"INFO", "memory"}).front();
  const long used = std::stol(info.substr(info.find("used_memory:") + 12));
  server.command({"CONFIG", "SET", "maxmemory-policy", "volatile-ttl"});
  server.command({"CONFIG", "SET", "maxmemory", std::to_string(used + 256 * 1024)});
  const std::string filler(16 * 1024, 'x');
  bool evicted = false;
  for (int i = 0; i < 200 && !evicted; ++i) {
    try {
      server.command({"SET", "filler:" + std::to_string(i), filler});
    } catch (const std::runtime_error&) {
      // OOM: the write that found nothing more to evict; the lease went first.
    }
    evicted = server.command({"EXISTS", baton::lease_key(election)}).front() == "0";
  }
  ASSERT_TRUE(evicted) << "the lease key was never evicted";
  EXPECT_EQ(server.command({"EXISTS", baton::holder_key(election)}).front(), "1")
      << "the record has no TTL: volatile-* never evicts it";
  server.command({"CONFIG", "SET", "maxmemory", "0"});
  const auto r = acquire(io, b);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value.outcome, baton::acquire_outcome::held_back);
  EXPECT_EQ(r.value.holder, "a");
}

}  // namespace
