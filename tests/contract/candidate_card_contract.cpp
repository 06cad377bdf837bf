// The lease-store contract, continued: what a registration carries besides
// the node id and the priority. Every kind keeps the candidate card
// (candidate_card.hpp) as an opaque string, changes it with update_card, and
// lists a candidate that registers without an attempt (async_look, what a
// drained or never-leading node does) with its card, and tells it who
// holds the lease.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "contract_calls.hpp"
#include "lease_store_contract.hpp"

namespace baton::contract {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr milliseconds card_ttl{2000};

outcome<lease_holder> look(asio::io_context& io, lease_store& s) {
  return called<lease_holder>(io, "look", [&](auto h) { s.async_look(std::move(h)); });
}

// `node`'s card as `reader` lists it, once `node` is listed with `card`
// (looked for a bounded number of times: registrations are unanswered);
// what it was last listed with otherwise ("(not listed)" when never).
std::string listed_card(asio::io_context& io, lease_store& reader, const std::string& node,
                        const std::string& card) {
  std::string seen = "(not listed)";
  for (int looks = 0; looks < 50; ++looks) {
    const auto listed = candidates(io, reader);
    if (const auto* c = find_candidate(listed.value, node)) seen = c->card;
    if (seen == card) return seen;
    pass(io, 100ms);
  }
  return seen;
}

TEST_P(lease_store_contract, a_registration_carries_its_card_and_update_card_changes_it) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", card_ttl);
  auto c = harness().make_store("node-c", card_ttl);
  const std::string eligible = "standing=eligible;advertise=10.0.0.1:5432";
  a->update_card(eligible);
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  EXPECT_EQ(acquire(io, *c).value.outcome, acquire_outcome::held);
  EXPECT_EQ(listed_card(io, *c, "node-a", eligible), eligible);
  EXPECT_EQ(listed_card(io, *a, "node-c", ""), "") << "a store made without a card has none";

  // A drain: the leader's next renewal (or the kind's own write) says so.
  const std::string drained = "standing=drained;advertise=10.0.0.1:5432";
  a->update_card(drained);
  ASSERT_EQ(renew(io, *a).value, renew_answer::renewed);
  EXPECT_EQ(listed_card(io, *c, "node-a", drained), drained);
}

TEST_P(lease_store_contract, a_look_lists_a_standby_with_its_card_and_names_the_holder) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", card_ttl);
  auto b = harness().make_store("node-b", card_ttl, 5);
  ASSERT_TRUE(acquire(io, *a).value.acquired());
  const std::string never = "standing=never;advertise=db-b:5432";
  b->update_card(never);
  auto seen = look(io, *b);
  ASSERT_FALSE(seen.error) << seen.error.message();
  EXPECT_EQ(seen.value.node, "node-a");
  EXPECT_GT(seen.value.token, 0u);
  EXPECT_EQ(listed_card(io, *a, "node-b", never), never);
  // It took nothing: the lease is still a's.
  ASSERT_EQ(renew(io, *a).value, renew_answer::renewed);
  ASSERT_EQ(release(io, *a).value, release_answer::released);
  seen = look(io, *b);
  ASSERT_FALSE(seen.error) << seen.error.message();
  EXPECT_EQ(seen.value.node, "") << "a free lease is nobody's";
}

}  // namespace
}  // namespace baton::contract
