// Faults of etcd under etcd_store, at the store level (no daemons: those
// scenarios need the store-kind registry): the member frozen past the ttl,
// snapshot restores under a leader, an operator's delete of the lease key.
// Raft leader changes are in etcd_raft_faults_test.cpp, the connections
// and the watch in etcd_connection_faults_test.cpp. One member per test.
#include <gtest/gtest.h>

#include "etcd_fault_fixture.hpp"

namespace baton::testing {
namespace {

using namespace etcd_fault_fixture;

// The member stops answering for longer than the ttl. The leader's renewals
// fail meanwhile; once it answers again the term is gone, and nobody took
// the lease earlier than one ttl after the leader's last successful renewal
// was sent.
TEST_F(etcd_faults, a_frozen_member_past_the_ttl_ends_the_term_and_nobody_takes_it_early) {
  constexpr auto ttl = 2000ms;
  auto a = store("node-a", ttl);
  auto b = store("node-b", ttl);
  ASSERT_TRUE(acquire(io_, *a).value.acquired());
  const auto last_sent = clock::now();
  ASSERT_EQ(renew(io_, *a).value, renew_answer::renewed);

  etcd_.freeze();
  const auto frozen_at = clock::now();
  const auto frozen_renew = renew(io_, *a);
  FIGURE("frozen member: the renewal failed after %lld ms (%s)", ms_since(frozen_at),
         frozen_renew.error.message().c_str());
  EXPECT_TRUE(frozen_renew.error) << "renewed on a frozen member";
  EXPECT_EQ(frozen_renew.error.code, store_errc::timeout) << frozen_renew.error.message();
  pass(io_, ttl + 1000ms);
  etcd_.thaw();

  result<acquire_answer> taken;
  const auto give_up = clock::now() + 15s;
  while (clock::now() < give_up) {
    taken = acquire(io_, *b);
    if (!taken.error && taken.value.acquired()) break;
    pass(io_, 50ms);
  }
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message();
  FIGURE(
      "frozen member (%lld ms, ttl 2 s): the next term began %lld ms after the leader's last "
      "renewal was sent",
      static_cast<long long>((ttl + 1000ms).count()), ms_since(last_sent));
  EXPECT_GE(clock::now() - last_sent, ttl) << "taken before the leader's last renewal ran out";
  EXPECT_EQ(renew(io_, *a).value, renew_answer::lost);
}

// Three restores of the same old snapshot, each under a leader: the
// revision goes back each time, and still no token is ever handed out twice
// or below an earlier one; the leader of the moment loses its term.
TEST_F(etcd_faults, snapshot_restores_under_a_leader_never_repeat_a_token) {
  constexpr auto ttl = 1000ms;
  etcd_.save_snapshot("old");
  auto a = store("node-a", ttl);
  auto b = store("node-b", ttl);
  auto a_heard = watch(*a);
  auto b_heard = watch(*b);
  std::vector<std::uint64_t> tokens;
  for (int round = 0; round < 3; ++round) {
    // A few terms, so that the revision climbs above the snapshot's.
    lease_store* leader = nullptr;
    for (int term = 0; term < 3; ++term) {
      auto& s = term % 2 == 0 ? *a : *b;
      result<acquire_answer> won;
      const auto give_up = clock::now() + 15s;
      while (clock::now() < give_up) {
        won = acquire(io_, s);
        if (!won.error && won.value.acquired()) break;
        pass(io_, 50ms);
      }
      ASSERT_TRUE(won.value.acquired())
          << "round " << round << " term " << term << ": " << won.error.message();
      if (!tokens.empty()) {
        EXPECT_GT(won.value.token, tokens.back()) << "round " << round;
      }
      tokens.push_back(won.value.token);
      leader = &s;
      if (term < 2) {
        auto released = call<release_answer>(io_, [&](auto h) { s.async_release(h); });
        ASSERT_EQ(released.value, release_answer::released);
      }
    }
    const auto restore_at = clock::now();
    etcd_.restore_snapshot("old");
    FIGURE("snapshot restore: the member was back after %lld ms", ms_since(restore_at));
    result<renew_answer> lost;
    for (int i = 0; i < 10; ++i) {
      lost = renew(io_, *leader);
      if (!lost.error) break;
      pass(io_, 100ms);
    }
    EXPECT_EQ(lost.value, renew_answer::lost) << "round " << round << ": " << lost.error.message();
    FIGURE("snapshot restore: the leader's renewal said lost %lld ms after the restore began",
           ms_since(restore_at));
    // The next term: not before a full ttl after the fence, with a larger token.
    result<acquire_answer> next;
    while (ms_since(restore_at) < 15000) {
      next = acquire(io_, *b);
      if (!next.error && next.value.acquired()) break;
      pass(io_, 50ms);
    }
    ASSERT_TRUE(next.value.acquired()) << next.error.message();
    EXPECT_GT(next.value.token, tokens.back());
    FIGURE("snapshot restore: next term %lld ms after the restore began, token %llu after %llu",
           ms_since(restore_at), static_cast<unsigned long long>(next.value.token),
           static_cast<unsigned long long>(tokens.back()));
    tokens.push_back(next.value.token);
    ASSERT_EQ(call<release_answer>(io_, [&](auto h) { b->async_release(h); }).value,
              release_answer::released);
  }
  EXPECT_TRUE(
      run_until(io_, [&] { return a_heard->resets.size() >= 3 && b_heard->resets.size() >= 3; }))
      << "resets heard: a " << a_heard->resets.size() << ", b " << b_heard->resets.size();
}

// An operator deletes the lease key: the lease itself lives on, so only the
// renewal's read of the key tells the leader; standbys hear a release, but
// count the election as held while the old holder's lease lives.
TEST_F(etcd_faults, an_operators_delete_ends_the_term) {
  constexpr auto ttl = 3000ms;
  auto a = store("node-a", ttl);
  auto b = store("node-b", ttl);
  auto b_heard = watch(*b);
  ASSERT_TRUE(run_until(io_, [&] { return b_heard->trusted(); }));
  const auto first = acquire(io_, *a);
  ASSERT_TRUE(first.value.acquired());
  ASSERT_TRUE(run_until(io_, [&] { return !b_heard->terms.empty(); }));

  etcd_.etcdctl(std::string("del baton/") + election + "/lease");
  EXPECT_TRUE(run_until(io_, [&] { return b_heard->released > 0; })) << "b never heard the delete";
  // a's app works until a's next renewal: while a's etcd lease lives, the
  // free key is a's still.
  const auto early = acquire(io_, *b);
  EXPECT_EQ(early.value.outcome, acquire_outcome::held)
      << "b took a key whose holder's lease lives";
  EXPECT_EQ(early.value.holder, "node-a");
  // A candidate started after the delete never saw a's term: the holder key,
  // on a's lease, tells it.
  auto late = store("node-c", ttl);
  const auto fresh = acquire(io_, *late);
  EXPECT_EQ(fresh.value.outcome, acquire_outcome::held)
      << "a candidate started after the delete took a key whose holder's lease lives";
  EXPECT_EQ(fresh.value.holder, "node-a");
  EXPECT_EQ(renew(io_, *a).value, renew_answer::lost);
  // a revokes its lease on that loss (a request nobody waits for): b takes
  // the key once etcd has done it, trying again as its answer says. No
  // event tells when a lease is gone, so the tries are bounded in number.
  auto taken = acquire(io_, *b);
  for (int tries = 0; tries < 20 && taken.value.outcome == acquire_outcome::held; ++tries) {
    std::this_thread::sleep_for(std::max(taken.value.remaining, milliseconds(10)));
    taken = acquire(io_, *b);
  }
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message();
  EXPECT_GT(taken.value.token, first.value.token);
}

}  // namespace
}  // namespace baton::testing
