// redlock_store's calls for lease.failsafe peers against three real
// redis-servers: what the contract (tests/contract/failsafe_contract.cpp)
// cannot show with all masters alike. The record is on every master that
// granted a win, and on no other; a record's hold refuses once a majority
// holds it, and a record on a minority names nobody to clear with; a resume
// takes a master that lost its data back while two keep the record, and
// is lost where a majority holds another term, unknown when too few say.
#include <gtest/gtest.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "integration/redis/store_test_util.hpp"
#include "integration/redlock/redlock_test_util.hpp"
#include "redis/lease_keys.hpp"
#include "redlock/redlock_store.hpp"
#include "support/servers/redis_server.hpp"

namespace baton {
namespace {

namespace util = baton::testing::store_test_util;
namespace redlock_util = baton::testing::redlock_test_util;
using baton::testing::redis_server;
using namespace std::chrono_literals;

const failsafe_peer rl_peer_b{"node-b", "10.0.0.2:9465"};
const failsafe_peer rl_peer_c{"node-c", "10.0.0.3:9465"};

class redlock_failsafe_test : public ::testing::Test {
 protected:
  redlock_failsafe_test() {
    for (auto& server : servers_) util::seed_counter(server);
  }

  std::unique_ptr<redlock_store> make(const std::string& node, const std::string& address) {
    auto o = redlock_util::options_for(servers_, node, 5s);
    o.identity.peer_address = address;
    o.connect_timeout = 2s;
    o.command_timeout = 2s;
    return std::make_unique<redlock_store>(io_, std::move(o));
  }

  util::acquired acquire_with(lease_store& s, const failsafe_acquire& a) {
    return util::completed<acquire_answer>(
        io_, "acquire", [&](auto h) { s.failsafe()->async_acquire(a, std::move(h)); });
  }
  util::outcome<renew_answer> resume_with(lease_store& s, std::uint64_t token,
                                          const failsafe_list& l) {
    return util::completed<renew_answer>(
        io_, "resume", [&](auto h) { s.failsafe()->async_resume(token, l, std::move(h)); });
  }
  // A resume asked again until the restarted master 1 is ours again: its
  // connection fails the first call, and the take after a won round leaves
  // a fenced master alone. At most five times.
  util::outcome<renew_answer> resume_until_master_1_is_back(lease_store& s, std::uint64_t token,
                                                            const failsafe_list& l,
                                                            const std::string& value) {
    util::outcome<renew_answer> r;
    for (int i = 0; i < 5; ++i) {
      r = resume_with(s, token, l);
      if (!r.error && r.value == renew_answer::renewed &&
          get_on(servers_[0], lease_key(util::election)) == value) {
        break;
      }
    }
    return r;
  }
  std::string get_on(const redis_server& server, const std::string& key) const {
    const auto r = server.command({"GET", key});
    return r.empty() ? std::string() : r.front();
  }
  std::string record_on(const redis_server& server) const {
    return get_on(server, failsafe_key(util::election));
  }
  // node-a wins with node-b and node-c listed: its token.
  std::uint64_t a_leads(lease_store& a) {
    failsafe_acquire args;
    args.list = {1, {rl_peer_b, rl_peer_c}};
    auto won = acquire_with(a, args);
    EXPECT_FALSE(won.error) << won.error.message();
    EXPECT_TRUE(won.value.acquired()) << won.value.why;
    return won.value.token;
  }
  // The lease gone on every master, as after its expiry (the record stays).
  void leases_expire() {
    for (auto& server : servers_) {
      server.command({"DEL", lease_key(util::election), holder_key(util::election)});
    }
  }
  // Another node's term in master `i`'s record: "<token> <list> <value>
  // <address>" and its list.
  void other_term_on(std::size_t i, std::uint64_t token, const std::string& list_number) {
    servers_[i].command({"SET", failsafe_key(util::election),
                         std::to_string(token) + " " + list_number +
                             " node-x:1a2b 10.0.0.9:9465\nnode-b 10.0.0.2:9465"});
  }

  boost::asio::io_context io_;
  std::array<redis_server, 3> servers_;
};

TEST_F(redlock_failsafe_test, a_win_leaves_the_record_on_every_granting_master_only) {
  // Master 3 holds another node's lease: a wins masters 1 and 2.
  servers_[2].command({"SET", lease_key(util::election), "node-x:1", "PX", "60000"});
  auto a = make("node-a", "10.0.0.1:9465");
  const auto token = a_leads(*a);
  ASSERT_NE(token, 0u);
  const auto value = get_on(servers_[0], lease_key(util::election));
  ASSERT_EQ(value.rfind("node-a:", 0), 0u) << value;
  const std::string head = std::to_string(token) + " 1 " + value + " 10.0.0.1:9465";
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(record_on(servers_[i]), head + "\nnode-b 10.0.0.2:9465\nnode-c 10.0.0.3:9465")
        << "master " << i + 1;
    EXPECT_EQ(get_on(servers_[i], term_key(util::election)), std::to_string(token));
  }
  EXPECT_EQ(record_on(servers_[2]), "") << "a master that did not grant has no record of the term";
  ASSERT_EQ(util::release(io_, *a).value, release_answer::released);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(record_on(servers_[i]), "") << "the release deleted the record on master " << i + 1;
  }
}

TEST_F(redlock_failsafe_test, a_record_held_by_a_majority_refuses_with_its_newest_list) {
  other_term_on(0, 900, "2");
  servers_[1].command({"SET", failsafe_key(util::election),
                       "900 3 node-x:1a2b 10.0.0.9:9465\nnode-c 10.0.0.3:9465"});
  auto b = make("node-b", "10.0.0.2:9465");
  auto held = acquire_with(*b, {});
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, acquire_outcome::held_back);
  ASSERT_TRUE(held.value.failsafe_hold) << held.value.why;
  EXPECT_EQ(held.value.failsafe_hold->leader, "node-x");
  EXPECT_EQ(held.value.failsafe_hold->token, 900u);
  EXPECT_EQ(held.value.failsafe_hold->leader_address, "10.0.0.9:9465");
  EXPECT_EQ(held.value.failsafe_hold->peers, (std::vector<failsafe_peer>{rl_peer_c}))
      << "the newest list of the two";
  auto won = acquire_with(*b, [] {
    failsafe_acquire a;
    a.cleared_token = 900;
    return a;
  }());
  EXPECT_TRUE(won.value.acquired()) << won.error.message() << " " << won.value.why;
}

// A minority's record may hold a list older than the one its leader asks:
// refused, but naming nobody to clear with. The two fenced masters are a
// refusing majority on their own, so they answer only after master 0 (held
// stopped until then): the round then weighs the record too, and says why.
TEST_F(redlock_failsafe_test, a_record_on_a_minority_names_nobody_to_clear_with) {
  other_term_on(0, 900, "2");
  for (std::size_t i = 1; i < 3; ++i) {
    servers_[i].command({"SET", fence_key(util::election), "test", "PX", "60000"});
  }
  auto b = make("node-b", "10.0.0.2:9465");
  for (std::size_t i = 1; i < 3; ++i) servers_[i].signal(SIGSTOP);
  util::acquired held;
  b->failsafe()->async_acquire({}, [&](store_error e, acquire_answer a) {
    ++held.calls;
    held.error = std::move(e);
    held.value = std::move(a);
  });
  util::run_for(io_, 300ms);
  for (std::size_t i = 1; i < 3; ++i) servers_[i].signal(SIGCONT);
  ASSERT_EQ(held.calls, 0) << "decided before a majority answered: " << held.value.why;
  ASSERT_TRUE(util::run_until(io_, [&] { return held.calls > 0; })) << "the acquire never completed";
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, acquire_outcome::held_back);
  EXPECT_FALSE(held.value.failsafe_hold);
  EXPECT_NE(held.value.why.find("only 1 of 3 masters"), std::string::npos) << held.value.why;
}

TEST_F(redlock_failsafe_test, a_resume_takes_back_a_master_that_lost_its_data) {
  auto a = make("node-a", "10.0.0.1:9465");
  const auto token = a_leads(*a);
  const auto value = get_on(servers_[0], lease_key(util::election));
  leases_expire();
  servers_[0].restart();
  auto resumed = resume_until_master_1_is_back(*a, token, {2, {rl_peer_b}}, value);
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  ASSERT_EQ(resumed.value, renew_answer::renewed);
  const std::string record =
      std::to_string(token) + " 2 " + value + " 10.0.0.1:9465\nnode-b 10.0.0.2:9465";
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(get_on(servers_[i], lease_key(util::election)), value) << "master " << i + 1;
    EXPECT_EQ(record_on(servers_[i]), record) << "master " << i + 1;
  }
  // The wiped master: its counter at least the token (its clock's seed is
  // above), its term key the token.
  EXPECT_EQ(get_on(servers_[0], term_key(util::election)), std::to_string(token));
  EXPECT_GE(std::stoull(get_on(servers_[0], token_key(util::election))), token);
  auto c = make("node-c", "10.0.0.3:9465");
  auto seen = acquire_with(*c, {});
  EXPECT_EQ(seen.value.outcome, acquire_outcome::held);
  EXPECT_EQ(seen.value.holder, "node-a");
  EXPECT_EQ(seen.value.token, token) << "the app keeps its token";
}

TEST_F(redlock_failsafe_test, a_resume_is_lost_where_a_majority_holds_another_term) {
  auto a = make("node-a", "10.0.0.1:9465");
  const auto token = a_leads(*a);
  leases_expire();
  other_term_on(0, token + 5, "1");
  other_term_on(1, token + 5, "1");
  auto resumed = resume_with(*a, token, {2, {}});
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  EXPECT_EQ(resumed.value, renew_answer::lost);
  EXPECT_NE(record_on(servers_[0]).find("node-x"), std::string::npos) << "left as it was";
}

// One master says another term exists, one is gone: neither a majority
// resumed nor one that says lost, so the daemon asks again.
TEST_F(redlock_failsafe_test, a_resume_answered_by_too_few_masters_is_an_error) {
  auto a = make("node-a", "10.0.0.1:9465");
  const auto token = a_leads(*a);
  leases_expire();
  other_term_on(0, token + 5, "1");
  servers_[1].kill_and_wait();
  auto resumed = resume_with(*a, token, {2, {}});
  EXPECT_TRUE(resumed.error) << "a resume answered by too few masters is not known";
  EXPECT_EQ(resumed.value, renew_answer::lost);
}

}  // namespace
}  // namespace baton
