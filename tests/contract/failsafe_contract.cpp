// The lease-store contract, continued: the calls of lease.failsafe peers
// (lease_store::failsafe(), docs/safety.md rules F1, F6, F7, F8 and F9), on
// every kind that carries the mode out, judged through the port only. A
// grant leaves a term in the record that holds a free lease back until a
// taker cleared it; a release ends it; a renewal writes its list only when
// its number is higher; a caller that may not win only registers, with its
// promise, which holds a free lease too; a resume takes the term up again
// with its token, also after the store lost its data, and fails when
// another term exists. Only the kinds that carry the mode out instantiate
// these cases (INSTANTIATE_TEST_SUITE_P(contract, failsafe_contract, ...)).
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "contract_calls.hpp"
#include "lease_store_contract.hpp"

namespace baton::contract {
namespace {

namespace asio = boost::asio;

/// Leases here run out on purpose: a term's record outlives its lease.
constexpr milliseconds failsafe_ttl{1000};

const failsafe_peer peer_a{"node-a", "10.0.0.1:9465"};
const failsafe_peer peer_b{"node-b", "10.0.0.2:9465"};
const failsafe_peer peer_c{"node-c", "10.0.0.3:9465"};

outcome<acquire_answer> acquire_with(asio::io_context& io, lease_store& s,
                                     const failsafe_acquire& a) {
  return called<acquire_answer>(io, "failsafe acquire",
                                [&](auto h) { s.failsafe()->async_acquire(a, std::move(h)); });
}
outcome<renew_answer> renew_with(asio::io_context& io, lease_store& s, const failsafe_list& l) {
  return called<renew_answer>(io, "failsafe renew",
                              [&](auto h) { s.failsafe()->async_renew(l, std::move(h)); });
}
outcome<renew_answer> resume_with(asio::io_context& io, lease_store& s, std::uint64_t token,
                                  const failsafe_list& l) {
  return called<renew_answer>(io, "resume",
                              [&](auto h) { s.failsafe()->async_resume(token, l, std::move(h)); });
}

failsafe_acquire granting(failsafe_list list) {
  failsafe_acquire a;
  a.list = std::move(list);
  return a;
}
failsafe_acquire clearing(std::uint64_t token, failsafe_list list = {}) {
  failsafe_acquire a = granting(std::move(list));
  a.cleared_token = token;
  return a;
}

std::string describe_hold(const acquire_answer& a) {
  if (!a.failsafe_hold) return describe(a) + " (no failsafe hold) " + a.why;
  std::string peers;
  for (const auto& p : a.failsafe_hold->peers) peers += " " + p.node + "@" + p.address;
  return "failsafe hold: leader=" + a.failsafe_hold->leader +
         " token=" + std::to_string(a.failsafe_hold->token) +
         " address=" + a.failsafe_hold->leader_address + " peers:" + peers;
}

// The three candidates with their peer addresses, made by the harness; the
// cases skip a kind whose store does not carry the mode out.
class failsafe_world {
 public:
  explicit failsafe_world(contract_harness& h)
      : harness(h),
        a(h.make_candidate({peer_a.node, failsafe_ttl, 0, peer_a.address})),
        b(h.make_candidate({peer_b.node, failsafe_ttl, 0, peer_b.address})),
        c(h.make_candidate({peer_c.node, failsafe_ttl, 0, peer_c.address})) {}

  bool carried_out() const { return a->failsafe() != nullptr; }
  asio::io_context& io() { return harness.io(); }

  // node-a wins with `list`; node-b then looks at the lease as a standby
  // does (a kind may hold back a candidate that never saw a lease before it
  // lapsed: postgres).
  std::uint64_t a_leads(failsafe_list list) {
    auto won = acquire_with(io(), *a, granting(std::move(list)));
    EXPECT_FALSE(won.error) << won.error.message();
    EXPECT_TRUE(won.value.acquired()) << describe(won.value);
    auto seen = acquire_with(io(), *b, {});
    EXPECT_EQ(seen.value.outcome, acquire_outcome::held) << describe(seen.value);
    EXPECT_EQ(seen.value.holder, peer_a.node);
    EXPECT_EQ(seen.value.token, won.value.token) << "a held answer names the term's own token";
    return won.value.token;
  }
  // Lets every lease made now run out unrenewed.
  void leases_run_out() { pass(io(), failsafe_ttl + 300ms + harness.expiry_slack()); }

  contract_harness& harness;
  std::unique_ptr<lease_store> a, b, c;
};

TEST_P(failsafe_contract, a_failsafe_term_holds_a_free_lease_until_a_taker_cleared_it) {
  failsafe_world w(harness());
  ASSERT_TRUE(w.carried_out()) << "the store has no failsafe() calls";
  const auto token = w.a_leads({1, {peer_b, peer_c}});
  w.leases_run_out();

  auto held = acquire_with(w.io(), *w.b, {});
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, acquire_outcome::held_back) << describe(held.value);
  ASSERT_TRUE(held.value.failsafe_hold) << describe_hold(held.value);
  EXPECT_EQ(held.value.failsafe_hold->leader, peer_a.node);
  EXPECT_EQ(held.value.failsafe_hold->token, token);
  EXPECT_EQ(held.value.failsafe_hold->leader_address, peer_a.address);
  EXPECT_EQ(held.value.failsafe_hold->peers, (std::vector<failsafe_peer>{peer_b, peer_c}))
      << describe_hold(held.value);

  // Cleared up to an older token: still held.
  EXPECT_TRUE(acquire_with(w.io(), *w.b, clearing(token - 1)).value.failsafe_hold);
  // Cleared: granted, and the record is the new term's.
  auto won = acquire_with(w.io(), *w.b, clearing(token, {1, {peer_c}}));
  ASSERT_TRUE(won.value.acquired()) << won.error.message() << " " << describe_hold(won.value);
  EXPECT_GT(won.value.token, token);
  auto seen = acquire_with(w.io(), *w.c, {});
  EXPECT_EQ(seen.value.outcome, acquire_outcome::held) << describe(seen.value);
  EXPECT_EQ(seen.value.holder, peer_b.node);
  EXPECT_EQ(seen.value.token, won.value.token);
}

TEST_P(failsafe_contract, a_released_failsafe_term_holds_nobody_back) {
  failsafe_world w(harness());
  ASSERT_TRUE(w.carried_out()) << "the store has no failsafe() calls";
  const auto token = w.a_leads({1, {peer_b, peer_c}});
  ASSERT_EQ(release(w.io(), *w.a).value, release_answer::released);
  auto won = acquire_with(w.io(), *w.b, {});
  ASSERT_TRUE(won.value.acquired()) << won.error.message() << " " << describe_hold(won.value);
  EXPECT_GT(won.value.token, token);
}

TEST_P(failsafe_contract, a_renewal_writes_its_list_only_when_its_number_is_higher) {
  failsafe_world w(harness());
  ASSERT_TRUE(w.carried_out()) << "the store has no failsafe() calls";
  w.a_leads({1, {peer_b, peer_c}});
  auto renewed = renew_with(w.io(), *w.a, {3, {peer_b}});
  ASSERT_EQ(renewed.value, renew_answer::renewed) << renewed.error.message();
  // A write that lands late, numbered 2: the lease is renewed, the list stays.
  renewed = renew_with(w.io(), *w.a, {2, {}});
  ASSERT_EQ(renewed.value, renew_answer::renewed) << renewed.error.message();
  w.leases_run_out();
  auto held = acquire_with(w.io(), *w.c, {});
  ASSERT_TRUE(held.value.failsafe_hold) << describe_hold(held.value);
  EXPECT_EQ(held.value.failsafe_hold->peers, (std::vector<failsafe_peer>{peer_b}))
      << describe_hold(held.value);
}

TEST_P(failsafe_contract, a_failsafe_term_with_an_empty_list_names_nobody_to_ask) {
  failsafe_world w(harness());
  ASSERT_TRUE(w.carried_out()) << "the store has no failsafe() calls";
  const auto token = w.a_leads({});
  w.leases_run_out();
  auto held = acquire_with(w.io(), *w.b, {});
  ASSERT_TRUE(held.value.failsafe_hold) << describe_hold(held.value);
  EXPECT_TRUE(held.value.failsafe_hold->peers.empty()) << "the taker may clear it at once (F2)";
  EXPECT_EQ(held.value.failsafe_hold->token, token);
}

TEST_P(failsafe_contract, a_failsafe_caller_that_may_not_win_only_registers) {
  failsafe_world w(harness());
  ASSERT_TRUE(w.carried_out()) << "the store has no failsafe() calls";
  failsafe_acquire waiting;
  waiting.may_win = false;
  auto r = acquire_with(w.io(), *w.b, waiting);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value.outcome, acquire_outcome::held_back) << describe(r.value);
  EXPECT_FALSE(r.value.failsafe_hold);
  EXPECT_NE(r.value.why.find("may not take the lease yet"), std::string::npos) << r.value.why;
  // Nothing was granted: the lease is free for another.
  ASSERT_TRUE(acquire_with(w.io(), *w.c, {}).value.acquired());
  auto listed = candidates(w.io(), *w.c);
  ASSERT_FALSE(listed.error) << listed.error.message();
  const auto* b = find_candidate(listed.value, peer_b.node);
  ASSERT_NE(b, nullptr) << "the register-only call registered node-b";
  EXPECT_EQ(b->peer_address, peer_b.address);
}

// A candidate that may not lead (drained, never leading) looks instead of
// trying; in the mode it is not listed, so no leader asks it to confirm.
TEST_P(failsafe_contract, a_look_in_the_mode_registers_nothing) {
  failsafe_world w(harness());
  ASSERT_TRUE(w.carried_out()) << "the store has no failsafe() calls";
  w.a_leads({1, {peer_b}});
  auto looked =
      called<lease_holder>(w.io(), "look", [&](auto h) { w.c->async_look(std::move(h)); });
  ASSERT_FALSE(looked.error) << looked.error.message();
  EXPECT_EQ(looked.value.node, peer_a.node);
  pass(w.io(), 200ms);
  auto listed = candidates(w.io(), *w.a);
  ASSERT_FALSE(listed.error) << listed.error.message();
  EXPECT_NE(find_candidate(listed.value, peer_b.node), nullptr) << "a standby that tried is listed";
  EXPECT_EQ(find_candidate(listed.value, peer_c.node), nullptr) << "the look registered node-c";
}

TEST_P(failsafe_contract, a_registered_failsafe_promise_holds_a_free_lease) {
  failsafe_world w(harness());
  ASSERT_TRUE(w.carried_out()) << "the store has no failsafe() calls";
  // node-c promised node-a's term 5000 for 3 s (F9); the store has no record
  // of that term.
  failsafe_acquire promising;
  promising.may_win = false;
  promising.promise = failsafe_promise{peer_a.node, 5000, 3000ms};
  ASSERT_FALSE(acquire_with(w.io(), *w.c, promising).error);
  auto held = acquire_with(w.io(), *w.b, {});
  ASSERT_TRUE(held.value.failsafe_hold) << describe_hold(held.value);
  EXPECT_EQ(held.value.failsafe_hold->leader, peer_a.node);
  EXPECT_EQ(held.value.failsafe_hold->token, 5000u);
  EXPECT_EQ(held.value.failsafe_hold->peers, (std::vector<failsafe_peer>{peer_c}))
      << describe_hold(held.value);
  auto won = acquire_with(w.io(), *w.b, clearing(5000));
  EXPECT_TRUE(won.value.acquired()) << won.error.message() << " " << describe_hold(won.value);
}

TEST_P(failsafe_contract, a_resume_takes_the_term_up_again_with_its_token) {
  failsafe_world w(harness());
  ASSERT_TRUE(w.carried_out()) << "the store has no failsafe() calls";
  const auto token = w.a_leads({1, {peer_b, peer_c}});
  w.leases_run_out();
  auto resumed = resume_with(w.io(), *w.a, token, {2, {peer_b}});
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  EXPECT_EQ(resumed.value, renew_answer::renewed);
  auto seen = acquire_with(w.io(), *w.b, {});
  EXPECT_EQ(seen.value.outcome, acquire_outcome::held) << describe_hold(seen.value);
  EXPECT_EQ(seen.value.holder, peer_a.node);
  EXPECT_EQ(seen.value.token, token) << "the app keeps its token";
  EXPECT_EQ(renew_with(w.io(), *w.a, {3, {}}).value, renew_answer::renewed);
}

TEST_P(failsafe_contract, a_resume_after_the_store_lost_its_data_keeps_tokens_rising) {
  failsafe_world w(harness());
  ASSERT_TRUE(w.carried_out()) << "the store has no failsafe() calls";
  const auto token = w.a_leads({1, {peer_b, peer_c}});
  harness().reset_store();
  auto resumed = answered<renew_answer>(w.io(), [&] {
    return resume_with(w.io(), *w.a, token, {2, {peer_b}});
  });
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  ASSERT_EQ(resumed.value, renew_answer::renewed) << "a resume passes a reset's hold-back";
  ASSERT_EQ(release(w.io(), *w.a).value, release_answer::released);
  // The next term, once any hold-back of the reset is over, has a higher
  // token than the resumed one.
  outcome<acquire_answer> won;
  const auto give_up = std::chrono::steady_clock::now() + failsafe_ttl * 3 + limit;
  while (std::chrono::steady_clock::now() < give_up) {
    won = acquire_with(w.io(), *w.b, {});
    if (won.value.acquired() || won.value.failsafe_hold) break;
    pass(w.io(), 100ms);
  }
  ASSERT_TRUE(won.value.acquired()) << won.error.message() << " " << describe_hold(won.value);
  EXPECT_GT(won.value.token, token) << "tokens never go back";
}

TEST_P(failsafe_contract, a_resume_fails_when_another_term_exists) {
  failsafe_world w(harness());
  ASSERT_TRUE(w.carried_out()) << "the store has no failsafe() calls";
  const auto token = w.a_leads({1, {peer_b, peer_c}});
  w.leases_run_out();
  // node-b cleared node-a's term and took the lease.
  auto won = acquire_with(w.io(), *w.b, clearing(token, {1, {peer_c}}));
  ASSERT_TRUE(won.value.acquired()) << won.error.message() << " " << describe_hold(won.value);
  EXPECT_EQ(resume_with(w.io(), *w.a, token, {2, {}}).value, renew_answer::lost);
  // node-b's lease free again, its term in the record: still lost, and the
  // record still names node-b's term.
  w.leases_run_out();
  EXPECT_EQ(resume_with(w.io(), *w.a, token, {3, {}}).value, renew_answer::lost);
  auto held = acquire_with(w.io(), *w.c, {});
  ASSERT_TRUE(held.value.failsafe_hold) << describe_hold(held.value);
  EXPECT_EQ(held.value.failsafe_hold->leader, peer_b.node);
  EXPECT_EQ(held.value.failsafe_hold->token, won.value.token);
}

TEST_P(failsafe_contract, a_term_granted_without_the_mode_holds_nobody_back) {
  failsafe_world w(harness());
  ASSERT_TRUE(w.carried_out()) << "the store has no failsafe() calls";
  auto plain = harness().make_store("node-d", failsafe_ttl);
  ASSERT_TRUE(acquire(w.io(), *plain).value.acquired());
  ASSERT_EQ(acquire_with(w.io(), *w.b, {}).value.outcome, acquire_outcome::held);
  w.leases_run_out();
  auto won = acquire_with(w.io(), *w.b, {});
  EXPECT_TRUE(won.value.acquired()) << won.error.message() << " " << describe_hold(won.value);
}

}  // namespace

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(failsafe_contract);

}  // namespace baton::contract
