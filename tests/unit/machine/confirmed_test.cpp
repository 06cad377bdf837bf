// events::confirmed, what a counted round of peer confirmations (lease.failsafe
// peers) does to the machine: as a renewal sent when the round was, it moves
// the lease's validity, the renew deadline and the keeper's deadline; never
// for a term whose validity has passed, nor for a node that is not at work
// as a leader. Tables: each case starts from a fresh leader (token 7, lease
// won at t0 with the harness's 10 s ttl, 6 s renew deadline), lets time pass
// with every renewal failing, feeds one confirmed event, and checks what came
// of it.
#include <functional>

#include "machine_harness.hpp"

namespace baton::testing {
namespace {

// The machine's validity for a renewal sent at `sent`: ttl - drift.
time_point validity_from(const machine_harness& h, time_point sent) {
  return sent + h.machine.timing().validity();
}

// Lets `d` pass with every renewal answered as failed (the store is away).
void fail_renewals_for(machine_harness& h, milliseconds d) {
  const auto until = h.now + d;
  for (int i = 0; i < 10000; ++i) {
    auto wake = h.timer(timer_id::wake);
    auto deadline = h.timer(timer_id::deadline);
    auto next = wake;
    if (deadline && (!next || *deadline < *next)) next = deadline;
    if (!next || *next > until) break;
    h.advance_to(*next);
    if (h.machine.current() == state::renewing) {
      h.feed(events::renew_failed{"connect: Connection refused"});
    }
  }
  h.advance_to(until);
}

struct confirmed_case {
  const char* name;
  std::function<void(machine_harness&)> before;  // from a fresh leader at t0
  milliseconds round_sent;                       // after t0
  bool taken;
};

TEST(confirmed, a_counted_round_counts_as_a_renewal_sent_when_it_was) {
  const confirmed_case cases[] = {
      {"while renewals fail, before the renew deadline",
       [](machine_harness& h) { fail_renewals_for(h, 4s); }, 3500ms, true},
      {"while a renewal is in flight", [](machine_harness& h) { h.advance(3s); }, 3s, true},
      {"after the renew deadline: the app is being stopped",
       [](machine_harness& h) { fail_renewals_for(h, 6500ms); }, 6s, false},
      {"after the validity: the term is over",
       [](machine_harness& h) {
         fail_renewals_for(h, 6500ms);
         h.advance(4s);
       },
       10s, false},
      {"after a voluntary stop began",
       [](machine_harness& h) {
         h.advance(1s);
         h.feed(events::resign{});
       },
       1s, false},
      {"after the lease was lost",
       [](machine_harness& h) {
         h.advance(3s);
         h.feed(events::lost{});
       },
       3s, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    machine_harness h;
    const auto t0 = h.now;
    h.become_leader();
    c.before(h);
    const auto before_validity = h.machine.valid_until();
    const auto before_renewal = h.machine.last_renewal();
    h.clear_actions();
    const auto sent = t0 + c.round_sent;
    const auto until = sent + h.machine.timing().validity();
    h.feed(events::confirmed{sent, until});
    if (!c.taken) {
      EXPECT_TRUE(h.actions.empty()) << describe(h.actions.front(), t0);
      EXPECT_EQ(h.machine.valid_until(), before_validity);
      EXPECT_EQ(h.machine.last_renewal(), before_renewal);
      continue;
    }
    EXPECT_EQ(h.machine.valid_until(), until);
    EXPECT_EQ(h.machine.last_renewal(), sent);
    ASSERT_TRUE(h.timer(timer_id::deadline));
    EXPECT_EQ(*h.timer(timer_id::deadline), sent + h.machine.timing().renew_deadline);
    const auto told = h.last<actions::lease_extended>();
    ASSERT_TRUE(told);
    EXPECT_EQ(told->valid_until, until);
    EXPECT_FALSE(told->stopping);
    EXPECT_TRUE(h.machine.leads(h.now));
    // No transition: rounds are not renewals the log counts.
    EXPECT_TRUE(h.machine.believes_leading());
  }
}

TEST(confirmed, rounds_keep_a_leader_working_past_its_renew_deadline_until_they_stop) {
  machine_harness h;
  const auto t0 = h.now;
  h.become_leader();
  // The store goes away at once; a round counts every renew interval, each
  // sent 1 s after the last.
  for (int round = 1; round <= 10; ++round) {
    fail_renewals_for(h, 1s);
    const auto sent = h.now;
    h.feed(events::confirmed{sent, validity_from(h, sent)});
  }
  EXPECT_TRUE(h.machine.believes_leading()) << "10 s on confirmations, past the 6 s deadline";
  EXPECT_EQ(h.count<actions::stop_app>(), 0);
  // The rounds stop counting: the app is told to stop at the renew deadline
  // from the last round, and killed at its validity.
  const auto last_round = h.now;
  fail_renewals_for(h, 7s);
  const auto stop = h.last<actions::stop_app>();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->why, reason::store_unreachable);
  EXPECT_EQ(stop->kill_at, validity_from(h, last_round));
  EXPECT_FALSE(stop->voluntary);
  (void)t0;
}

TEST(confirmed, an_older_or_equal_round_changes_nothing) {
  machine_harness h;
  const auto t0 = h.now;
  h.become_leader();
  fail_renewals_for(h, 4s);
  h.feed(events::confirmed{t0 + 3s, t0 + 3s + h.machine.timing().validity()});
  h.clear_actions();
  // The same round told twice, and a round sent before it.
  h.feed(events::confirmed{t0 + 3s, t0 + 3s + h.machine.timing().validity()});
  h.feed(events::confirmed{t0 + 2s, t0 + 2s + h.machine.timing().validity()});
  EXPECT_TRUE(h.actions.empty()) << describe(h.actions.front(), t0);
  EXPECT_EQ(h.machine.last_renewal(), t0 + 3s);
}

TEST(confirmed, the_validity_never_moves_back) {
  machine_harness h;
  const auto t0 = h.now;
  h.become_leader();
  fail_renewals_for(h, 4s);
  // A round whose deadline lies before the store's (a shorter one): the
  // renew deadline moves with its send time, the validity does not go back.
  const auto store_validity = h.machine.valid_until();
  h.feed(events::confirmed{t0 + 3s, t0 + 5s});
  EXPECT_EQ(h.machine.valid_until(), store_validity);
  EXPECT_EQ(h.machine.last_renewal(), t0 + 3s);
}

TEST(confirmed, a_renewal_after_the_rounds_takes_over_as_before) {
  machine_harness h;
  const auto t0 = h.now;
  h.become_leader();
  fail_renewals_for(h, 4s);
  h.feed(events::confirmed{t0 + 4s, validity_from(h, t0 + 4s)});
  // The store answers again: the next renewal succeeds.
  auto wake = h.timer(timer_id::wake);
  ASSERT_TRUE(wake);
  h.advance_to(*wake);
  ASSERT_EQ(h.machine.current(), state::renewing);
  h.feed(events::renewed{h.now});
  EXPECT_EQ(h.machine.current(), state::working);
  EXPECT_EQ(h.machine.last_renewal(), h.now);
  EXPECT_EQ(h.machine.valid_until(), validity_from(h, h.now));
}

}  // namespace
}  // namespace baton::testing
