// Faults of etcd under etcd_store around raft leader changes: a lease
// ended, revoked, released or handed over after the raft leader changed
// (etcd-io/etcd#15247), and a hand-over after an operator's delete. One
// member per test.
#include <gtest/gtest.h>

#include "etcd_fault_fixture.hpp"

namespace baton::testing {
namespace {

using namespace etcd_fault_fixture;

// The etcd lease the key `name` of the election is on, in hex as etcdctl
// takes it.
std::string lease_of(const etcd_server& etcd, const std::string& name) {
  const auto out = etcd.etcdctl(std::string("get baton/") + election + "/" + name + " -w json");
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"("lease":(\d+))"))) {
    throw std::runtime_error("no lease in: " + out);
  }
  std::ostringstream hex;
  hex << std::hex << std::stoull(m[1].str());
  return hex.str();
}

// A lease revoked by hand stands in for etcd ending a holder's lease. Under
// the raft leader of the term the lease began in that is an expiry (or a
// release): the next candidate takes the key at once. After a leader change
// (here a restart of the one member) it may be a former leader's early
// revoke (etcd-io/etcd#15247): the holder's app may work until its lease
// deadline, so the next candidate is held back until a ttl after it found
// the lease gone.
TEST_F(etcd_faults, a_lease_ended_after_a_raft_leader_change_is_waited_out) {
  constexpr auto ttl = 2000ms;
  auto a = store("node-a", ttl);
  auto b = store("node-b", ttl);
  auto b_heard = watch(*b);
  lead_watched(*a, *b_heard);
  ASSERT_FALSE(HasFailure());

  // The same raft term: taken at once.
  etcd_.etcdctl("lease revoke " + lease_of(etcd_, "lease"));
  ASSERT_TRUE(run_until(io_, [&] { return b_heard->released > 0; })) << "b never heard the end";
  const auto at_once = acquire(io_, *b);
  ASSERT_TRUE(at_once.value.acquired())
      << "a lease that ended under its own raft leader held b back: " << at_once.value.why;
  EXPECT_EQ(renew(io_, *a).value, renew_answer::lost);

  // A raft leader change, then the same end.
  auto a_heard = watch(*a);
  change_raft_leader_under(*b);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(run_until(io_, [&] { return a_heard->trusted(); }));
  const int released_before = a_heard->released;
  etcd_.etcdctl("lease revoke " + lease_of(etcd_, "lease"));
  const auto revoked = clock::now();
  ASSERT_TRUE(run_until(io_, [&] { return a_heard->released > released_before; }))
      << "a never heard the end";
  const auto held = acquire(io_, *a);
  ASSERT_EQ(held.value.outcome, acquire_outcome::held_back)
      << "a took a key whose holder's lease may have been revoked early";
  EXPECT_EQ(held.value.holder, "node-b");
  EXPECT_NE(held.value.why.find("raft leader change"), std::string::npos) << held.value.why;
  EXPECT_GT(held.value.remaining, ttl - 1000ms);
  EXPECT_LE(held.value.remaining, ttl);
  EXPECT_EQ(renew(io_, *b).value, renew_answer::lost);

  auto taken = acquire(io_, *a);
  for (int tries = 0; tries < 10 && !taken.value.acquired(); ++tries) {
    pass(io_, std::max(taken.value.remaining, milliseconds(10)));
    taken = acquire(io_, *a);
  }
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message();
  EXPECT_GE(ms_since(revoked), (ttl - 100ms).count()) << "a took over before b's deadline";
  EXPECT_GT(taken.value.token, at_once.value.token);
  FIGURE("etcd lease ended after a raft leader change: taken %lld ms after the revoke (ttl %lld)",
         ms_since(revoked), static_cast<long long>(ttl.count()));
}

// A holder that stops renewing (a crash), with an etcd lease of 3 s: the
// standby that found its key follows that lease's time to live, revokes it
// once etcd's answers prove it expired, and takes the key; never before the
// lease's 3 s from its grant. After a raft leader change under the next
// holder, the standby proves nothing (the answers come in a later raft term
// than the term began in): etcd expires the lease, and the standby waits
// that holder out one ttl more (etcd-io/etcd#15247), as without the revoke.
TEST_F(etcd_faults, a_crashed_holders_expired_lease_is_revoked_in_its_own_raft_term_only) {
  constexpr auto ttl = 3000ms;
  auto b = store("node-b", ttl);
  auto b_heard = watch(*b);
  // What this asserts is safety: a revoke never comes before the lease
  // could have expired (nor after a raft leader change, below). How soon it
  // comes is the benchmark's (bench/run.py, baton-etcd); etcd's own check
  // may come first, when it falls within the ~15 ms between the expiry and
  // b's revoke, and then nothing was revoked.
  auto a1 = store("node-a1", ttl);
  const auto granted = clock::now();
  ASSERT_TRUE(run_until(io_, [&] { return b_heard->trusted(); }));
  ASSERT_TRUE(acquire(io_, *a1).value.acquired());
  ASSERT_TRUE(run_until(io_, [&] { return !b_heard->terms.empty(); }));
  // b finds the key held: its follow of a1's lease begins. a1 renews no more.
  ASSERT_EQ(acquire(io_, *b).value.outcome, acquire_outcome::held);
  ASSERT_TRUE(run_until(
      io_, [&] { return b_heard->released > 0; }, 10s))
      << "b never heard a1's lease end";
  const auto ended_ms = ms_since(granted);
  if (b_heard->noted("revoked the etcd lease of node-a1")) {
    EXPECT_GE(ended_ms, ttl.count()) << "b revoked a1's lease before it could have expired";
    FIGURE("etcd crashed holder's lease (3 s) revoked by the standby %lld ms after its grant",
           ended_ms);
  } else {
    EXPECT_GE(ended_ms, ttl.count()) << "a1's lease ended before its ttl";
    FIGURE("etcd crashed holder's lease (3 s) ended by etcd's own check %lld ms after its grant",
           ended_ms);
  }
  const auto taken = acquire(io_, *b);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message() << taken.value.why;

  // A raft leader change under b's term, then b renews no more.
  auto a = store("node-a", ttl);
  auto a_heard = watch(*a);
  ASSERT_TRUE(run_until(io_, [&] { return a_heard->trusted(); }));
  ASSERT_EQ(acquire(io_, *a).value.outcome, acquire_outcome::held);
  change_raft_leader_under(*b);
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(acquire(io_, *a).value.outcome, acquire_outcome::held);
  const auto last_renewal = clock::now();
  const int released_before = a_heard->released;
  ASSERT_TRUE(run_until(
      io_, [&] { return a_heard->released > released_before; }, 10s))
      << "a never heard b's lease end";
  EXPECT_FALSE(a_heard->noted("revoked")) << "a revoked a lease after a raft leader change";
  const auto held = acquire(io_, *a);
  EXPECT_EQ(held.value.outcome, acquire_outcome::held_back)
      << "a took a key whose holder's lease ended in a later raft term";
  EXPECT_NE(held.value.why.find("raft leader change"), std::string::npos) << held.value.why;
  FIGURE(
      "etcd lease ended after a raft leader change: not revoked, etcd ended it %lld ms after "
      "the last renewal",
      ms_since(last_renewal));
}

// A release after a raft leader change: after its revoke the holder puts
// the released key (its app has stopped) before it answers, so the standby
// woken by it takes the key at once rather than waiting out the holder as
// after an early revoke.
TEST_F(etcd_faults, a_release_after_a_raft_leader_change_is_taken_at_once) {
  constexpr auto ttl = 2000ms;
  auto a = store("node-a", ttl);
  auto b = store("node-b", ttl);
  auto b_heard = watch(*b);
  const auto first = lead_watched(*a, *b_heard);
  change_raft_leader_under(*a);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(run_until(io_, [&] { return b_heard->trusted(); }));
  const int released_before = b_heard->released;
  const auto released = call<release_answer>(io_, [&](auto h) { a->async_release(h); });
  ASSERT_FALSE(released.error) << released.error.message();
  EXPECT_EQ(released.value, release_answer::released);
  ASSERT_TRUE(run_until(io_, [&] { return b_heard->released > released_before; }))
      << "b never heard the release";
  const auto taken = acquire(io_, *b);
  EXPECT_TRUE(taken.value.acquired())
      << "a release after a raft leader change held b back: " << taken.value.why;
  EXPECT_GT(taken.value.token, first.token);
}

// A hand-over after a raft leader change: its txn deletes the lease and
// holder keys and names the term's lease in the reservation, so the target
// woken by the delete takes the key at once, as after a release, rather
// than waiting out the holder as after an early revoke; another candidate
// is held for the target meanwhile.
TEST_F(etcd_faults, a_hand_over_after_a_raft_leader_change_is_taken_at_once) {
  constexpr auto ttl = 2000ms;
  auto a = store("node-a", ttl);
  auto b = store("node-b", ttl);
  auto c = store("node-c", ttl);
  auto b_heard = watch(*b);
  auto c_heard = watch(*c);
  const auto first = lead_watched(*a, *b_heard);
  ASSERT_TRUE(run_until(io_, [&] { return c_heard->terms.size() == 1; }));
  change_raft_leader_under(*a);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(run_until(io_, [&] { return b_heard->trusted() && c_heard->trusted(); }));
  const int released_before = b_heard->released;
  const auto handed =
      call<release_answer>(io_, [&](auto h) { a->async_hand_over("node-b", 5000ms, h); });
  ASSERT_FALSE(handed.error) << handed.error.message();
  EXPECT_EQ(handed.value, release_answer::released);
  ASSERT_TRUE(run_until(io_, [&] { return b_heard->released > released_before; }))
      << "b never heard the hand-over";
  const auto other = acquire(io_, *c);
  EXPECT_EQ(other.value.outcome, acquire_outcome::held) << other.value.why;
  EXPECT_EQ(other.value.reserved_for, "node-b");
  EXPECT_EQ(other.value.holder, "node-a");
  const auto taken = acquire(io_, *b);
  EXPECT_TRUE(taken.value.acquired())
      << "a hand-over after a raft leader change held its target back: " << taken.value.why;
  EXPECT_GT(taken.value.token, first.token);
  EXPECT_EQ(renew(io_, *a).value, renew_answer::lost);
}

// An operator deleted the lease key: the term is over, so a hand-over
// changes nothing (no reservation) and says not_ours.
TEST_F(etcd_faults, a_hand_over_after_an_operators_delete_is_not_ours) {
  constexpr auto ttl = 3000ms;
  auto a = store("node-a", ttl);
  auto b = store("node-b", ttl);
  ASSERT_TRUE(acquire(io_, *a).value.acquired());
  etcd_.etcdctl(std::string("del baton/") + election + "/lease");
  const auto handed =
      call<release_answer>(io_, [&](auto h) { a->async_hand_over("node-c", 5000ms, h); });
  ASSERT_FALSE(handed.error) << handed.error.message();
  EXPECT_EQ(handed.value, release_answer::not_ours);
  const auto reserved = etcd_.etcdctl(std::string("get baton/") + election + "/reserved");
  EXPECT_EQ(reserved.find("reserved"), std::string::npos) << "a reservation without a term";
  EXPECT_EQ(renew(io_, *a).value, renew_answer::lost);
  // a revoked its lease (the holder key went with it): b takes the key.
  auto taken = acquire(io_, *b);
  for (int tries = 0; tries < 20 && !taken.value.acquired(); ++tries) {
    pass(io_, std::max(taken.value.remaining, milliseconds(10)));
    taken = acquire(io_, *b);
  }
  EXPECT_TRUE(taken.value.acquired()) << taken.error.message();
}

}  // namespace
}  // namespace baton::testing
