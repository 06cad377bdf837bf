// The cases of the lease-store contract (see lease_store_contract.hpp): what
// every store kind must do behind the port, judged only through the port.
//
// Timing: a 2-core shared machine, so ttls are 1-3 s, latencies are never
// asserted, and every wait is bounded: the io_context runs until a condition
// holds or a limit passes. Time is only let pass on purpose where time is the
// point (a lease running out, the hold-back after a reset) or to see that
// nothing more happens.
#include "lease_store_contract.hpp"

#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include "contract_calls.hpp"

namespace baton::contract {

void lease_store_contract::SetUp() {
  harness_ = GetParam().make();
}

// The test body's stores are gone by now; the harness (and its server) last.
void lease_store_contract::TearDown() {
  if (HasFailure() && harness_) {
    const auto more = harness_->diagnostics();
    if (!more.empty()) std::cerr << "[" << harness_->name() << "] " << more << "\n";
  }
  harness_.reset();
}

std::string contract_kind_name(const ::testing::TestParamInfo<contract_kind>& info) {
  return info.param.name;
}

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// --- identity and status -------------------------------------------------------

TEST_P(lease_store_contract, identity_is_what_the_store_was_made_with) {
  auto a = harness().make_store("node-a", 1500ms);
  auto b = harness().make_store("node-b", 2500ms);
  EXPECT_EQ(a->identity().node_id, "node-a");
  EXPECT_EQ(a->identity().ttl, 1500ms);
  EXPECT_FALSE(a->identity().election.empty());
  EXPECT_EQ(b->identity().node_id, "node-b");
  EXPECT_EQ(b->identity().ttl, 2500ms);
  EXPECT_EQ(b->identity().election, a->identity().election);
}

TEST_P(lease_store_contract, status_names_the_kind_and_the_link_is_up_after_a_call) {
  auto a = harness().make_store("node-a", ttl);
  auto before = a->status();
  EXPECT_EQ(before.kind, harness().name());
  EXPECT_FALSE(before.label.empty());
  EXPECT_EQ(before.wakeups, wakeup_state::off) << "nobody watches yet";
  EXPECT_EQ(before.last_error, "");
  EXPECT_EQ(before.last_error_kind, "");
  EXPECT_FALSE(before.last_error_at.has_value());
  EXPECT_EQ(before.last_reset, "");

  auto r = acquire(harness().io(), *a);
  ASSERT_FALSE(r.error) << r.error.message();
  auto after = a->status();
  EXPECT_EQ(after.link, link_state::connected);
  EXPECT_EQ(after.last_error, "");
  EXPECT_EQ(after.kind, harness().name());
}

// --- acquire ---------------------------------------------------------------------

TEST_P(lease_store_contract, acquire_when_free) {
  auto a = harness().make_store("node-a", ttl);
  auto r = acquire(harness().io(), *a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.calls, 1);
  EXPECT_TRUE(r.value.acquired()) << describe(r.value);
  EXPECT_GT(r.value.token, 0u);
}

TEST_P(lease_store_contract, acquire_when_held_names_the_holder_its_token_and_remaining_time) {
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto first = acquire(harness().io(), *a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message() << describe(first.value);

  auto r = acquire(harness().io(), *b);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value.outcome, acquire_outcome::held) << describe(r.value);
  EXPECT_FALSE(r.value.acquired());
  EXPECT_EQ(r.value.holder, "node-a");
  EXPECT_EQ(r.value.token, first.value.token);
  EXPECT_GT(r.value.remaining, 0ms);
  EXPECT_LE(r.value.remaining, ttl);
}

// Whether a re-acquire starts a new term is the kind's own: Redis hands out a
// new token (its acquire script always INCRs). What every kind guarantees:
// still ours, never a smaller token, and others see the token we were given.
TEST_P(lease_store_contract, reacquiring_our_own_lease_keeps_it_ours) {
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto first = acquire(harness().io(), *a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message() << describe(first.value);

  auto again = acquire(harness().io(), *a);
  ASSERT_FALSE(again.error) << again.error.message();
  ASSERT_TRUE(again.value.acquired()) << describe(again.value);
  EXPECT_GE(again.value.token, first.value.token);

  auto other = acquire(harness().io(), *b);
  ASSERT_FALSE(other.error) << other.error.message();
  EXPECT_EQ(other.value.outcome, acquire_outcome::held) << describe(other.value);
  EXPECT_EQ(other.value.holder, "node-a");
  EXPECT_EQ(other.value.token, again.value.token);
}

// --- renew -----------------------------------------------------------------------

TEST_P(lease_store_contract, renew_extends_our_own_lease_to_a_full_ttl) {
  constexpr milliseconds long_ttl{3000};
  auto& io = harness().io();
  auto a = harness().make_store("node-a", long_ttl);
  auto b = harness().make_store("node-b", long_ttl);
  auto first = acquire(io, *a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message() << describe(first.value);

  pass(io, 1800ms);
  auto r = renew(io, *a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, renew_answer::renewed);

  // Unrenewed, at most 1200 ms would be left now.
  auto seen = acquire(io, *b);
  ASSERT_FALSE(seen.error) << seen.error.message();
  EXPECT_EQ(seen.value.outcome, acquire_outcome::held) << describe(seen.value);
  EXPECT_GT(seen.value.remaining, 1500ms) << describe(seen.value);
  EXPECT_LE(seen.value.remaining, long_ttl);

  // Past the first lease's end, still ours.
  pass(io, 1500ms);
  auto later = acquire(io, *b);
  ASSERT_FALSE(later.error) << later.error.message();
  EXPECT_EQ(later.value.outcome, acquire_outcome::held) << describe(later.value);
  EXPECT_EQ(later.value.holder, "node-a");
  EXPECT_EQ(later.value.token, first.value.token);
}

TEST_P(lease_store_contract, renew_after_our_lease_ran_out_is_lost) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", short_ttl);
  auto b = harness().make_store("node-b", short_ttl);
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  // b watches the lease as a standby does: a kind may hold a candidate that
  // never looked before back from a lease that lapsed unreleased (postgres,
  // for a step of the server's clock: docs/stores/postgres.md).
  ASSERT_EQ(acquire(io, *b).value.outcome, acquire_outcome::held);

  pass(io, short_ttl + 300ms + harness().expiry_slack());
  auto r = renew(io, *a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, renew_answer::lost);
  // Nothing was renewed: the lease is free.
  auto taken = acquire(io, *b);
  ASSERT_FALSE(taken.error) << taken.error.message();
  EXPECT_TRUE(taken.value.acquired()) << describe(taken.value);
}

TEST_P(lease_store_contract, renew_after_another_took_the_lease_is_lost) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", short_ttl);
  auto b = harness().make_store("node-b", short_ttl);
  auto first = acquire(io, *a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message();
  ASSERT_EQ(acquire(io, *b).value.outcome, acquire_outcome::held);  // b watches, as above

  pass(io, short_ttl + 300ms + harness().expiry_slack());
  auto taken = acquire(io, *b);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message() << describe(taken.value);
  EXPECT_GT(taken.value.token, first.value.token);

  auto r = renew(io, *a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, renew_answer::lost);
  // The renewal left b's lease alone.
  auto seen = acquire(io, *a);
  ASSERT_FALSE(seen.error) << seen.error.message();
  EXPECT_EQ(seen.value.outcome, acquire_outcome::held) << describe(seen.value);
  EXPECT_EQ(seen.value.holder, "node-b");
  EXPECT_EQ(seen.value.token, taken.value.token);
}

TEST_P(lease_store_contract, renew_of_a_lease_never_held_is_lost) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto free = renew(io, *b);
  ASSERT_FALSE(free.error) << free.error.message();
  EXPECT_EQ(free.value, renew_answer::lost) << "renewed a free lease";

  ASSERT_TRUE(acquire(io, *a).value.acquired());
  auto taken = renew(io, *b);
  ASSERT_FALSE(taken.error) << taken.error.message();
  EXPECT_EQ(taken.value, renew_answer::lost) << "renewed another's lease";
  auto own = renew(io, *a);
  ASSERT_FALSE(own.error) << own.error.message();
  EXPECT_EQ(own.value, renew_answer::renewed);
}

// --- release ---------------------------------------------------------------------

TEST_P(lease_store_contract, release_of_our_own_lease_frees_it_at_once) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto first = acquire(io, *a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message();

  auto r = release(io, *a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, release_answer::released);

  // No waiting for the ttl: b takes it now, in a new term.
  auto taken = acquire(io, *b);
  ASSERT_FALSE(taken.error) << taken.error.message();
  ASSERT_TRUE(taken.value.acquired()) << describe(taken.value);
  EXPECT_GT(taken.value.token, first.value.token);

  auto again = release(io, *a);
  ASSERT_FALSE(again.error) << again.error.message();
  EXPECT_EQ(again.value, release_answer::not_ours) << "released b's lease";
}

// A leader that stops keeps renewing until its app has stopped, so its
// release can go out while a renewal is still unanswered: the release must
// free the lease all the same (on ZooKeeper, the renewal moved the lease
// node's version, and a release sent with the version from before answered
// "not ours" and left the lease to expire).
TEST_P(lease_store_contract, a_release_sent_while_a_renewal_is_in_flight_frees_the_lease) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto first = acquire(io, *a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message();

  auto renewal = start_renew(*a);
  auto freed = start_release(*a);
  // The renewal may land first (renewed) or after the release (lost: the
  // lease is no longer ours); either is true.
  auto renew_answered = await(io, renewal, "renew");
  ASSERT_FALSE(renew_answered.error) << renew_answered.error.message();
  auto r = await(io, freed, "release");
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, release_answer::released);

  auto taken = acquire(io, *b);
  ASSERT_FALSE(taken.error) << taken.error.message();
  EXPECT_TRUE(taken.value.acquired())
      << "the lease outlived its release: " << describe(taken.value);
}

TEST_P(lease_store_contract, release_of_a_lease_not_ours_changes_nothing) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto free = release(io, *b);
  ASSERT_FALSE(free.error) << free.error.message();
  EXPECT_EQ(free.value, release_answer::not_ours) << "released a free lease";

  auto first = acquire(io, *a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message();
  auto r = release(io, *b);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value, release_answer::not_ours);

  auto seen = acquire(io, *b);
  ASSERT_FALSE(seen.error) << seen.error.message();
  EXPECT_EQ(seen.value.outcome, acquire_outcome::held) << describe(seen.value);
  EXPECT_EQ(seen.value.holder, "node-a");
  EXPECT_EQ(seen.value.token, first.value.token);
  EXPECT_EQ(renew(io, *a).value, renew_answer::renewed);
}

TEST_P(lease_store_contract, creating_the_record_twice_changes_nothing_the_second_time) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto first = create_record(io, *a);
  ASSERT_FALSE(first.error) << first.error.message();
  auto again = create_record(io, *a);
  ASSERT_FALSE(again.error) << again.error.message();
  EXPECT_EQ(again.value, record_answer::existed);
  // With the record there, the first acquisition is not held back.
  auto won = acquire(io, *a);
  ASSERT_FALSE(won.error) << won.error.message();
  EXPECT_TRUE(won.value.acquired()) << describe(won.value);
  EXPECT_EQ(create_record(io, *a).value, record_answer::existed);
  // And the counter was left alone: the next term still takes a larger token.
  ASSERT_EQ(release(io, *a).value, release_answer::released);
  auto next = acquire(io, *a);
  ASSERT_TRUE(next.value.acquired()) << describe(next.value);
  EXPECT_GT(next.value.token, won.value.token);
}

// --- tokens ----------------------------------------------------------------------

TEST_P(lease_store_contract, tokens_strictly_increase_across_terms) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  std::vector<std::uint64_t> tokens;
  for (int term = 0; term < 6; ++term) {
    auto& winner = term % 3 == 1 ? *a : *b;  // b, a, b, b, a, b: also twice in a row
    auto& other = &winner == a.get() ? *b : *a;
    auto won = acquire(io, winner);
    ASSERT_FALSE(won.error) << won.error.message();
    ASSERT_TRUE(won.value.acquired()) << "term " << term << ": " << describe(won.value);
    if (!tokens.empty()) {
      EXPECT_GT(won.value.token, tokens.back()) << "term " << term;
    }
    tokens.push_back(won.value.token);

    auto seen = acquire(io, other);
    EXPECT_EQ(seen.value.outcome, acquire_outcome::held) << describe(seen.value);
    EXPECT_EQ(seen.value.token, won.value.token);
    EXPECT_EQ(seen.value.holder, winner.identity().node_id);
    ASSERT_EQ(release(io, winner).value, release_answer::released);
  }
  EXPECT_EQ(tokens.size(), 6u);
}

}  // namespace
}  // namespace baton::contract
