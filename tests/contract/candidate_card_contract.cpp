// The lease-store contract, continued: what a registration carries besides
// the node id and the priority. Every kind keeps the candidate card
// (candidate_card.hpp) as an opaque string, changes it with update_card, and
// lists a candidate that registers without an attempt (async_look, what a
// drained or never-leading node does) with its card, and tells it who
// holds the lease.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lease_store_contract.hpp"

namespace baton::contract {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr milliseconds card_ttl{2000};
constexpr milliseconds card_limit{10s};

// Runs the loop until `done` holds (false after `within`).
bool card_run_until(asio::io_context& io, const std::function<bool()>& done,
                    milliseconds within = card_limit) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  io.restart();
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    io.run_for(5ms);
    io.restart();
  }
  return true;
}

void card_pass(asio::io_context& io, milliseconds d) {
  asio::steady_timer t(io, d);
  bool fired = false;
  t.async_wait([&](const boost::system::error_code&) { fired = true; });
  card_run_until(
      io, [&] { return fired; }, d + card_limit);
}

bool card_acquired(asio::io_context& io, lease_store& s, acquire_outcome* outcome = nullptr) {
  bool done = false;
  store_error error;
  acquire_answer answer;
  s.async_acquire([&](store_error e, acquire_answer a) {
    error = std::move(e);
    answer = std::move(a);
    done = true;
  });
  if (!card_run_until(io, [&] { return done; }) || error) return false;
  if (outcome != nullptr) *outcome = answer.outcome;
  return true;
}

bool card_renewed(asio::io_context& io, lease_store& s) {
  bool done = false;
  bool renewed = false;
  s.async_renew([&](store_error e, renew_answer a) {
    renewed = !e && a == renew_answer::renewed;
    done = true;
  });
  return card_run_until(io, [&] { return done; }) && renewed;
}

bool release_of(asio::io_context& io, lease_store& s) {
  bool done = false;
  bool released = false;
  s.async_release([&](store_error e, release_answer a) {
    released = !e && a == release_answer::released;
    done = true;
  });
  return card_run_until(io, [&] { return done; }) && released;
}

// `node`'s card as `reader` lists it, once `node` is listed with `card`
// (looked for a bounded number of times: registrations are unanswered);
// what it was last listed with otherwise ("(not listed)" when never).
std::string listed_card(asio::io_context& io, lease_store& reader, const std::string& node,
                        const std::string& card) {
  std::string seen = "(not listed)";
  for (int looks = 0; looks < 50; ++looks) {
    bool done = false;
    std::vector<candidate_info> list;
    reader.async_candidates([&](store_error e, std::vector<candidate_info> l) {
      if (!e) list = std::move(l);
      done = true;
    });
    card_run_until(io, [&] { return done; });
    for (const auto& c : list) {
      if (c.node == node) seen = c.card;
    }
    if (seen == card) return seen;
    card_pass(io, 100ms);
  }
  return seen;
}

TEST_P(lease_store_contract, a_registration_carries_its_card_and_update_card_changes_it) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", card_ttl);
  auto c = harness().make_store("node-c", card_ttl);
  const std::string eligible = "standing=eligible;advertise=10.0.0.1:5432";
  a->update_card(eligible);
  ASSERT_TRUE(card_acquired(io, *a));
  acquire_outcome seen_by_c{};
  ASSERT_TRUE(card_acquired(io, *c, &seen_by_c));
  EXPECT_EQ(seen_by_c, acquire_outcome::held);
  EXPECT_EQ(listed_card(io, *c, "node-a", eligible), eligible);
  EXPECT_EQ(listed_card(io, *a, "node-c", ""), "") << "a store made without a card has none";

  // A drain: the leader's next renewal (or the kind's own write) says so.
  const std::string drained = "standing=drained;advertise=10.0.0.1:5432";
  a->update_card(drained);
  ASSERT_TRUE(card_renewed(io, *a));
  EXPECT_EQ(listed_card(io, *c, "node-a", drained), drained);
}

TEST_P(lease_store_contract, a_look_lists_a_standby_with_its_card_and_names_the_holder) {
  auto& io = harness().io();
  auto a = harness().make_store("node-a", card_ttl);
  auto b = harness().make_store("node-b", card_ttl, 5);
  ASSERT_TRUE(card_acquired(io, *a));
  const std::string never = "standing=never;advertise=db-b:5432";
  b->update_card(never);
  bool looked = false;
  store_error error;
  lease_holder seen;
  b->async_look([&](store_error e, lease_holder h) {
    error = std::move(e);
    seen = std::move(h);
    looked = true;
  });
  ASSERT_TRUE(card_run_until(io, [&] { return looked; }));
  ASSERT_FALSE(error) << error.message();
  EXPECT_EQ(seen.node, "node-a");
  EXPECT_GT(seen.token, 0u);
  EXPECT_EQ(listed_card(io, *a, "node-b", never), never);
  // It took nothing: the lease is still a's.
  ASSERT_TRUE(card_renewed(io, *a));
  ASSERT_EQ(release_of(io, *a), true);
  looked = false;
  b->async_look([&](store_error e, lease_holder h) {
    error = std::move(e);
    seen = std::move(h);
    looked = true;
  });
  ASSERT_TRUE(card_run_until(io, [&] { return looked; }));
  ASSERT_FALSE(error) << error.message();
  EXPECT_EQ(seen.node, "") << "a free lease is nobody's";
}

}  // namespace
}  // namespace baton::contract
