// redlock_store's switchover and candidate registry against three real
// redis-servers (the fixture: redlock_fixture.hpp): what the contract suite
// cannot show with all masters alike. A hand-over with one master down
// still reserves a majority for its target; a won renewal never takes a
// master reserved for another; the candidate list is the union of the
// masters' registries and needs a majority of answers; a refusal's count of
// the candidates above it is the largest any master gave; a candidate that
// restarted under its node id is live since its restart, whatever a master
// it did not reach still holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "baton/lease_store.hpp"
#include "integration/redis/store_test_util.hpp"
#include "integration/redlock/redlock_fixture.hpp"
#include "redis/lease_keys.hpp"
#include "support/servers/redis_server.hpp"

namespace baton {
namespace {

namespace util = baton::testing::store_test_util;
using baton::testing::redis_server;
using namespace std::chrono_literals;

class redlock_switchover_test : public baton::testing::redlock_fixture {
 protected:
  util::outcome<release_answer> hand_over(lease_store& s, const std::string& to,
                                          milliseconds window) {
    return util::completed<release_answer>(
        io_, "hand-over", [&](auto h) { s.async_hand_over(to, window, std::move(h)); });
  }

  util::outcome<std::vector<candidate_info>> candidates(lease_store& s) {
    return util::completed<std::vector<candidate_info>>(
        io_, "candidates", [&](auto h) { s.async_candidates(std::move(h)); });
  }

  std::vector<std::string> lease_on(const redis_server& server) const {
    return server.command({"GET", lease_key(util::election)});
  }

  // Runs the loop until every master's registry has `node`'s line: an acquire
  // answers once a majority did, and the third master's write may still be
  // on its way.
  bool registered_everywhere(const std::string& node) {
    const auto registry = candidates_key(util::election);
    return util::run_until(io_, [&] {
      for (const auto& server : servers_) {
        const auto text = server.command({"GET", registry});
        if (text.empty() || text.at(0).find(node + " ") == std::string::npos) return false;
      }
      return true;
    });
  }

  // The server's clock in ms, as the registry's lines count it.
  static long long registry_ms(const redis_server& server) {
    return std::stoll(server.command({"TIME"}).at(0)) * 1000;
  }
};

// A master down during the hand-over: the two that answer are reserved,
// which is a majority for the target and a refusal for anyone else.
TEST_F(redlock_switchover_test, a_hand_over_without_one_master_still_reserves_a_majority) {
  auto a = make("node-a", 5s, 1s);
  auto b = make("node-b", 5s, 1s);
  auto c = make("node-c", 5s, 1s);
  auto first = acquire(*a);
  ASSERT_TRUE(first.value.acquired());
  servers_[2].kill_and_wait();

  auto handed = hand_over(*a, "node-b", 5s);
  ASSERT_FALSE(handed.error) << handed.error.message();
  ASSERT_EQ(handed.value, release_answer::released);
  for (int m = 0; m < 2; ++m) {
    EXPECT_EQ(lease_on(servers_[m]), std::vector<std::string>{"(reserved) node-b node-a"});
  }

  auto other = acquire(*c);
  ASSERT_FALSE(other.error) << other.error.message();
  EXPECT_EQ(other.value.outcome, acquire_outcome::held);
  EXPECT_EQ(other.value.holder, "node-a");
  EXPECT_EQ(other.value.reserved_for, "node-b");
  // Unknown when the round was settled by the dead master and one reserved
  // one, before the other's answer: then not even a majority can say when.
  if (other.value.remaining >= 0ms) {
    EXPECT_GT(other.value.remaining, 3s);
    EXPECT_LE(other.value.remaining, 5s);
  }

  auto taken = acquire(*b);
  ASSERT_FALSE(taken.error) << taken.error.message();
  ASSERT_TRUE(taken.value.acquired());
  EXPECT_GT(taken.value.token, first.value.token);
  for (int m = 0; m < 2; ++m) {
    EXPECT_EQ(lease_on(servers_[m]).at(0).rfind("node-b:", 0), 0u) << "master " << m + 1;
  }
}

// A leader on two masters whose renewal finds the third reserved (a
// hand-over of an older term there) leaves it reserved: a take only takes a
// key that is absent.
TEST_F(redlock_switchover_test, a_won_renewal_never_takes_a_reserved_master) {
  auto a = make("node-a");
  const auto lease = lease_key(util::election);
  servers_[2].command({"SET", lease, "node-x:1", "PX", "60000"});
  ASSERT_TRUE(acquire(*a).value.acquired());
  servers_[2].command({"SET", lease, "(reserved) node-b node-x", "PX", "60000"});

  ASSERT_EQ(renew(*a).value, renew_answer::renewed);
  // Let the take (if any) run.
  ASSERT_EQ(renew(*a).value, renew_answer::renewed);
  EXPECT_EQ(lease_on(servers_[2]), std::vector<std::string>{"(reserved) node-b node-x"});
  EXPECT_FALSE(a->status().members[2].holds_lease);
}

// Every master keeps its own registry; the list is their union, and needs
// a majority of answers.
TEST_F(redlock_switchover_test, candidates_are_the_union_of_the_masters_registries) {
  auto a = make("node-a", 5s, 1s);
  ASSERT_TRUE(acquire(*a).value.acquired());
  ASSERT_TRUE(registered_everywhere("node-a"));
  // A candidate only master 3 saw (it reaches no other), priority 4.
  const auto now_ms = std::stoll(servers_[2].command({"TIME"}).at(0)) * 1000;
  servers_[2].command({"SET", candidates_key(util::election),
                       servers_[2].command({"GET", candidates_key(util::election)}).at(0) +
                           "\nnode-z 4 " + std::to_string(now_ms) + " " +
                           std::to_string(now_ms + 9000) + " 0123abcd"});
  auto listed = candidates(*a);
  ASSERT_FALSE(listed.error) << listed.error.message();
  ASSERT_EQ(listed.value.size(), 2u);
  EXPECT_EQ(listed.value[0].node, "node-a");
  EXPECT_EQ(listed.value[1].node, "node-z");
  EXPECT_EQ(listed.value[1].priority, 4);

  servers_[0].kill_and_wait();
  servers_[1].kill_and_wait();
  auto without = candidates(*a);
  EXPECT_TRUE(without.error) << "listed from a minority of masters";
  EXPECT_NE(without.error.message().find("of 3 masters (a majority is 2)"), std::string::npos)
      << without.error.message();
}

// A refusal's count of the candidates above us is the largest a master
// gave: a master whose registry was lost (restarted empty) counts nobody,
// and must not hide the candidates the others saw.
TEST_F(redlock_switchover_test, a_refusal_counts_the_candidates_above_it_the_most_any_master_saw) {
  auto a = make("node-a", 5s, 1s, 9);
  ASSERT_TRUE(acquire(*a).value.acquired());
  ASSERT_TRUE(registered_everywhere("node-a"));
  const auto registry = candidates_key(util::election);
  // node-x (priority 7) on masters 2 and 3, so that any two answers show it;
  // master 1's registry is gone.
  for (int m = 1; m < 3; ++m) {
    const auto now_ms = registry_ms(servers_[m]);
    servers_[m].command({"SET", registry,
                         servers_[m].command({"GET", registry}).at(0) + "\nnode-x 7 " +
                             std::to_string(now_ms) + " " + std::to_string(now_ms + 9000) +
                             " 0123abcd"});
  }
  servers_[0].command({"DEL", registry});
  auto b = make("node-b", 5s, 1s, 2);
  auto held = acquire(*b);
  ASSERT_FALSE(held.error) << held.error.message();
  ASSERT_EQ(held.value.outcome, acquire_outcome::held);
  EXPECT_EQ(held.value.holder, "node-a");
  EXPECT_EQ(held.value.outranked_by, 1) << "node-x, not the holder";
}

// A candidate that restarted under its node id within two ttls is live
// since the restart: every master it reached starts its line again, and a
// master that still holds the predecessor's line (one it did not reach)
// does not lend it the predecessor's start.
TEST_F(redlock_switchover_test, a_restarted_candidate_is_live_since_its_restart) {
  auto a = make("node-a", 5s, 1s);
  ASSERT_TRUE(acquire(*a).value.acquired());
  ASSERT_TRUE(registered_everywhere("node-a"));
  const auto registry = candidates_key(util::election);
  // The predecessor: registered on every master a minute ago, still live.
  const auto predecessor = [&](const redis_server& server) {
    const auto now_ms = registry_ms(server);
    const auto text = server.command({"GET", registry}).at(0);
    std::string kept;
    for (std::size_t at = 0; at < text.size();) {
      const auto end = std::min(text.find('\n', at), text.size());
      if (text.compare(at, 7, "node-h ") != 0) kept += text.substr(at, end - at) + "\n";
      at = end + 1;
    }
    server.command({"SET", registry,
                    kept + "node-h 5 " + std::to_string(now_ms - 60000) + " " +
                        std::to_string(now_ms + 3000) + " 0123abcd"});
  };
  for (const auto& server : servers_) predecessor(server);
  auto h = make("node-h", 5s, 1s, 5);
  ASSERT_FALSE(acquire(*h).value.acquired());
  // Let every master's script run, then put the predecessor's line back on
  // master 3, as if the new process had not reached it.
  ASSERT_TRUE(util::run_until(
      io_,
      [&] {
        for (const auto& server : servers_) {
          if (server.command({"GET", registry}).at(0).find("0123abcd") != std::string::npos) {
            return false;
          }
        }
        return true;
      },
      5s));
  predecessor(servers_[2]);

  auto listed = candidates(*a);
  ASSERT_FALSE(listed.error) << listed.error.message();
  ASSERT_EQ(listed.value.size(), 2u);
  EXPECT_EQ(listed.value[1].node, "node-h");
  EXPECT_EQ(listed.value[1].priority, 5);
  EXPECT_LT(listed.value[1].live_for, 1000ms) << "live since the predecessor's start";
}

}  // namespace
}  // namespace baton
