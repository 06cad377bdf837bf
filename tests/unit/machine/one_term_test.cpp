// `baton once` in the machine (lease_timing::one_term): one term, then the
// process exits with the command's status or a code of one_term_exit; held
// elsewhere, it exits at once or when its wait runs out; never competes
// again after its term.
#include <gtest/gtest.h>

#include "machine_harness.hpp"

namespace baton::testing {
namespace {

lease_timing one_term_timing(milliseconds wait = 0ms) {
  auto t = default_timing();
  t.one_term = true;
  t.one_term_wait = wait;
  return t;
}

events::busy held_by(time_point sent, const std::string& holder, milliseconds ttl,
                     std::uint64_t token) {
  events::busy b;
  b.sent = sent;
  b.holder = holder;
  b.holder_ttl = ttl;
  b.token = token;
  return b;
}

// The exit the machine asked for, if it did.
std::optional<int> exited_with(const machine_harness& h) {
  auto exit = h.last<actions::exit_process>();
  if (!exit) return std::nullopt;
  return exit->code;
}

TEST(one_term, held_elsewhere_exits_at_once_with_the_held_code) {
  machine_harness h(one_term_timing());
  h.feed(events::start{});
  h.feed(held_by(h.now, "web-2", 4s, 17));
  EXPECT_EQ(h.machine.current(), state::stopped);
  EXPECT_EQ(exited_with(h), one_term_exit::held);
  EXPECT_EQ(h.machine.one_term_ending(), one_term_end::held);
  EXPECT_EQ(h.machine.observed_holder(), "web-2");
  EXPECT_EQ(h.machine.token(), 17u);
  EXPECT_EQ(h.transitions.back().detail, "web-2");
  EXPECT_EQ(h.count<actions::start_app>(), 0);
}

TEST(one_term, the_command_status_is_the_exit_code_after_the_release) {
  machine_harness h(one_term_timing());
  h.become_leader();
  h.advance(2s);
  h.feed(events::app_exited{3, "exited 3"});
  EXPECT_EQ(h.machine.current(), state::pausing);
  EXPECT_FALSE(exited_with(h));
  h.feed(events::app_stopped{});
  EXPECT_EQ(h.machine.current(), state::releasing);
  ASSERT_EQ(h.count<actions::release>(), 1);
  EXPECT_FALSE(exited_with(h)) << "no exit before the release is answered";
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::stopped);
  EXPECT_EQ(exited_with(h), 3);
  EXPECT_EQ(h.machine.one_term_ending(), one_term_end::ran);
  EXPECT_EQ(h.count<actions::acquire>(), 1) << "never competes again";
}

TEST(one_term, a_command_that_succeeds_exits_0_and_a_failed_release_changes_nothing) {
  machine_harness h(one_term_timing());
  h.become_leader();
  h.feed(events::app_exited{0, "exited 0"});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{"timeout"});
  EXPECT_EQ(exited_with(h), 0);
  EXPECT_EQ(h.machine.current(), state::stopped);
}

TEST(one_term, sigterm_mid_job_stops_the_command_then_releases_then_exits_143) {
  machine_harness h(one_term_timing());
  h.become_leader();
  h.lead_for(4s);
  h.feed(events::shutdown{"SIGTERM"});
  auto stop = h.last<actions::stop_app>();
  ASSERT_TRUE(stop);
  EXPECT_TRUE(stop->voluntary);
  EXPECT_EQ(h.count<actions::release>(), 0) << "the lease is kept while the command stops";
  // The command exits on its SIGTERM; that is the stop, not its own end.
  h.feed(events::app_exited{143, "killed 15"});
  h.feed(events::app_stopped{});
  EXPECT_EQ(h.count<actions::release>(), 1);
  EXPECT_FALSE(exited_with(h));
  h.feed(events::release_done{});
  EXPECT_EQ(exited_with(h), 143);
  EXPECT_EQ(h.machine.one_term_ending(), one_term_end::interrupted);
}

TEST(one_term, sigint_is_130_and_a_signal_while_waiting_ends_it_too) {
  machine_harness h(one_term_timing(30s));
  h.feed(events::start{});
  h.feed(held_by(h.now, "web-2", 5s, 4));
  EXPECT_EQ(h.machine.current(), state::idle);
  h.feed(events::shutdown{"SIGINT"});
  EXPECT_EQ(h.machine.current(), state::stopped);
  EXPECT_EQ(exited_with(h), 130);
  EXPECT_EQ(h.machine.one_term_ending(), one_term_end::interrupted);
}

TEST(one_term, the_command_ending_before_the_signal_keeps_its_status) {
  machine_harness h(one_term_timing());
  h.become_leader();
  h.feed(events::app_exited{0, "exited 0"});
  h.feed(events::shutdown{"SIGTERM"});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  EXPECT_EQ(exited_with(h), 0);
}

TEST(one_term, a_lost_lease_stops_the_command_and_exits_cut_short) {
  machine_harness h(one_term_timing());
  h.become_leader();
  h.advance_to(*h.timer(timer_id::wake));
  ASSERT_EQ(h.machine.current(), state::renewing);
  h.feed(events::lost{});
  ASSERT_EQ(h.machine.current(), state::pausing);
  h.feed(events::app_stopped{});
  EXPECT_EQ(h.machine.current(), state::stopped);
  EXPECT_EQ(exited_with(h), one_term_exit::cut_short);
  EXPECT_EQ(h.machine.one_term_ending(), one_term_end::cut_short);
  EXPECT_EQ(h.transitions.back().why, reason::lost);
  EXPECT_EQ(h.count<actions::release>(), 0) << "a lost lease is not released";
}

TEST(one_term, a_start_that_fails_ends_the_term) {
  machine_harness h(one_term_timing());
  h.feed(events::start{});
  h.feed(events::acquired{h.now, 9});
  h.feed(events::app_start_failed{"on_start exited 1", false});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  EXPECT_EQ(exited_with(h), one_term_exit::cut_short);
  h.clear_actions();
  h.advance(60s);
  EXPECT_EQ(h.count<actions::acquire>(), 0);
}

TEST(one_term, a_command_that_cannot_be_executed_exits_127) {
  machine_harness h(one_term_timing());
  h.feed(events::start{});
  h.feed(events::acquired{h.now, 9});
  h.feed(events::app_start_failed{"no such file", true});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  EXPECT_EQ(exited_with(h), 127);
}

TEST(one_term, wait_takes_the_lease_when_the_holder_releases_within_it) {
  machine_harness h(one_term_timing(20s));
  h.feed(events::start{});
  events::busy b = held_by(h.now, "web-2", 9s, 4);
  b.watching_releases = true;
  h.feed(b);
  EXPECT_EQ(h.machine.current(), state::idle);
  h.advance(3s);
  h.feed(events::peer_released{});
  EXPECT_EQ(h.machine.current(), state::acquiring);
  h.feed(events::acquired{h.now, 5});
  EXPECT_EQ(h.machine.current(), state::working);
  EXPECT_EQ(h.count<actions::start_app>(), 1);
}

TEST(one_term, wait_tries_a_last_time_when_it_runs_out_then_exits_held) {
  machine_harness h(one_term_timing(5s));
  const auto started = h.now;
  h.feed(events::start{});
  events::busy b = held_by(h.now, "web-2", 9s, 4);
  b.watching_releases = true;  // would wait for the expiry at 9 s
  h.feed(b);
  ASSERT_TRUE(h.timer(timer_id::wake));
  EXPECT_EQ(*h.timer(timer_id::wake), started + 5s) << "not past the wait";
  h.advance(5s);
  ASSERT_EQ(h.machine.current(), state::acquiring);
  h.feed(held_by(h.now, "web-2", 4s, 4));
  EXPECT_EQ(exited_with(h), one_term_exit::held);
}

TEST(one_term, a_store_hold_back_waits_within_the_wait_and_says_so) {
  machine_harness h(one_term_timing());
  h.feed(events::start{});
  events::busy b = held_by(h.now, "", 10s, 0);
  b.held_back = true;
  h.feed(b);
  EXPECT_EQ(exited_with(h), one_term_exit::held);
  EXPECT_EQ(h.transitions.back().detail, "held back after a store reset");
}

TEST(one_term, store_errors_are_retried_within_the_wait_then_exit_unavailable) {
  machine_harness h(one_term_timing(3s));
  const auto started = h.now;
  h.feed(events::start{});
  for (int i = 0; i < 20 && h.machine.current() != state::stopped; ++i) {
    ASSERT_EQ(h.machine.current(), state::acquiring);
    h.feed(events::acquire_failed{"connection refused"});
    if (h.machine.current() == state::idle) h.advance_to(*h.timer(timer_id::wake));
  }
  EXPECT_EQ(exited_with(h), one_term_exit::unavailable);
  EXPECT_EQ(h.machine.one_term_ending(), one_term_end::unavailable);
  EXPECT_GE(h.now, started + 3s);
  EXPECT_LE(h.now, started + 3s + 1ms);
}

TEST(one_term, without_a_wait_one_store_error_is_enough) {
  machine_harness h(one_term_timing());
  h.feed(events::start{});
  h.feed(events::acquire_failed{"connection refused"});
  EXPECT_EQ(exited_with(h), one_term_exit::unavailable);
}

TEST(one_term, a_grant_too_late_to_lead_on_is_given_back_and_counts_as_no_term) {
  machine_harness h(one_term_timing(30s));
  h.feed(events::start{});
  const auto sent = h.now;
  h.advance(7s);  // past the renew deadline of 6 s
  h.feed(events::acquired{sent, 3});
  EXPECT_EQ(h.machine.current(), state::releasing);
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::idle) << "the wait is not over: compete on";
  EXPECT_FALSE(exited_with(h));
}

TEST(one_term, resign_mid_job_ends_the_term_without_a_cool_down) {
  machine_harness once([] {
    auto t = with_cooldown(30s);
    t.one_term = true;
    return t;
  }());
  once.become_leader();
  once.feed(events::resign{});
  once.feed(events::app_stopped{});
  once.feed(events::release_done{});
  EXPECT_EQ(exited_with(once), one_term_exit::cut_short);
  EXPECT_EQ(once.machine.current(), state::stopped);
}

TEST(one_term, run_without_the_policy_competes_again_after_its_app_exits) {
  machine_harness h;  // the default: compete
  h.become_leader();
  h.feed(events::app_exited{3, "exited 3"});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_FALSE(exited_with(h));
  EXPECT_EQ(h.machine.one_term_ending(), one_term_end::none);
}

TEST(one_term, signal_exit_codes_are_128_plus_the_number) {
  EXPECT_EQ(signal_exit_code("SIGTERM"), 143);
  EXPECT_EQ(signal_exit_code("SIGINT"), 130);
  EXPECT_EQ(signal_exit_code("something"), 143);
}

}  // namespace
}  // namespace baton::testing
