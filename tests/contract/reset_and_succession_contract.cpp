// The lease-store contract, continued: a store that lost its data holds
// every acquisition back for one ttl; a hand-over reserves the lease for its
// target; the candidates a store lists, with their priorities and
// cool-downs.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "contract_calls.hpp"
#include "lease_store_contract.hpp"

namespace baton::contract {
namespace {

namespace asio = boost::asio;

// --- reset -----------------------------------------------------------------------

TEST_P(lease_store_contract, a_reset_holds_every_acquisition_back_for_one_ttl) {
  constexpr milliseconds reset_ttl{1500};
  auto& io = harness().io();
  auto a = harness().make_store("node-a", reset_ttl);
  auto b = harness().make_store("node-b", reset_ttl);
  auto a_heard = watch(*a);
  auto b_heard = watch(*b);
  auto first = acquire(io, *a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message() << describe(first.value);
  auto standby = acquire(io, *b);
  ASSERT_EQ(standby.value.outcome, acquire_outcome::held) << standby.error.message();

  const auto reset_at = std::chrono::steady_clock::now();
  harness().reset_store();

  // The lease went with the data: the old holder hears so at its renewal.
  auto lost = answered<renew_answer>(io, [&] { return renew(io, *a); });
  ASSERT_FALSE(lost.error) << lost.error.message();
  EXPECT_EQ(lost.value, renew_answer::lost);

  // Everyone is held back, the old holder too, with nobody named.
  for (auto* s : {a.get(), b.get()}) {
    auto held = answered<acquire_answer>(io, [&] { return acquire(io, *s); });
    ASSERT_FALSE(held.error) << s->identity().node_id << ": " << held.error.message();
    EXPECT_EQ(held.value.outcome, acquire_outcome::held_back)
        << s->identity().node_id << ": " << describe(held.value);
    EXPECT_EQ(held.value.holder, "");
    EXPECT_GT(held.value.remaining, 0ms);
    EXPECT_LE(held.value.remaining, reset_ttl);
  }

  // Both watchers heard of it, and status says why.
  EXPECT_TRUE(run_until(io, [&] { return !a_heard->resets.empty() && !b_heard->resets.empty(); }))
      << "resets heard: a " << a_heard->resets.size() << ", b " << b_heard->resets.size();
  for (const auto& why : a_heard->resets) EXPECT_FALSE(why.empty());
  EXPECT_NE(a->status().last_reset, "");
  EXPECT_NE(b->status().last_reset, "");

  // Whoever tries first once the ttl has passed wins, in a newer term.
  outcome<acquire_answer> won;
  lease_store* winner = nullptr;
  const auto give_up = reset_at + reset_ttl + limit;
  while (!winner && std::chrono::steady_clock::now() < give_up) {
    for (auto* s : {b.get(), a.get()}) {
      won = acquire(io, *s);
      if (won.error) continue;
      if (won.value.acquired()) {
        winner = s;
        break;
      }
      EXPECT_EQ(won.value.outcome, acquire_outcome::held_back) << describe(won.value);
      EXPECT_LE(won.value.remaining, reset_ttl);
    }
    if (!winner) pass(io, 50ms);
  }
  const auto waited = std::chrono::steady_clock::now() - reset_at;
  ASSERT_NE(winner, nullptr) << "nobody acquired within " << (reset_ttl + limit).count() << " ms";
  EXPECT_GE(waited, reset_ttl - 50ms) << "acquired before the hold-back was over";
  EXPECT_GT(won.value.token, first.value.token) << "tokens went back across the reset";
}

// --- switchover: hand-over and candidates ------------------------------------------

TEST_P(lease_store_contract, a_hand_over_reserves_the_lease_for_its_target_alone) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto c = harness().make_store("node-c", ttl);
  auto first = acquire(io, *a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message() << describe(first.value);

  auto handed = hand_over(io, *a, "node-b", 5000ms);
  ASSERT_FALSE(handed.error) << handed.error.message();
  ASSERT_EQ(handed.value, release_answer::released);

  auto other = acquire(io, *c);
  ASSERT_FALSE(other.error) << other.error.message();
  EXPECT_EQ(other.value.outcome, acquire_outcome::held) << describe(other.value);
  EXPECT_EQ(other.value.reserved_for, "node-b") << describe(other.value);
  EXPECT_GT(other.value.remaining, 0ms) << describe(other.value);
  EXPECT_LE(other.value.remaining, 5000ms) << describe(other.value);
  // Nor may the node that handed over take it back.
  auto back = acquire(io, *a);
  ASSERT_FALSE(back.error) << back.error.message();
  EXPECT_EQ(back.value.outcome, acquire_outcome::held) << describe(back.value);

  auto target = acquire(io, *b);
  ASSERT_FALSE(target.error) << target.error.message();
  ASSERT_TRUE(target.value.acquired()) << describe(target.value);
  EXPECT_GT(target.value.token, first.value.token);

  auto after = acquire(io, *c);
  ASSERT_FALSE(after.error) << after.error.message();
  EXPECT_EQ(after.value.outcome, acquire_outcome::held) << describe(after.value);
  EXPECT_EQ(after.value.holder, "node-b") << describe(after.value);
  EXPECT_EQ(after.value.reserved_for, "") << describe(after.value);
  EXPECT_EQ(renew(io, *b).value, renew_answer::renewed);
}

TEST_P(lease_store_contract, a_reservation_nobody_takes_frees_the_lease_after_its_window) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto c = harness().make_store("node-c", ttl);
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  ASSERT_EQ(hand_over(io, *a, "node-gone", 1000ms).value, release_answer::released);
  auto during = acquire(io, *c);
  ASSERT_EQ(during.value.outcome, acquire_outcome::held) << describe(during.value);
  EXPECT_EQ(during.value.reserved_for, "node-gone");

  pass(io, 1000ms + harness().expiry_slack() + 200ms);
  auto later = acquire(io, *c);
  ASSERT_FALSE(later.error) << later.error.message();
  EXPECT_TRUE(later.value.acquired()) << describe(later.value);
}

TEST_P(lease_store_contract, a_hand_over_of_a_lease_not_ours_changes_nothing) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto c = harness().make_store("node-c", ttl);
  ASSERT_TRUE(acquire(io, *a).value.acquired());

  auto r = hand_over(io, *b, "node-c", 5000ms);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, release_answer::not_ours);
  auto held = acquire(io, *c);
  EXPECT_EQ(held.value.outcome, acquire_outcome::held) << describe(held.value);
  EXPECT_EQ(held.value.holder, "node-a") << describe(held.value);
  EXPECT_EQ(held.value.reserved_for, "") << describe(held.value);
  EXPECT_EQ(renew(io, *a).value, renew_answer::renewed);
}

TEST_P(lease_store_contract, a_hand_over_is_announced_as_a_release_and_the_target_term_as_a_term) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto c = harness().make_store("node-c", ttl);
  auto b_heard = watch(*b);
  auto c_heard = watch(*c);
  ASSERT_TRUE(run_until(io, [&] { return b_heard->trusted() && c_heard->trusted(); }));
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  const int b_before = b_heard->released;
  ASSERT_EQ(hand_over(io, *a, "node-b", 5000ms).value, release_answer::released);
  ASSERT_TRUE(run_until(io, [&] { return b_heard->released > b_before; }))
      << "the target never heard the release";

  auto taken = acquire(io, *b);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message() << describe(taken.value);
  ASSERT_TRUE(run_until(io, [&] {
    for (const auto& t : c_heard->terms)
      if (t.token == taken.value.token && t.holder == "node-b") return true;
    return false;
  })) << "c never heard the target's term";
}

TEST_P(lease_store_contract, candidates_are_the_stores_that_tried_with_their_priorities) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl, 0);
  auto b = harness().make_store("node-b", ttl, 7);
  auto c = harness().make_store("node-c", ttl, -2);
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  ASSERT_EQ(acquire(io, *b).value.outcome, acquire_outcome::held);
  ASSERT_FALSE(acquire(io, *c).error);
  ASSERT_EQ(renew(io, *a).value, renew_answer::renewed);

  auto r = candidates(io, *c);
  ASSERT_FALSE(r.error) << r.error.message();
  std::string listed;
  for (const auto& x : r.value) listed += x.node + "(" + std::to_string(x.priority) + ") ";
  const auto* la = find_candidate(r.value, "node-a");
  const auto* lb = find_candidate(r.value, "node-b");
  const auto* lc = find_candidate(r.value, "node-c");
  ASSERT_TRUE(la && lb && lc) << "listed: " << listed;
  EXPECT_EQ(la->priority, 0);
  EXPECT_EQ(lb->priority, 7);
  EXPECT_EQ(lc->priority, -2);
  EXPECT_EQ(r.value.size(), 3u) << "listed: " << listed;
  EXPECT_LE(lb->live_for, limit) << "live for " << lb->live_for.count() << " ms";
}

TEST_P(lease_store_contract, a_held_answer_counts_the_live_candidates_of_a_higher_priority) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl, 9);
  auto b = harness().make_store("node-b", ttl, 5);
  auto c = harness().make_store("node-c", ttl, 1);
  auto d = harness().make_store("node-d", ttl, 1);
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  auto rb = acquire(io, *b);
  ASSERT_EQ(rb.value.outcome, acquire_outcome::held) << describe(rb.value);
  // The holder's own priority does not count: it is the one to replace.
  EXPECT_EQ(rb.value.outranked_by, 0);
  ASSERT_EQ(acquire(io, *c).value.outcome, acquire_outcome::held);
  auto rd = acquire(io, *d);
  ASSERT_EQ(rd.value.outcome, acquire_outcome::held) << describe(rd.value);
  EXPECT_EQ(rd.value.outranked_by, 1) << "node-b only: node-c's priority is equal";
  auto rc = acquire(io, *c);
  EXPECT_EQ(rc.value.outranked_by, 1);
}

// A switchover's target must not be cooling down, nor silent for longer
// than a standby waits between attempts: what the list says of both.
TEST_P(lease_store_contract, a_registered_cooldown_is_listed_until_the_next_attempt) {
  if (!harness().records_cooldown()) GTEST_SKIP() << "this kind records no cool-down";
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  ASSERT_EQ(acquire(io, *b).value.outcome, acquire_outcome::held);
  auto fresh = candidates(io, *b);
  ASSERT_FALSE(fresh.error) << fresh.error.message();
  const auto* listed = find_candidate(fresh.value, "node-a");
  ASSERT_NE(listed, nullptr);
  EXPECT_EQ(listed->cooling_down_for, 0ms);
  if (harness().tells_last_attempt()) {
    EXPECT_GE(listed->last_attempt_ago, 0ms);
    EXPECT_LE(listed->last_attempt_ago, limit);
  } else {
    EXPECT_LT(listed->last_attempt_ago, 0ms) << "a kind that cannot tell says so";
  }

  ASSERT_EQ(release(io, *a).value, release_answer::released);
  constexpr milliseconds cooldown{30s};
  a->register_cooldown(cooldown);
  const candidate_info* cooling = nullptr;
  outcome<std::vector<candidate_info>> seen;
  // Nothing answers the registration: look until it shows (bounded).
  for (int looks = 0; looks < 50; ++looks) {
    seen = candidates(io, *b);
    cooling = seen.error ? nullptr : find_candidate(seen.value, "node-a");
    if (cooling != nullptr && cooling->cooling_down_for > 0ms) break;
    pass(io, 100ms);
  }
  ASSERT_TRUE(cooling != nullptr && cooling->cooling_down_for > 0ms)
      << "the cool-down was never listed";
  EXPECT_LE(cooling->cooling_down_for, cooldown);
  EXPECT_GT(cooling->cooling_down_for, cooldown - limit);
  EXPECT_EQ(find_candidate(seen.value, "node-b")->cooling_down_for, 0ms) << "only a's";

  // Its next attempt ends the cool-down, and the registration says so. On
  // Redlock the attempt is answered once a quorum of masters took it; the
  // list also reads a master it has not reached yet, so look again (bounded).
  ASSERT_FALSE(acquire(io, *a).error);
  outcome<std::vector<candidate_info>> after;
  const candidate_info* back = nullptr;
  for (int looks = 0; looks < 50; ++looks) {
    after = candidates(io, *b);
    back = after.error ? nullptr : find_candidate(after.value, "node-a");
    if (back != nullptr && back->cooling_down_for == 0ms) break;
    pass(io, 20ms);
  }
  ASSERT_FALSE(after.error) << after.error.message();
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->cooling_down_for, 0ms);
}

TEST_P(lease_store_contract, a_candidate_gone_leaves_the_list_within_two_ttls) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", short_ttl);
  auto b = harness().make_store("node-b", short_ttl);
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  ASSERT_EQ(acquire(io, *b).value.outcome, acquire_outcome::held);
  auto before = candidates(io, *a);
  ASSERT_FALSE(before.error) << before.error.message();
  ASSERT_NE(find_candidate(before.value, "node-b"), nullptr);

  b.reset();
  // a keeps renewing meanwhile, as a leader does.
  const auto gone_by = 2 * short_ttl + harness().expiry_slack() + 500ms;
  for (milliseconds waited{0}; waited < gone_by; waited += 300ms) {
    ASSERT_EQ(renew(io, *a).value, renew_answer::renewed);
    pass(io, 300ms);
  }
  auto after = candidates(io, *a);
  ASSERT_FALSE(after.error) << after.error.message();
  EXPECT_EQ(find_candidate(after.value, "node-b"), nullptr) << "node-b still listed";
  EXPECT_NE(find_candidate(after.value, "node-a"), nullptr) << "the renewing leader is not listed";
}

}  // namespace
}  // namespace baton::contract
