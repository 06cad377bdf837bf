// lease.failsafe peers' holds in a refused Redlock round
// (failsafe_refusal.hpp, through acquire_round::refusal): a record's hold
// names the newest list, and only once a majority of masters held that
// term; a promise's hold names every promising candidate; a register-only
// attempt says so.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "redlock/quorum.hpp"

namespace baton::redlock_detail {
namespace {

using kind = master_answer::kind;

const failsafe_peer fs_b{"b", "10.0.0.2:9465"};
const failsafe_peer fs_c{"c", "10.0.0.3:9465"};
const failsafe_peer fs_d{"d", "10.0.0.4:9465"};

// A master whose record holds `leader`'s term `token` with list number
// `list` naming `peers`.
master_answer record_hold(std::string leader, std::uint64_t token, long long list,
                          std::vector<failsafe_peer> peers) {
  master_answer a;
  a.what = kind::held_back;
  a.failsafe_hold = failsafe_hold_info{std::move(leader), token, "10.0.0.1:9465", std::move(peers)};
  a.hold_list = list;
  a.why = "failsafe hold";
  return a;
}

master_answer promise_hold(std::string leader, std::uint64_t token,
                           std::vector<failsafe_peer> promising) {
  auto a = record_hold(std::move(leader), token, -1, std::move(promising));
  a.failsafe_hold->leader_address.clear();
  return a;
}

master_answer fs_held(std::string holder, std::uint64_t token) {
  master_answer a;
  a.what = kind::held;
  a.holder = std::move(holder);
  a.counter = token;
  a.free_in = std::chrono::microseconds(1000);
  return a;
}

master_answer fs_granted() {
  master_answer a;
  a.what = kind::granted;
  a.counter = 7;
  return a;
}

master_answer abstained() {
  master_answer a;
  a.what = kind::held_back;
  a.why = "registered only: this node may not take the lease yet (lease.failsafe peers)";
  return a;
}

TEST(failsafe_refusal, a_majority_of_record_holds_names_the_newest_list) {
  acquire_round r(3);
  r.record(0, record_hold("a", 40, 3, {fs_b}));
  r.record(1, record_hold("a", 40, 5, {fs_c, fs_d}));
  r.record(2, record_hold("a", 40, 4, {fs_b, fs_c}));
  const auto answer = r.refusal();
  EXPECT_EQ(answer.outcome, acquire_outcome::held_back);
  ASSERT_TRUE(answer.failsafe_hold);
  EXPECT_EQ(answer.failsafe_hold->leader, "a");
  EXPECT_EQ(answer.failsafe_hold->token, 40u);
  EXPECT_EQ(answer.failsafe_hold->peers, (std::vector<failsafe_peer>{fs_c, fs_d}));
  EXPECT_LT(answer.remaining.count(), 0);
  EXPECT_FALSE(answer.why.empty());
}

TEST(failsafe_refusal, the_newest_term_is_the_one_to_clear) {
  acquire_round r(3);
  r.record(0, record_hold("a", 40, 9, {fs_b}));
  r.record(1, record_hold("c", 52, 1, {fs_d}));
  r.record(2, record_hold("c", 52, 2, {fs_b}));
  const auto answer = r.refusal();
  ASSERT_TRUE(answer.failsafe_hold);
  EXPECT_EQ(answer.failsafe_hold->leader, "c");
  EXPECT_EQ(answer.failsafe_hold->token, 52u);
  EXPECT_EQ(answer.failsafe_hold->peers, (std::vector<failsafe_peer>{fs_b}));
}

// A master that missed the term's later renewals holds an older list, whose
// peers the leader may no longer ask: alone it clears nothing.
TEST(failsafe_refusal, a_record_hold_on_a_minority_is_refused_without_a_list) {
  acquire_round r(3);
  r.record(0, record_hold("a", 40, 3, {fs_b}));
  EXPECT_EQ(r.current(), verdict::open);
  r.record(1, master_answer{});  // failed
  ASSERT_EQ(r.current(), verdict::impossible);
  EXPECT_TRUE(r.refusal_waits_for_more()) << "master 2 may hold the term too";
  const auto answer = r.refusal();
  EXPECT_EQ(answer.outcome, acquire_outcome::held_back);
  EXPECT_FALSE(answer.failsafe_hold) << "a list that may be stale names peers to clear with";
  EXPECT_NE(answer.why.find("only 1 of 3 masters"), std::string::npos) << answer.why;

  r.record(2, fs_granted());
  EXPECT_FALSE(r.refusal_waits_for_more());
  EXPECT_FALSE(r.refusal().failsafe_hold);
}

TEST(failsafe_refusal, a_minority_record_hold_beside_a_holder_stays_held) {
  acquire_round r(3);
  r.record(0, record_hold("a", 40, 3, {fs_b}));
  r.record(1, fs_held("d", 44));
  r.record(2, fs_held("d", 44));
  const auto answer = r.refusal();
  EXPECT_EQ(answer.outcome, acquire_outcome::held);
  EXPECT_EQ(answer.holder, "d");
  EXPECT_EQ(answer.token, 44u);
  EXPECT_FALSE(answer.failsafe_hold);
}

TEST(failsafe_refusal, a_promise_hold_names_every_promising_candidate) {
  acquire_round r(3);
  r.record(0, promise_hold("a", 5000, {fs_c}));
  r.record(1, promise_hold("a", 5000, {fs_c, fs_d}));
  r.record(2, promise_hold("a", 4000, {fs_b}));
  const auto answer = r.refusal();
  ASSERT_TRUE(answer.failsafe_hold);
  EXPECT_EQ(answer.failsafe_hold->token, 5000u);
  EXPECT_EQ(answer.failsafe_hold->peers, (std::vector<failsafe_peer>{fs_c, fs_d}));
}

TEST(failsafe_refusal, a_register_only_round_says_so) {
  acquire_round r(3);
  for (std::size_t i = 0; i < 3; ++i) r.record(i, abstained());
  const auto answer = r.refusal();
  EXPECT_EQ(answer.outcome, acquire_outcome::held_back);
  EXPECT_FALSE(answer.failsafe_hold);
  EXPECT_NE(answer.why.find("may not take the lease yet"), std::string::npos) << answer.why;
}

TEST(failsafe_refusal, without_the_mode_a_refusal_is_as_before) {
  acquire_round r(3);
  r.record(0, fs_held("d", 44));
  r.record(1, fs_held("d", 44));
  const auto answer = r.refusal();
  EXPECT_EQ(answer.outcome, acquire_outcome::held);
  EXPECT_TRUE(answer.why.empty());
  EXPECT_FALSE(answer.failsafe_hold);
}

}  // namespace
}  // namespace baton::redlock_detail
