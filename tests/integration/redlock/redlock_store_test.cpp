// redlock_store against three real redis-servers (the fixture:
// redlock_fixture.hpp): what the contract suite cannot show with all masters
// alike. Tokens stay ordered when the majority changes between terms; a
// master that never answers costs no round its time; a master restarted
// empty holds its grants back while the others keep the lease, and is taken
// back once its fence ends; a won renewal takes a master that became free; a
// lost renewal names the masters that no longer hold it; a refused acquire
// gives its grants back unannounced, and at once, which undoes a split
// vote; a holder whose write-back has not landed has no token yet; without a
// majority nothing is renewed or acquired. The hand-over and the candidate
// registry across masters are redlock_switchover_test.cpp's; the
// lease.failsafe record redlock_failsafe_test.cpp's.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <variant>
#include <vector>

#include "integration/redis/store_test_util.hpp"
#include "integration/redlock/redlock_fixture.hpp"
#include "redis/lease_keys.hpp"
#include "redis/scripts.hpp"
#include "redlock/redlock_store.hpp"
#include "store/nonce.hpp"
#include "support/servers/redis_server.hpp"

namespace baton {
namespace {

namespace util = baton::testing::store_test_util;
using namespace std::chrono_literals;

// The store's own cases run on the shared fixture as it is.
using redlock_store_test = baton::testing::redlock_fixture;

// The example of why the largest counter alone is not enough: counters
// {100, 0, 0}. a wins masters 1 and 2, b later wins 2 and 3; b's token must
// still be larger than a's. The write-back put a's token on master 2. Which
// masters a candidate wins is steered by a lease of a third node left on the
// one it must not win.
TEST_F(redlock_store_test, tokens_stay_ordered_when_the_majority_changes_between_terms) {
  servers_[0].command({"SET", token_key(util::election), "100"});
  servers_[1].command({"SET", token_key(util::election), "0"});
  servers_[2].command({"SET", token_key(util::election), "0"});
  auto a = make("node-a");
  auto b = make("node-b");

  const auto lease = lease_key(util::election);
  servers_[2].command({"SET", lease, "node-x:1", "PX", "60000"});
  auto first = acquire(*a);
  ASSERT_FALSE(first.error) << first.error.message();
  ASSERT_TRUE(first.value.acquired());
  EXPECT_EQ(first.value.token, 101u);
  EXPECT_EQ(counter_on(servers_[1]), "101") << "the token was not written back to master 2";
  ASSERT_EQ(release(*a).value, release_answer::released);
  servers_[2].command({"DEL", lease});
  servers_[0].command({"SET", lease, "node-x:1", "PX", "60000"});

  auto second = acquire(*b);
  ASSERT_FALSE(second.error) << second.error.message();
  ASSERT_TRUE(second.value.acquired())
      << "held by '" << second.value.holder << "' token " << second.value.token << " remaining "
      << second.value.remaining.count() << "ms";
  EXPECT_GT(second.value.token, first.value.token);
  EXPECT_EQ(second.value.token, 102u);
}

// A frozen master is never waited for: every round is settled by the two
// that answer, long before the frozen one's command timeout.
TEST_F(redlock_store_test, a_master_that_never_answers_costs_no_round_its_timeout) {
  auto a = make("node-a", 5s, 4s);
  ASSERT_TRUE(acquire(*a).value.acquired());
  servers_[1].signal(SIGSTOP);
  const auto bound = 2s;  // half the command timeout: generous for 2 loopback replies
  for (int i = 0; i < 3; ++i) {
    const auto started = std::chrono::steady_clock::now();
    auto r = renew(*a);
    EXPECT_FALSE(r.error) << r.error.message();
    EXPECT_EQ(r.value, renew_answer::renewed);
    EXPECT_LT(std::chrono::steady_clock::now() - started, bound) << "renewal " << i;
  }
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(release(*a).value, release_answer::released);
  auto b = make("node-b", 5s, 4s);
  auto won = acquire(*b);
  EXPECT_TRUE(won.value.acquired()) << won.error.message();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2 * bound);
  const auto s = b->status();
  ASSERT_EQ(s.members.size(), 3u);
  EXPECT_TRUE(s.members[0].holds_lease);
  EXPECT_FALSE(s.members[1].holds_lease);
  EXPECT_TRUE(s.members[2].holds_lease);
}

// A master restarted empty forgets the lease; its fence keeps it from
// granting for one ttl, while the two others keep the lease for its holder.
TEST_F(redlock_store_test, a_master_restarted_empty_is_fenced_while_the_others_keep_the_lease) {
  auto a = make("node-a");
  auto b = make("node-b");
  auto held = acquire(*a);
  ASSERT_TRUE(held.value.acquired());
  // The acquire answers once its token is written back to a majority; the
  // third write may still be on its way, and b's round could settle on that
  // master's older counter before it lands.
  const auto token = std::to_string(held.value.token);
  ASSERT_TRUE(util::run_until(io_, [&] {
    for (const auto& server : servers_)
      if (counter_on(server) != token) return false;
    return true;
  }));
  servers_[0].restart();

  auto r = util::acquire(io_, *b);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value.outcome, acquire_outcome::held);
  EXPECT_EQ(r.value.holder, "node-a");
  EXPECT_EQ(r.value.token, held.value.token);
  // The restarted master answers with its fence (perhaps after the round
  // was settled by the two others): b sees the reset there.
  EXPECT_TRUE(util::run_until(io_, [&] { return !b->status().members[0].fence.empty(); }, 5s));

  // The holder renews on the two that kept it (retried once: its first call
  // on master 1 meets a closed connection).
  auto renewed = renew(*a);
  if (renewed.error) renewed = renew(*a);
  EXPECT_FALSE(renewed.error) << renewed.error.message();
  EXPECT_EQ(renewed.value, renew_answer::renewed);
  // Master 1's own answer may come after the two that settled the round.
  EXPECT_TRUE(util::run_until(io_, [&] { return !a->status().members[0].holds_lease; }, 5s));
  const auto s = a->status();
  EXPECT_TRUE(s.members[1].holds_lease);
  EXPECT_TRUE(s.members[2].holds_lease);
}

// A leader that won only two masters (the third was another node's) takes
// the third once it is free, at its next won renewal, with its own token
// there; but not a master where a newer term wrote its token.
TEST_F(redlock_store_test, a_won_renewal_takes_a_master_that_became_free) {
  auto a = make("node-a");
  const auto lease = lease_key(util::election);
  servers_[2].command({"SET", lease, "node-x:1", "PX", "60000"});
  auto won = acquire(*a);
  ASSERT_TRUE(won.value.acquired());
  EXPECT_FALSE(a->status().members[2].holds_lease);

  servers_[2].command({"DEL", lease});
  auto r = renew(*a);
  ASSERT_FALSE(r.error) << r.error.message();
  ASSERT_EQ(r.value, renew_answer::renewed);
  // (Master 3 may even run a's first acquire only after the DEL: a late
  // grant, which gets the token by the same write-back. Either way it ends
  // holding a's lease with a's token.)
  ASSERT_TRUE(util::run_until(io_, [&] {
    return a->status().members[2].holds_lease &&
           counter_on(servers_[2]) == std::to_string(won.value.token);
  }, 5s)) << "counter " << counter_on(servers_[2]);
  EXPECT_EQ(servers_[2].command({"GET", lease}).front().rfind("node-a:", 0), 0u);

  // Master 1 freed, where a newer term wrote its token (counter and term).
  servers_[0].command({"DEL", lease});
  servers_[0].command({"SET", token_key(util::election), std::to_string(won.value.token + 5)});
  servers_[0].command({"SET", term_key(util::election), std::to_string(won.value.token + 5)});
  r = renew(*a);
  ASSERT_EQ(r.value, renew_answer::renewed);  // masters 2 and 3
  // The round was settled by masters 2 and 3; master 1's answer (no take)
  // may come in after it.
  EXPECT_TRUE(util::run_until(io_, [&] { return !a->status().members[0].holds_lease; }, 5s));
  EXPECT_EQ(servers_[0].command({"EXISTS", lease}), std::vector<std::string>{"0"});
}

// A master restarted empty lifts its counter to its clock, far above the
// leader's token, and fences itself for one ttl. Once the fence has ended,
// the leader's next won renewal takes it back (nobody newer wrote a term
// there), leaving the lifted counter as it is: a take never lowers one. Its
// status row then shows no fence and no old error.
TEST_F(redlock_store_test, a_master_restarted_empty_is_taken_back_once_its_fence_ends) {
  const auto ttl = 1500ms;
  auto a = make("node-a", ttl, 1s);
  auto won = acquire(*a);
  ASSERT_TRUE(won.value.acquired());
  ASSERT_TRUE(util::run_until(io_, [&] {
    for (const auto& server : servers_)
      if (counter_on(server) != std::to_string(won.value.token)) return false;
    return true;
  }));
  servers_[0].restart();
  // The first renewal meets the closed connection; the next one reconnects,
  // sees the new run_id and fences the master (and lifts its counter).
  for (int i = 0; i < 5 && a->status().members[0].fence.empty(); ++i) {
    ASSERT_EQ(renew(*a).value, renew_answer::renewed);
    util::run_for(io_, 50ms);
  }
  ASSERT_NE(a->status().members[0].fence, "") << "the restarted master was never fenced";
  const auto lifted = counter_on(servers_[0]);
  ASSERT_GT(std::stoull(lifted), won.value.token);
  EXPECT_FALSE(a->status().members[0].holds_lease);

  // Renewed through the fence (it refuses the take), then past it.
  const auto deadline = std::chrono::steady_clock::now() + 3 * ttl;
  while (!a->status().members[0].holds_lease && std::chrono::steady_clock::now() < deadline) {
    ASSERT_EQ(renew(*a).value, renew_answer::renewed);
    util::run_for(io_, ttl / 5);
  }
  const auto s = a->status();
  ASSERT_TRUE(s.members[0].holds_lease) << "the freed master was never taken back";
  EXPECT_EQ(s.members[0].fence, "") << "status shows an ended fence";
  EXPECT_EQ(s.members[0].last_error, "") << "status shows an error of before the restart";
  EXPECT_EQ(servers_[0].command({"GET", lease_key(util::election)}).front().rfind("node-a:", 0), 0u);
  EXPECT_EQ(counter_on(servers_[0]), lifted) << "a take lowered the counter";
  // And it counts: with another master gone, the lease still renews.
  servers_[1].kill_and_wait();
  auto r = renew(*a);
  if (r.error) r = renew(*a);
  EXPECT_EQ(r.value, renew_answer::renewed) << r.error.message();
}

// A renewal that a majority answered "not ours" is lost, and says on which
// masters: the quorum is gone, which the node's log names.
TEST_F(redlock_store_test, a_lost_renewal_names_the_masters_that_no_longer_hold_it) {
  // An acquire is answered once a majority granted it; the last master's
  // grant may still be on its way, and landing after the DELs below it would
  // hold the lease there again (seen: "renewed by 1 of 3 masters").
  const auto granted_everywhere = [&](lease_store& store) {
    return util::run_until(io_, [&] {
      for (const auto& member : store.status().members) {
        if (!member.holds_lease) return false;
      }
      return true;
    }, 5s);
  };
  auto a = make("node-a", 5s, 1s);
  ASSERT_TRUE(acquire(*a).value.acquired());
  ASSERT_TRUE(granted_everywhere(*a));
  const auto lease = lease_key(util::election);
  servers_[0].command({"DEL", lease});
  servers_[1].command({"DEL", lease});
  auto r = renew(*a);
  EXPECT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, renew_answer::lost);
  const auto& said = r.error.detail;
  EXPECT_NE(said.find("no longer this node's on 2 of 3 masters (a majority is 2)"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find(servers_[0].url().substr(8)), std::string::npos) << said;
  EXPECT_NE(said.find(servers_[1].url().substr(8)), std::string::npos) << said;

  // The same with the third master dead: its failure comes first, and must
  // not settle the round before the two others say "not ours".
  for (const auto& server : servers_) server.command({"DEL", lease, holder_key(util::election)});
  auto b = make("node-b", 5s, 1s);
  ASSERT_TRUE(acquire(*b).value.acquired());
  ASSERT_TRUE(granted_everywhere(*b));
  servers_[2].kill_and_wait();
  servers_[0].command({"DEL", lease});
  servers_[1].command({"DEL", lease});
  r = renew(*b);
  EXPECT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, renew_answer::lost);
  EXPECT_NE(r.error.detail.find("no longer this node's on 2 of 3 masters"), std::string::npos)
      << r.error.detail;
}

// A candidate whose acquire is refused gives back what it won without
// announcing a release: it ended no term, and other standbys must not wake.
TEST_F(redlock_store_test, a_refused_acquire_gives_its_grants_back_unannounced) {
  auto a = make("node-a", 5s, 1s);
  auto b = make("node-b", 5s, 1s);
  auto watcher = make("node-w", 5s, 1s);
  int woken = 0;
  watcher->watch([&](const store_event& e) {
    if (std::holds_alternative<store_events::released>(e)) ++woken;
  });
  // Every master's watch is up (the store's status needs only a majority).
  ASSERT_TRUE(util::run_until(io_, [&] {
    for (const auto& server : servers_) {
      const auto n = server.command({"PUBSUB", "NUMSUB", events_channel(util::election)});
      if (n.size() != 2 || n[1] != "1") return false;
    }
    return true;
  }, 5s));
  const auto lease = lease_key(util::election);
  // a holds masters 2 and 3; master 1 is free (key and record gone, as if
  // it had expired there), so b wins it and is refused.
  ASSERT_TRUE(acquire(*a).value.acquired());
  servers_[0].command({"DEL", lease, holder_key(util::election)});
  auto refused = acquire(*b);
  ASSERT_FALSE(refused.value.acquired());
  EXPECT_EQ(refused.value.holder, "node-a");
  ASSERT_TRUE(util::run_until(io_, [&] {
    return servers_[0].command({"EXISTS", lease}) == std::vector<std::string>{"0"};
  }, 5s));
  util::run_for(io_, 300ms);
  EXPECT_EQ(woken, 0) << "a refused acquire's give-back woke a standby";
}

// A split vote: master 3 down, a holds master 1 and b master 2 (as when both
// tried in the same instant). Neither has a majority; a's refused acquire
// gives master 1 back at once, so b's next attempt wins without waiting for
// a's key to expire.
TEST_F(redlock_store_test, a_split_vote_is_undone_at_once_by_the_refused_candidate) {
  auto a = make("node-a", 5s, 1s);
  auto b = make("node-b", 5s, 1s);
  const auto lease = lease_key(util::election);
  const auto nonce = store_detail::process_nonce();
  servers_[2].kill_and_wait();
  servers_[0].command({"SET", lease, "node-a:" + nonce, "PX", "5000"});
  servers_[1].command({"SET", lease, "node-b:" + nonce, "PX", "5000"});

  auto refused = acquire(*a);
  EXPECT_FALSE(refused.value.acquired());
  ASSERT_FALSE(refused.error) << refused.error.message();
  EXPECT_EQ(refused.value.holder, "node-b");
  // a's refusal released master 1 (its release ran right behind its acquire).
  EXPECT_TRUE(util::run_until(io_, [&] {
    return servers_[0].command({"EXISTS", lease}) == std::vector<std::string>{"0"};
  }, 5s));

  const auto started = std::chrono::steady_clock::now();
  auto won = acquire(*b);
  EXPECT_TRUE(won.value.acquired()) << won.error.message();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s) << "b waited for a's key to expire";
}

// A round that meets a new holder's grants before its write-back hears
// the masters' counters, the term before's token: it must say the token is
// unknown, not name that one (a standby's status and `baton once`'s "held
// by" line would show it). The grants are the acquire script's own, run
// here by hand so that the write-back can be held back.
TEST_F(redlock_store_test, a_holder_granted_before_its_write_back_has_no_token_yet) {
  auto a = make("node-a", 5s, 1s);
  const auto first = acquire(*a);
  ASSERT_TRUE(first.value.acquired());
  ASSERT_EQ(release(*a).value, release_answer::released);

  const election_keys keys(util::election);
  const std::string c_value = "node-c:" + store_detail::process_nonce();
  const auto& grant = redis_detail::acquire_script();
  for (const auto& server : servers_) {
    const auto answer = server.command(
        {"EVAL", std::string(grant.source), "6", keys.lease, keys.token, keys.fence, keys.holder,
         keys.candidates, keys.granted, c_value, "5000", keys.channel, "grant", "", "PUBLISH", "",
         "node-c", "0"});
    ASSERT_FALSE(answer.empty());
    ASSERT_EQ(answer.front(), "1") << "master " << server.port() << " did not grant";
  }
  auto b = make("node-b", 5s, 1s);
  const auto before = acquire(*b);
  ASSERT_FALSE(before.error) << before.error.message();
  ASSERT_FALSE(before.value.acquired());
  EXPECT_EQ(before.value.holder, "node-c");
  EXPECT_EQ(before.value.token, 0u) << "named the term before's token " << first.value.token;

  const auto token = std::to_string(first.value.token + 1);
  const auto& write_back = redis_detail::write_back_script();
  for (const auto& server : servers_) {
    const auto written =
        server.command({"EVAL", std::string(write_back.source), "4", keys.lease, keys.token,
                        keys.term, keys.granted, c_value, token, keys.channel, "0"});
    ASSERT_FALSE(written.empty());
    ASSERT_EQ(written.front(), "1") << "master " << server.port() << " refused the write-back";
    EXPECT_EQ(server.command({"EXISTS", keys.granted}), std::vector<std::string>{"0"});
  }
  const auto after = acquire(*b);
  ASSERT_FALSE(after.value.acquired());
  EXPECT_EQ(after.value.holder, "node-c");
  EXPECT_EQ(after.value.token, first.value.token + 1);
}

// With two of three masters gone nothing is renewed, and the answer says
// why; the renew deadline (the daemon's) then stops the app.
TEST_F(redlock_store_test, without_a_majority_nothing_is_renewed_or_acquired) {
  auto a = make("node-a", 5s, 1s);
  ASSERT_TRUE(acquire(*a).value.acquired());
  servers_[0].kill_and_wait();
  servers_[1].kill_and_wait();
  auto r = renew(*a);
  ASSERT_TRUE(r.error) << "renewed without a majority";
  // Settled by the two failures, whatever master 3 says: named, one line.
  const auto said = r.error.message();
  EXPECT_NE(said.find("of 3 masters (a majority is 2)"), std::string::npos) << said;
  EXPECT_NE(said.find(servers_[0].url().substr(8)), std::string::npos) << said;
  EXPECT_NE(said.find(servers_[1].url().substr(8)), std::string::npos) << said;

  auto b = make("node-b", 5s, 1s);
  auto taken = acquire(*b);
  EXPECT_FALSE(taken.value.acquired());
  if (!taken.error) {
    // Master 3 answered before the failures settled it: held by a, and no
    // majority can grant while two are down.
    EXPECT_EQ(taken.value.holder, "node-a");
    EXPECT_LT(taken.value.remaining, 0ms);
  } else {
    EXPECT_NE(taken.error.message().find("granted by 0 of 3 masters"), std::string::npos)
        << taken.error.message();
  }
}

}  // namespace
}  // namespace baton
