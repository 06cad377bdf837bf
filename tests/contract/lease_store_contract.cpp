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

void lease_store_contract::SetUp() { harness_ = GetParam().make(); }

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

/// The lease ttl of a store unless a case needs it to run out.
constexpr milliseconds ttl{2000};
/// For cases that wait for a lease to run out.
constexpr milliseconds short_ttl{1000};

outcome<release_answer> hand_over(asio::io_context& io, lease_store& s, const std::string& to,
                                  milliseconds window) {
  auto out = collect<release_answer>();
  s.async_hand_over(to, window, into(out));
  return await(io, out, "hand_over");
}

outcome<record_answer> create_record(asio::io_context& io, lease_store& s) {
  auto out = collect<record_answer>();
  s.async_create_record(into(out));
  return await(io, out, "create_record");
}

// What a store's watcher heard.
struct heard {
  int events = 0;
  int released = 0;
  std::vector<store_events::acquired> terms;
  std::vector<std::string> resets;
  std::vector<bool> wakeups;

  bool trusted() const { return !wakeups.empty() && wakeups.back(); }
};

std::shared_ptr<heard> watch(lease_store& s) {
  auto h = std::make_shared<heard>();
  s.watch([h](const store_event& e) {
    ++h->events;
    if (std::holds_alternative<store_events::released>(e)) ++h->released;
    if (const auto* t = std::get_if<store_events::acquired>(&e)) h->terms.push_back(*t);
    if (const auto* r = std::get_if<store_events::reset>(&e)) h->resets.push_back(r->why);
    if (const auto* w = std::get_if<store_events::wakeups>(&e)) h->wakeups.push_back(w->trusted);
  });
  return h;
}

bool is_aborted(const store_error& e) { return e.code == std::errc::operation_canceled; }

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
  EXPECT_TRUE(taken.value.acquired()) << "the lease outlived its release: " << describe(taken.value);
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

// --- events ----------------------------------------------------------------------

TEST_P(lease_store_contract, watch_reports_trusted_wakeups_once_subscribed) {
  auto a = harness().make_store("node-a", ttl);
  EXPECT_EQ(a->status().wakeups, wakeup_state::off);
  auto heard = watch(*a);
  EXPECT_EQ(heard->events, 0) << "an event ran inline in watch()";
  ASSERT_TRUE(run_until(harness().io(), [&] { return !heard->wakeups.empty(); }))
      << "no wakeups event; wakeups " << to_string(a->status().wakeups);
  EXPECT_EQ(heard->wakeups, std::vector<bool>{true});
  EXPECT_EQ(a->status().wakeups, wakeup_state::subscribed);
}

TEST_P(lease_store_contract, a_release_is_announced_to_other_watchers_not_the_releaser) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto a_heard = watch(*a);
  auto b_heard = watch(*b);
  ASSERT_TRUE(run_until(io, [&] { return a_heard->trusted() && b_heard->trusted(); }));
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  const int a_before = a_heard->released;
  const int b_before = b_heard->released;

  ASSERT_EQ(release(io, *a).value, release_answer::released);
  ASSERT_TRUE(run_until(io, [&] { return b_heard->released > b_before; }))
      << "b never heard the release";

  // Announcements arrive in order: once a has heard b's new term, it would
  // have heard its own release before it.
  auto taken = acquire(io, *b);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message() << describe(taken.value);
  ASSERT_TRUE(run_until(io, [&] {
    for (const auto& t : a_heard->terms)
      if (t.token == taken.value.token) return true;
    return false;
  })) << "a never heard b's term";
  EXPECT_EQ(a_heard->released, a_before) << "a heard its own release";
  EXPECT_EQ(b_heard->released, b_before + 1);
}

TEST_P(lease_store_contract, new_terms_are_announced_to_every_watcher_the_acquirer_too) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto a_heard = watch(*a);
  auto b_heard = watch(*b);
  ASSERT_TRUE(run_until(io, [&] { return a_heard->trusted() && b_heard->trusted(); }));

  auto first = acquire(io, *a);
  ASSERT_TRUE(first.value.acquired()) << first.error.message();
  ASSERT_TRUE(run_until(io, [&] { return !a_heard->terms.empty() && !b_heard->terms.empty(); }))
      << "terms heard: a " << a_heard->terms.size() << ", b " << b_heard->terms.size();
  for (const auto* h : {a_heard.get(), b_heard.get()}) {
    ASSERT_EQ(h->terms.size(), 1u);
    EXPECT_EQ(h->terms[0].holder, "node-a");
    EXPECT_EQ(h->terms[0].token, first.value.token);
  }

  ASSERT_EQ(release(io, *a).value, release_answer::released);
  auto second = acquire(io, *b);
  ASSERT_TRUE(second.value.acquired()) << second.error.message();
  ASSERT_TRUE(run_until(io, [&] { return a_heard->terms.size() >= 2 && b_heard->terms.size() >= 2; }))
      << "terms heard: a " << a_heard->terms.size() << ", b " << b_heard->terms.size();
  for (const auto* h : {a_heard.get(), b_heard.get()}) {
    ASSERT_EQ(h->terms.size(), 2u);
    EXPECT_EQ(h->terms[1].holder, "node-b");
    EXPECT_EQ(h->terms[1].token, second.value.token);
  }
}

// --- completion rules ------------------------------------------------------------

TEST_P(lease_store_contract, handlers_run_later_never_inline) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto acquired = start_acquire(*a);
  EXPECT_EQ(acquired->calls, 0) << "acquire completed inline";
  ASSERT_TRUE(await(io, acquired, "acquire").value.acquired());
  auto renewed = start_renew(*a);
  EXPECT_EQ(renewed->calls, 0) << "renew completed inline";
  EXPECT_EQ(await(io, renewed, "renew").value, renew_answer::renewed);
  auto released = start_release(*a);
  EXPECT_EQ(released->calls, 0) << "release completed inline";
  EXPECT_EQ(await(io, released, "release").value, release_answer::released);
}

TEST_P(lease_store_contract, close_aborts_calls_in_flight_exactly_once_and_later_calls_too) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto acquired = start_acquire(*a);
  auto renewed = start_renew(*a);
  auto released = start_release(*a);
  a->close();
  EXPECT_EQ(acquired->calls + renewed->calls + released->calls, 0) << "aborted inline";
  ASSERT_TRUE(run_until(io, [&] {
    return acquired->calls > 0 && renewed->calls > 0 && released->calls > 0;
  })) << "calls: " << acquired->calls << " " << renewed->calls << " " << released->calls;
  EXPECT_TRUE(is_aborted(acquired->error)) << acquired->error.message();
  EXPECT_TRUE(is_aborted(renewed->error)) << renewed->error.message();
  EXPECT_TRUE(is_aborted(released->error)) << released->error.message();

  // After close: aborted too, and still not inline; a second close is harmless.
  auto later = start_acquire(*a);
  EXPECT_EQ(later->calls, 0) << "aborted inline";
  a->close();
  auto late = await(io, later, "acquire after close");
  EXPECT_TRUE(is_aborted(late.error)) << late.error.message();

  // Let a full round trip of another store pass, then a little more: nothing
  // completes twice.
  auto other = acquire(io, *b);
  EXPECT_EQ(other.calls, 1);
  EXPECT_FALSE(other.error) << other.error.message();
  pass(io, 200ms);
  EXPECT_EQ(acquired->calls, 1);
  EXPECT_EQ(renewed->calls, 1);
  EXPECT_EQ(released->calls, 1);
  EXPECT_EQ(later->calls, 1);
}

TEST_P(lease_store_contract, a_closed_store_reports_no_more_events) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto a_heard = watch(*a);
  auto b_heard = watch(*b);
  ASSERT_TRUE(run_until(io, [&] { return a_heard->trusted() && b_heard->trusted(); }));
  const int before = a_heard->events;
  a->close();

  auto taken = acquire(io, *b);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message();
  ASSERT_TRUE(run_until(io, [&] { return !b_heard->terms.empty(); })) << "b never heard its term";
  ASSERT_EQ(release(io, *b).value, release_answer::released);
  pass(io, 200ms);
  EXPECT_EQ(a_heard->events, before) << "a closed store reported events";
}

TEST_P(lease_store_contract, a_listener_may_close_its_store) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  int events = 0;
  a->watch([&](const store_event&) {
    ++events;
    a->close();
  });
  ASSERT_TRUE(run_until(io, [&] { return events > 0; })) << "no event";
  auto after = acquire(io, *a);
  EXPECT_TRUE(is_aborted(after.error)) << after.error.message();
  EXPECT_EQ(events, 1);
}

TEST_P(lease_store_contract, a_listener_may_destroy_its_store) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  int events = 0;
  a->watch([&](const store_event&) {
    ++events;
    a.reset();
  });
  ASSERT_TRUE(run_until(io, [&] { return events > 0; })) << "no event";
  EXPECT_EQ(a, nullptr);
  // The world goes on: another store's term, announced, and nothing of a's.
  auto b_heard = watch(*b);
  ASSERT_TRUE(run_until(io, [&] { return b_heard->trusted(); }));
  ASSERT_TRUE(acquire(io, *b).value.acquired());
  ASSERT_TRUE(run_until(io, [&] { return !b_heard->terms.empty(); }));
  EXPECT_EQ(events, 1);
}

TEST_P(lease_store_contract, a_destroyed_store_never_calls_back) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  auto b = harness().make_store("node-b", ttl);
  auto a_heard = watch(*a);
  auto acquired = start_acquire(*a);
  auto renewed = start_renew(*a);
  auto released = start_release(*a);
  a.reset();

  // Another store's round trip, and a little more: nothing of a's runs.
  auto other = acquire(io, *b);
  EXPECT_FALSE(other.error) << other.error.message();
  pass(io, 300ms);
  EXPECT_EQ(acquired->calls, 0);
  EXPECT_EQ(renewed->calls, 0);
  EXPECT_EQ(released->calls, 0);
  EXPECT_EQ(a_heard->events, 0);
}

// --- failures --------------------------------------------------------------------

TEST_P(lease_store_contract, an_unreachable_store_fails_calls_as_unavailable) {
  if (!harness().can_make_unreachable()) GTEST_SKIP() << harness().name() << " cannot be made unreachable";
  auto& io = harness().io();
  auto a = harness().make_store("node-a", ttl);
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  harness().make_unreachable();
  const auto failed_after = mono_clock::now();

  auto r = acquire(io, *a);
  ASSERT_TRUE(r.error) << "acquire succeeded: " << describe(r.value);
  EXPECT_EQ(r.error.code, store_errc::unavailable) << r.error.code.message();
  EXPECT_STREQ(store_error_kind(r.error.code), "unavailable");
  EXPECT_FALSE(r.error.message().empty());
  auto rn = renew(io, *a);
  EXPECT_EQ(rn.error.code, store_errc::unavailable) << rn.error.message();
  auto rl = release(io, *a);
  EXPECT_EQ(rl.error.code, store_errc::unavailable) << rl.error.message();

  auto s = a->status();
  EXPECT_NE(s.link, link_state::connected);
  EXPECT_NE(s.last_error, "");
  EXPECT_EQ(s.last_error_kind, "unavailable");
  ASSERT_TRUE(s.last_error_at.has_value());
  EXPECT_GE(*s.last_error_at, failed_after);
}

}  // namespace
}  // namespace baton::contract
