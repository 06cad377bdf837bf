// postgres_store against a PostgreSQL whose wall clock steps (libfaketime):
// the watch on the database's clock (src/postgres/clock_watch.hpp). A step
// forward makes a leader's row look lapsed before its next renewal; a
// standby that saw the step, and a candidate that has not watched the clock
// for a ttl, are held back from such a row for a ttl and say why (and from
// a row whose hold-back the step cut short), while a released row is taken
// at once, and the old leader's renewal finds its term gone.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>

#include "postgres/postgres_store.hpp"
#include "support/servers/postgres_server.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

constexpr milliseconds step_ttl{1000};

testing::postgres_server_options a_clock_that_steps() {
  testing::postgres_server_options o;
  o.fake_clock = true;
  return o;
}

struct clock_step : ::testing::Test {
  testing::postgres_server pg{a_clock_that_steps()};
  boost::asio::io_context io;

  std::unique_ptr<postgres_store> candidate(const std::string& node) {
    postgres_store_options o;
    o.conninfo = pg.conninfo("postgres");
    o.identity = {"e", node, step_ttl};
    o.connect_timeout = 2000ms;
    o.command_timeout = 500ms;
    return std::make_unique<postgres_store>(io, std::move(o));
  }

  // Runs the io_context until `slot` is set, at most 10 s.
  template <typename T>
  std::optional<T> run_for_answer(std::optional<T>& slot) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!slot && std::chrono::steady_clock::now() < deadline) {
      if (io.stopped()) io.restart();
      io.run_one_for(50ms);
    }
    return slot;
  }

  // Lets `d` pass with the io_context running (the stores' sessions live).
  void let_pass(milliseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
      if (io.stopped()) io.restart();
      io.run_one_until(until);
    }
  }

  acquire_answer look(lease_store& s) {
    std::optional<std::pair<store_error, acquire_answer>> out;
    s.async_acquire([&](store_error e, acquire_answer a) { out.emplace(std::move(e), std::move(a)); });
    const auto r = run_for_answer(out);
    EXPECT_TRUE(r) << "no answer within 10 s";
    EXPECT_FALSE(r && r->first) << r->first.message();
    return r ? r->second : acquire_answer{};
  }

  renew_answer renew_of(lease_store& s) {
    std::optional<std::pair<store_error, renew_answer>> out;
    s.async_renew([&](store_error e, renew_answer a) { out.emplace(std::move(e), a); });
    const auto r = run_for_answer(out);
    EXPECT_TRUE(r) << "no answer within 10 s";
    return r ? r->second : renew_answer::lost;
  }

  release_answer release_of(lease_store& s) {
    std::optional<std::pair<store_error, release_answer>> out;
    s.async_release([&](store_error e, release_answer a) { out.emplace(std::move(e), a); });
    const auto r = run_for_answer(out);
    EXPECT_TRUE(r) << "no answer within 10 s";
    return r ? r->second : release_answer::not_ours;
  }

  // The election's row made beforehand (as `baton init-store` does), so the
  // first acquire is not held back as a first start.
  void make_record(lease_store& s) {
    std::optional<store_error> out;
    s.async_create_record([&](store_error e, record_answer) { out.emplace(std::move(e)); });
    const auto r = run_for_answer(out);
    ASSERT_TRUE(r) << "no answer within 10 s";
    ASSERT_FALSE(*r) << r->message();
  }
};

TEST_F(clock_step, a_standby_that_saw_the_clock_step_forward_is_held_back_a_ttl) {
  auto a = candidate("n1");
  auto b = candidate("n2");
  make_record(*a);
  ASSERT_TRUE(look(*a).acquired());
  // b watches for more than a ttl while a renews, as a standby does.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(look(*b).outcome, acquire_outcome::held);
    ASSERT_EQ(renew_of(*a), renew_answer::renewed);
    let_pass(300ms);
  }
  // Right after a renewal, the server's clock steps three ttls forward:
  // a's row looks lapsed, though a counts a ttl from its renewal.
  ASSERT_EQ(renew_of(*a), renew_answer::renewed);
  pg.set_clock_offset(3 * step_ttl);
  const auto stepped_at = std::chrono::steady_clock::now();
  const auto held = look(*b);
  EXPECT_EQ(held.outcome, acquire_outcome::held_back);
  EXPECT_NE(held.why.find("the database clock stepped forward by about "), std::string::npos)
      << held.why;
  EXPECT_GT(held.remaining, step_ttl - 100ms);
  EXPECT_LE(held.remaining, step_ttl);
  // a's next renewal finds its term gone and stops its app; b waits on.
  EXPECT_EQ(renew_of(*a), renew_answer::lost);
  EXPECT_EQ(look(*b).outcome, acquire_outcome::held_back);
  let_pass(held.remaining);
  const auto taken = look(*b);
  EXPECT_TRUE(taken.acquired()) << taken.why;
  EXPECT_GE(std::chrono::steady_clock::now() - stepped_at, step_ttl);
}

TEST_F(clock_step, a_newcomer_waits_a_ttl_for_a_lapsed_lease_but_not_for_a_released_one) {
  auto a = candidate("n1");
  make_record(*a);
  ASSERT_TRUE(look(*a).acquired());
  ASSERT_EQ(renew_of(*a), renew_answer::renewed);
  // The step comes before the newcomer's first look: nothing it reads can
  // tell a's lease from one that ran out, so it watches a ttl first.
  pg.set_clock_offset(3 * step_ttl);
  auto c = candidate("n3");
  const auto first = look(*c);
  EXPECT_EQ(first.outcome, acquire_outcome::held_back);
  EXPECT_NE(first.why.find("has watched the database clock for less than a ttl"),
            std::string::npos)
      << first.why;
  EXPECT_EQ(renew_of(*a), renew_answer::lost);
  let_pass(first.remaining);
  const auto c_leads = look(*c);
  ASSERT_TRUE(c_leads.acquired()) << c_leads.why;
  // A released lease ended its term: a newcomer takes it at once.
  ASSERT_EQ(release_of(*c), release_answer::released);
  auto d = candidate("n4");
  const auto d_leads = look(*d);
  EXPECT_TRUE(d_leads.acquired()) << d_leads.why;
  EXPECT_GT(d_leads.token, c_leads.token);
}

TEST_F(clock_step, a_hold_back_a_step_cut_short_still_holds_everyone_back) {
  // No record beforehand: the first acquire creates the row held back for a
  // ttl, on the server's clock, which then steps past that ttl.
  auto a = candidate("n1");
  const auto created = look(*a);
  ASSERT_EQ(created.outcome, acquire_outcome::held_back);
  pg.set_clock_offset(3 * step_ttl);
  const auto again = look(*a);
  EXPECT_EQ(again.outcome, acquire_outcome::held_back);
  EXPECT_NE(again.why.find("the database clock stepped forward by about "), std::string::npos)
      << again.why;
  auto c = candidate("n3");
  const auto newcomer = look(*c);
  EXPECT_EQ(newcomer.outcome, acquire_outcome::held_back);
  EXPECT_NE(newcomer.why.find("has watched the database clock for less than a ttl"),
            std::string::npos)
      << newcomer.why;
  let_pass(newcomer.remaining);
  EXPECT_TRUE(look(*c).acquired());
}

TEST_F(clock_step, a_step_back_holds_nobody_back) {
  auto a = candidate("n1");
  auto b = candidate("n2");
  make_record(*a);
  ASSERT_TRUE(look(*a).acquired());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(look(*b).outcome, acquire_outcome::held);
    ASSERT_EQ(renew_of(*a), renew_answer::renewed);
    let_pass(300ms);
  }
  // a stops renewing (crashed); the clock steps back, which only makes its
  // lease last longer; b takes it once it has lapsed on the server's clock.
  pg.set_clock_offset(-step_ttl);
  std::optional<acquire_answer> taken;
  for (int i = 0; i < 40 && !taken; ++i) {
    const auto r = look(*b);
    EXPECT_NE(r.outcome, acquire_outcome::held_back) << r.why;
    if (r.acquired()) taken = r;
    let_pass(100ms);
  }
  EXPECT_TRUE(taken) << "b never took the lapsed lease";
}

}  // namespace
}  // namespace baton
