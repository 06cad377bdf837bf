// The front runners of a large election against a real redis-server (large
// here above 6 listening, not the default 128, to keep the tests small):
// which standbys a held answer counts as front runners (the first three
// refused, while they keep trying, or a higher priority) and which as back
// runners, that a back runner stays out of the registry, that a small
// election has none, that a front runner that takes the lease gives its
// place up, and that a place lapses two ttls after its standby last tried.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
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

class redis_front_runner_test : public ::testing::Test {
 protected:
  redis_front_runner_test() { seed_counter(server); }

  // `count` candidates node-1 ... node-N, each listening for announcements,
  // with `ttl`; returns once all are subscribed.
  void make_candidates(int count, milliseconds ttl = default_ttl, int high_priority_node = 0,
                       const std::string& user = "") {
    for (int i = 1; i <= count; ++i) {
      auto options = options_for(server, "node-" + std::to_string(i), ttl);
      options.large_election = 6;
      if (i == high_priority_node) options.identity.priority = 5;
      if (!user.empty()) {
        options.endpoint.username = user;
        options.endpoint.password = "secret";
      }
      stores.push_back(std::make_unique<baton::redis_store>(io, std::move(options)));
      terms_by_node.push_back(0);
      stores.back()->watch([this, i](const baton::store_event& e) {
        if (std::holds_alternative<baton::store_events::acquired>(e)) {
          ++terms_heard;
          ++terms_by_node.at(static_cast<std::size_t>(i - 1));
        }
        if (std::holds_alternative<baton::store_events::released>(e)) ++releases_heard;
      });
    }
    ASSERT_TRUE(run_until(io, [&] {
      for (const auto& s : stores)
        if (wakeups_of(*s) != "subscribed") return false;
      return true;
    })) << "not every candidate subscribed";
  }
  baton::redis_store& candidate(int n) { return *stores.at(static_cast<std::size_t>(n - 1)); }
  long long listeners(const std::string& channel) const {
    return std::stoll(server.command({"PUBSUB", "NUMSUB", channel}).at(1));
  }
  std::string front_list() const {
    auto v = server.command({"GET", baton::front_key(election)});
    return v.empty() ? std::string() : v.at(0);
  }

  baton::testing::redis_server server;
  asio::io_context io;
  std::vector<std::unique_ptr<baton::redis_store>> stores;
  int terms_heard = 0;             // `acquired` announcements, every candidate's together
  std::vector<int> terms_by_node;  // and each candidate's (node-1 first)
  // `released` events, every candidate's together: announcements, and one
  // after each (re)subscribe (a move to another channel included).
  int releases_heard = 0;
};

TEST_F(redis_front_runner_test, the_first_three_refused_lead_the_herd_and_the_rest_follow) {
  make_candidates(8);
  ASSERT_TRUE(acquire(io, candidate(1)).value.acquired());
  for (int n = 2; n <= 4; ++n) {
    auto held = acquire(io, candidate(n));
    ASSERT_FALSE(held.error) << held.error.message();
    ASSERT_FALSE(held.value.acquired());
    EXPECT_FALSE(held.value.back_runner) << "node-" << n;
    EXPECT_EQ(held.value.contenders, 4) << "the front runners and the holder";
  }
  for (int n = 5; n <= 8; ++n) {
    auto held = acquire(io, candidate(n));
    ASSERT_FALSE(held.error) << held.error.message();
    EXPECT_TRUE(held.value.back_runner) << "node-" << n;
    EXPECT_EQ(held.value.contenders, 8) << "every listening candidate";
  }
  // A front runner keeps its place by trying again; a back runner stays behind.
  EXPECT_FALSE(acquire(io, candidate(3)).value.back_runner);
  EXPECT_TRUE(acquire(io, candidate(6)).value.back_runner);
  // The list names the front runners only, and expires with them.
  const auto list = front_list();
  for (const char* node : {"node-2 ", "node-3 ", "node-4 "})
    EXPECT_NE(list.find(node), std::string::npos) << list;
  EXPECT_EQ(list.find("node-5"), std::string::npos) << list;
  const auto left = std::stoll(server.command({"PTTL", baton::front_key(election)}).at(0));
  EXPECT_GT(left, 5000);  // two ttls of 5 s
  EXPECT_LE(left, 10000);
}

// A back runner is neither registered nor told of priorities; a higher
// priority takes the place of the lowest front runner, which is told so at
// its next attempt.
TEST_F(redis_front_runner_test,
       a_higher_priority_takes_a_front_place_and_back_runners_stay_unlisted) {
  make_candidates(8, default_ttl, 7);
  ASSERT_TRUE(acquire(io, candidate(1)).value.acquired());
  for (int n = 2; n <= 4; ++n) ASSERT_FALSE(acquire(io, candidate(n)).value.back_runner);
  auto back = acquire(io, candidate(5));
  EXPECT_TRUE(back.value.back_runner);
  EXPECT_LT(back.value.outranked_by, 0) << "a back runner reads no registry";
  const auto registry = server.command({"GET", baton::candidates_key(election)}).at(0);
  EXPECT_EQ(registry.find("node-5 "), std::string::npos) << registry;
  EXPECT_NE(registry.find("node-4 "), std::string::npos) << registry;

  auto high = acquire(io, candidate(7));
  EXPECT_FALSE(high.value.back_runner) << "priority 5 displaces a priority 0";
  EXPECT_EQ(high.value.outranked_by, 0);
  int backs = 0;
  for (int n = 2; n <= 4; ++n) backs += acquire(io, candidate(n)).value.back_runner ? 1 : 0;
  EXPECT_EQ(backs, 1) << server.command({"GET", baton::front_key(election)}).at(0);
  EXPECT_FALSE(acquire(io, candidate(7)).value.back_runner);
}

TEST_F(redis_front_runner_test, a_front_runner_that_takes_the_lease_gives_its_place_up) {
  make_candidates(8);
  ASSERT_TRUE(acquire(io, candidate(1)).value.acquired());
  for (int n = 2; n <= 5; ++n) ASSERT_FALSE(acquire(io, candidate(n)).value.acquired());
  EXPECT_TRUE(acquire(io, candidate(5)).value.back_runner);
  ASSERT_EQ(release(io, candidate(1)).value, baton::release_answer::released);
  ASSERT_TRUE(acquire(io, candidate(2)).value.acquired());
  EXPECT_EQ(front_list().find("node-2"), std::string::npos) << front_list();
  auto held = acquire(io, candidate(5));
  EXPECT_FALSE(held.value.back_runner) << "node-5 takes the place node-2 left";
  EXPECT_EQ(held.value.contenders, 4);
}

// While the election has front runners a new term is not announced: the
// herd would wake to read it as the winner's app starts. The release still is.
TEST_F(redis_front_runner_test, a_term_begun_among_front_runners_is_not_announced) {
  make_candidates(8);
  ASSERT_TRUE(acquire(io, candidate(1)).value.acquired());
  ASSERT_TRUE(run_until(io, [&] { return terms_heard == 8; })) << terms_heard;
  for (int n = 2; n <= 4; ++n) ASSERT_FALSE(acquire(io, candidate(n)).value.acquired());
  ASSERT_EQ(release(io, candidate(1)).value, baton::release_answer::released);
  // node-2..4 and node-5..8 (which never tried) hear the release.
  ASSERT_TRUE(run_until(io, [&] { return releases_heard == 7; })) << releases_heard;
  ASSERT_TRUE(acquire(io, candidate(3)).value.acquired());
  run_for(io, 300ms);
  EXPECT_EQ(terms_heard, 8) << "node-3's term was announced";
  // Once nobody is a front runner any more, terms are announced again:
  // node-8, on the events channel all along, hears the next one.
  server.command({"DEL", baton::front_key(election)});
  ASSERT_EQ(release(io, candidate(3)).value, baton::release_answer::released);
  ASSERT_TRUE(acquire(io, candidate(4)).value.acquired());
  EXPECT_TRUE(run_until(io, [&] { return terms_by_node.at(7) == 2; })) << terms_by_node.at(7);
}

// A back runner listens on the back runners' channel, where nothing is
// announced: a release wakes only the front runners. The acquire script
// still counts it, so the election stays large.
TEST_F(redis_front_runner_test, back_runners_listen_apart_and_sleep_through_a_release) {
  make_candidates(8);
  ASSERT_TRUE(acquire(io, candidate(1)).value.acquired());
  for (int n = 2; n <= 8; ++n) ASSERT_FALSE(acquire(io, candidate(n)).value.acquired());
  ASSERT_TRUE(run_until(io, [&] {
    for (const auto& st : stores)
      if (wakeups_of(*st) != "subscribed") return false;
    return listeners(baton::back_runners_channel(election)) == 4;
  })) << listeners(baton::back_runners_channel(election));
  EXPECT_EQ(listeners(baton::events_channel(election)), 4);  // the holder, three front runners
  auto again = acquire(io, candidate(8));
  EXPECT_TRUE(again.value.back_runner);
  EXPECT_EQ(again.value.contenders, 8);
  releases_heard = 0;
  ASSERT_EQ(release(io, candidate(1)).value, baton::release_answer::released);
  ASSERT_TRUE(run_until(io, [&] { return releases_heard >= 3; })) << releases_heard;
  run_for(io, 300ms);
  EXPECT_EQ(releases_heard, 3) << "only the front runners heard it";
}

// A user whose ACL does not grant the back runners' channel: a back runner
// stays on the events channel, and keeps hearing releases.
TEST_F(redis_front_runner_test, a_back_runner_the_acl_keeps_off_its_channel_stays_on_the_events_channel) {
  server.command({"ACL", "SETUSER", "narrow", "on", ">secret", "resetchannels",
                  "~baton:{" + election + "}:*", "&" + baton::events_channel(election), "-@all",
                  "+evalsha", "+eval", "+info", "+subscribe", "+ping", "+get", "+set", "+pexpire",
                  "+pttl", "+exists", "+incr", "+del", "+time", "+publish", "+pubsub|numsub"});
  make_candidates(8, default_ttl, 0, "narrow");
  ASSERT_TRUE(acquire(io, candidate(1)).value.acquired());
  for (int n = 2; n <= 5; ++n) ASSERT_FALSE(acquire(io, candidate(n)).value.acquired());
  // node-5, a back runner, is refused the back runners' channel and comes
  // back to the events channel.
  ASSERT_TRUE(run_until(io, [&] {
    return listeners(baton::events_channel(election)) == 8 &&
           wakeups_of(candidate(5)) == "subscribed";
  })) << listeners(baton::events_channel(election)) << " " << wakeups_of(candidate(5));
  EXPECT_EQ(listeners(baton::back_runners_channel(election)), 0);
  auto back = acquire(io, candidate(5));
  EXPECT_TRUE(back.value.back_runner) << back.value.contenders;
  EXPECT_EQ(back.value.contenders, 8);
  EXPECT_EQ(wakeups_of(candidate(5)), "subscribed");
  run_for(io, 200ms);
  EXPECT_EQ(wakeups_of(candidate(5)), "subscribed") << "it stays put";
  EXPECT_EQ(listeners(baton::events_channel(election)), 8);
}

TEST_F(redis_front_runner_test, a_small_election_has_no_front_runners) {
  make_candidates(6);  // six listening: no more than the front runners + 3
  ASSERT_TRUE(acquire(io, candidate(1)).value.acquired());
  for (int n = 2; n <= 6; ++n) {
    auto held = acquire(io, candidate(n));
    ASSERT_FALSE(held.error) << held.error.message();
    EXPECT_FALSE(held.value.back_runner) << "node-" << n;
    EXPECT_EQ(held.value.contenders, 6);
  }
  EXPECT_EQ(front_list(), "");
}

TEST_F(redis_front_runner_test, a_place_lapses_two_ttls_after_its_standby_last_tried) {
  // ttl 1 s: places last 2 s. The holder renews; node-2..4 try once and stop.
  make_candidates(8, 1000ms);
  ASSERT_TRUE(acquire(io, candidate(1)).value.acquired());
  // Taken before the first place is: none can lapse before two ttls from
  // here (100 ms less, for the server's clock against this one).
  const auto lapsed = std::chrono::steady_clock::now() + 1900ms;
  for (int n = 2; n <= 4; ++n) ASSERT_FALSE(acquire(io, candidate(n)).value.back_runner);
  EXPECT_TRUE(acquire(io, candidate(5)).value.back_runner);
  bool front = false;
  // Bounded: 60 rounds of at most ~100 ms each.
  for (int round = 0; round < 60 && !front; ++round) {
    ASSERT_EQ(renew(io, candidate(1)).value, baton::renew_answer::renewed);
    front = !acquire(io, candidate(5)).value.back_runner;
    if (!front) run_for(io, 100ms);
  }
  EXPECT_TRUE(front) << "node-5 never got a lapsed place";
  EXPECT_GE(std::chrono::steady_clock::now(), lapsed) << "a place went before two ttls";
}

}  // namespace
