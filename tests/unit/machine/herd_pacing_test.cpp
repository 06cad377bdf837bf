// The election machine's pacing of a herd: how far apart many standbys of
// one election spread their attempts at an expiry or after a release, front
// runners and back runners alike (the rest of the machine's cases are
// election_machine_test.cpp's).
#include <gtest/gtest.h>

#include <optional>

#include "machine_harness.hpp"

namespace baton::testing {
namespace {

// The default timing with another ttl, renewed every third of it, with the
// deadline at two thirds.
lease_timing timing_with_ttl(milliseconds ttl) {
  auto timing = default_timing();
  timing.ttl = ttl;
  timing.renew_interval = ttl / 3;
  timing.renew_deadline = ttl * 2 / 3;
  return timing;
}

// The wake time a standby arms after one busy answer, with `contenders`
// candidates listening (all with the same start time, so seeds compare).
std::optional<time_point> wake_after_busy(lease_timing timing, std::uint64_t seed,
                                          milliseconds holder_ttl, int contenders,
                                          bool back_runner = false) {
  machine_harness h(timing, seed);
  h.feed(events::start{});
  h.feed(events::busy{h.now, "b", holder_ttl, 5, true, false,
                      std::chrono::duration_cast<std::chrono::microseconds>(holder_ttl), "",
                      contenders, "", 0, back_runner});
  auto wake = h.timer(timer_id::wake);
  if (!wake) return std::nullopt;
  return time_point{} + (*wake - h.now);  // relative to the answer
}

// A herd: the store says 1,000 candidates listen. Their attempts at the
// expiry spread over 1000 x 50 us = 50 ms (ttl 10 s allows up to 100 ms), so
// they follow each other instead of queueing on the store and the host's
// CPUs together; the earliest still goes within a fraction of it.
TEST(election_machine, a_herd_spreads_its_attempts_at_the_expiry_over_a_wider_window) {
  time_point earliest = time_point::max(), latest = time_point::min();
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    auto wake = wake_after_busy(default_timing(), seed, 7000ms, 1000);
    ASSERT_TRUE(wake);
    EXPECT_GE(*wake, time_point{} + 7000ms);
    EXPECT_LE(*wake, time_point{} + 7050ms);
    earliest = std::min(earliest, *wake);
    latest = std::max(latest, *wake);
  }
  EXPECT_GT(latest - earliest, 20ms);  // spread, not 300 us
}

TEST(election_machine, a_few_contenders_keep_the_300_us_stagger) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    auto wake = wake_after_busy(default_timing(), seed, 7000ms, 3);
    ASSERT_TRUE(wake);
    EXPECT_LE(*wake, time_point{} + 7000300us);
  }
}

// The store counted the holder's lease down somewhere between the attempt's
// send and the answer's receipt: the next attempt counts from halfway (here
// 2 ms after the send, the answer 4 ms later), not from the receipt, which is
// late by the answer's way back. A hold-back's end (a reset's fence) still
// counts from the receipt.
TEST(election_machine, the_expiry_counts_from_halfway_between_the_send_and_the_answer) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    machine_harness h(default_timing(), seed);
    h.feed(events::start{});
    const auto sent = h.now;
    h.advance(4ms);
    h.feed(events::busy{sent, "b", 7000ms, 5, true, false, 7000000us, "", 3});
    auto wake = h.timer(timer_id::wake);
    ASSERT_TRUE(wake);
    EXPECT_GE(*wake, sent + 2ms + 7000ms);
    EXPECT_LE(*wake, sent + 2ms + 7000300us);
  }
  machine_harness held(default_timing(), 1);
  held.feed(events::start{});
  const auto sent = held.now;
  held.advance(4ms);
  held.feed(events::busy{sent, "", 1500ms, 0, true, true});
  auto wake = held.timer(timer_id::wake);
  ASSERT_TRUE(wake);
  EXPECT_GE(*wake, held.now + 1501ms) << "a hold-back counts from the receipt";
}

TEST(election_machine, a_herd_window_is_at_most_a_twentieth_of_the_ttl) {
  const auto timing = timing_with_ttl(200ms);
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    auto wake = wake_after_busy(timing, seed, 150ms, 1000);
    ASSERT_TRUE(wake);
    EXPECT_LE(*wake, time_point{} + 160ms);
  }
}

TEST(election_machine, a_herd_hearing_a_release_spreads_its_attempts_too) {
  bool any_later = false;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    machine_harness h(default_timing(), seed);
    h.feed(events::start{});
    h.feed(events::busy{h.now, "b", 9s, 1, true, false, 9000000us, "", 1000});
    h.advance(100ms);
    auto acts = h.feed(events::peer_released{});
    EXPECT_EQ(h.machine.current(), state::idle);
    for (const auto& a : acts) EXPECT_FALSE(std::holds_alternative<actions::acquire>(a));
    auto wake = h.timer(timer_id::wake);
    ASSERT_TRUE(wake);
    EXPECT_LE(*wake, h.now + 50ms);
    any_later = any_later || *wake > h.now + 1ms;
    h.now = *wake;
    h.fire(timer_id::wake);
    EXPECT_EQ(h.machine.current(), state::acquiring);
  }
  EXPECT_TRUE(any_later);
}

// A large election's back runner: one step (ttl / 40: 250 ms at the
// default 10 s) after the expiry, then spread over 500 us per candidate
// listening (500 ms for 1,000), up to ttl / 4; its front runners, counted as
// four, keep the 300 us stagger.
TEST(election_machine, a_back_runner_tries_one_step_after_the_expiry) {
  time_point earliest = time_point::max(), latest = time_point::min();
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    auto back = wake_after_busy(default_timing(), seed, 7000ms, 1000, true);
    ASSERT_TRUE(back);
    EXPECT_GE(*back, time_point{} + 7250ms);
    EXPECT_LE(*back, time_point{} + 7750ms);
    earliest = std::min(earliest, *back);
    latest = std::max(latest, *back);
    auto front = wake_after_busy(default_timing(), seed, 7000ms, 4, false);
    ASSERT_TRUE(front);
    EXPECT_LE(*front, time_point{} + 7000300us);
  }
  EXPECT_GT(latest - earliest, 200ms) << "a thousand back runners spread wide";
}

TEST(election_machine, a_back_runners_spread_is_at_most_a_quarter_of_the_ttl) {
  const auto timing = timing_with_ttl(2000ms);
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    auto back = wake_after_busy(timing, seed, 1500ms, 5000, true);
    ASSERT_TRUE(back);
    EXPECT_LE(*back, time_point{} + 1500ms + 50ms + 500ms) << "one step, then ttl / 4";
  }
}

// A release wakes the whole herd; a back runner lets the front runners go
// first, and still tries (it may be a switchover's target, or every front
// runner may be gone) one step later.
TEST(election_machine, a_back_runner_hearing_a_release_tries_one_step_later) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "b", 9s, 1, true, false, 9000000us, "", 1000, "", 0, true});
  h.advance(100ms);
  auto acts = h.feed(events::peer_released{});
  for (const auto& a : acts) EXPECT_FALSE(std::holds_alternative<actions::acquire>(a));
  auto wake = h.timer(timer_id::wake);
  ASSERT_TRUE(wake);
  EXPECT_GE(*wake, h.now + 250ms);
  EXPECT_LE(*wake, h.now + 750ms);
  h.now = *wake;
  h.fire(timer_id::wake);
  EXPECT_EQ(h.machine.current(), state::acquiring);
  // Counted a front runner on the next answer: a release wakes it at once.
  h.feed(events::busy{h.now, "c", 9s, 2, true, false, 9000000us, "", 4, "", 0, false});
  h.advance(100ms);
  h.feed(events::peer_released{});
  EXPECT_EQ(h.machine.current(), state::acquiring);
}

// A release announced while the standby's own attempt was in flight (a
// switchover reserving the lease for it, say): the attempt's busy answer,
// sent before the release, names the old holder, and the standby tries
// again at once rather than at the old lease's expiry.
TEST(election_machine, a_release_heard_during_an_attempt_is_not_lost_to_its_busy_answer) {
  machine_harness h;
  h.feed(events::start{});
  ASSERT_EQ(h.machine.current(), state::acquiring);
  h.feed(events::peer_released{});
  h.feed(events::busy{h.now, "b", 1800ms, 5, true, false, 1800000us, "", 3});
  auto wake = h.timer(timer_id::wake);
  ASSERT_TRUE(wake);
  EXPECT_LE(*wake, h.now + 1ms) << "not at the old lease's expiry, 1.8 s away";
  // The next busy answer, with no release meanwhile, waits for the expiry.
  h.now = *wake;
  h.fire(timer_id::wake);
  h.feed(events::busy{h.now, "b", 1800ms, 5, true, false, 1800000us, "", 3});
  EXPECT_GE(*h.timer(timer_id::wake), h.now + 1800ms);
}

}  // namespace
}  // namespace baton::testing
