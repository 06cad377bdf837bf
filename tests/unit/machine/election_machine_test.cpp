// Every transition and timing rule of the election machine, driven with a fake
// clock: acquiring, standing by, renewing, renewal failures up to and past the
// deadline, a lost lease, slow and forced stops and app failures. Shutdown
// in each state is shutdown_test.cpp's, a herd's pacing herd_pacing_test.cpp's.
#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "machine_harness.hpp"

namespace baton::testing {
namespace {

// One definition: the machine's drift is the config's, to the millisecond
// (they used to round 10 s * 0.07 to 703 and 702 ms).
TEST(lease_timing, drift_is_the_one_definition_the_config_uses) {
  lease_timing t;
  t.ttl = 10000ms;
  t.drift_factor = 0.07;
  EXPECT_EQ(t.drift(), 702ms);
  EXPECT_EQ(t.drift(), lease_drift(t.ttl, t.drift_factor));
  t.drift_factor = 0.0;
  EXPECT_EQ(t.drift(), 2ms);
  EXPECT_EQ(lease_timing{}.drift_factor, default_drift_factor);
}

TEST(lease_timing, drift_is_one_percent_plus_two_ms) {
  auto t = default_timing();
  EXPECT_EQ(t.drift(), 102ms);
  EXPECT_EQ(t.validity(), 9898ms);
  t.ttl = 3s;
  EXPECT_EQ(t.drift(), 32ms);
}

TEST(election_machine, starts_idle_and_acquires_on_start) {
  machine_harness h;
  EXPECT_EQ(h.machine.current(), state::idle);
  auto acts = h.feed(events::start{});
  EXPECT_EQ(h.machine.current(), state::acquiring);
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<actions::acquire>(acts[0]));
  ASSERT_EQ(h.transitions.size(), 1u);
  EXPECT_EQ(h.transitions[0].from, state::idle);
  EXPECT_EQ(h.transitions[0].to, state::acquiring);
  EXPECT_EQ(h.transitions[0].why, reason::started);
}

TEST(election_machine, validity_counts_from_the_send_time_not_the_reply) {
  machine_harness h;
  h.feed(events::start{});
  auto sent = h.now;
  h.advance(400ms);  // slow reply
  h.feed(events::acquired{sent, 11});
  EXPECT_EQ(h.machine.current(), state::working);
  EXPECT_EQ(h.machine.valid_until(), sent + 9898ms);
  auto start = h.last<actions::start_app>();
  ASSERT_TRUE(start);
  EXPECT_EQ(start->token, 11u);
  EXPECT_EQ(start->why, reason::acquired);
  EXPECT_EQ(start->valid_until, sent + 9898ms);
  EXPECT_EQ(h.timer(timer_id::wake), sent + 3s);
  EXPECT_EQ(h.timer(timer_id::deadline), sent + 6s);
  EXPECT_EQ(h.machine.token(), 11u);
}

TEST(election_machine, acquire_reply_later_than_the_renew_deadline_is_given_back) {
  machine_harness h;
  h.feed(events::start{});
  auto sent = h.now;
  h.advance(7s);
  h.feed(events::acquired{sent, 3});
  EXPECT_EQ(h.machine.current(), state::releasing);
  EXPECT_EQ(h.count<actions::start_app>(), 0);
  EXPECT_EQ(h.count<actions::release>(), 1);
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::idle);
}

TEST(election_machine, standby_watching_releases_retries_just_after_the_holders_expiry) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "node-b", 7000ms, 5, true});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(h.machine.observed_holder(), "node-b");
  EXPECT_EQ(h.machine.token(), 5u);
  auto wake = h.timer(timer_id::wake);
  ASSERT_TRUE(wake);
  EXPECT_GE(*wake, h.now + 7001ms);
  EXPECT_LE(*wake, h.now + 7001ms + 300us);
}

TEST(election_machine, standby_told_the_exact_free_time_retries_right_then) {
  // The store knows the lease is free in 7000.250 ms (PTTL says 7000): the
  // standby tries then, plus at most the 300 us stagger, not 1 ms later.
  for (int i = 0; i < 20; ++i) {
    machine_harness h;
    h.feed(events::start{});
    h.feed(events::busy{h.now, "node-b", 7000ms, 5, true, false, 7000250us});
    auto wake = h.timer(timer_id::wake);
    ASSERT_TRUE(wake);
    EXPECT_GE(*wake, h.now + 7000250us);
    EXPECT_LE(*wake, h.now + 7000550us);
  }
}

TEST(election_machine, standby_without_release_watch_polls_on_retry_interval) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "node-b", 7000ms, 5, false});
  auto wake = h.timer(timer_id::wake);
  ASSERT_TRUE(wake);
  EXPECT_GE(*wake, h.now + 800ms);
  EXPECT_LE(*wake, h.now + 1200ms);
}

TEST(election_machine, standby_retries_before_retry_interval_when_the_holder_expires_sooner) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "node-b", 100ms, 5, false});
  auto wake = h.timer(timer_id::wake);
  ASSERT_TRUE(wake);
  EXPECT_LE(*wake, h.now + 103ms);
}

TEST(election_machine, retry_interval_jitter_stays_within_twenty_percent_and_varies) {
  machine_harness h;
  h.feed(events::start{});
  std::set<time_point::rep> seen;
  for (int i = 0; i < 50; ++i) {
    h.feed(events::busy{h.now, "b", milliseconds(-1), 1, false});
    auto wake = h.timer(timer_id::wake);
    ASSERT_TRUE(wake);
    auto delay = *wake - h.now;
    EXPECT_GE(delay, 800ms);
    EXPECT_LE(delay, 1200ms);
    seen.insert(delay.count());
    h.advance_to(*wake);
    ASSERT_EQ(h.machine.current(), state::acquiring);
  }
  EXPECT_GT(seen.size(), 10u);
}

TEST(election_machine, redis_errors_back_off_exponentially_up_to_the_ttl) {
  machine_harness h;
  h.feed(events::start{});
  std::vector<milliseconds> delays;
  for (int i = 0; i < 8; ++i) {
    h.feed(events::acquire_failed{"connection refused"});
    EXPECT_EQ(h.machine.current(), state::idle);
    EXPECT_EQ(h.transitions.back().why, reason::store_error);
    EXPECT_EQ(h.transitions.back().detail, "connection refused");
    auto wake = h.timer(timer_id::wake);
    ASSERT_TRUE(wake);
    delays.push_back(std::chrono::duration_cast<milliseconds>(*wake - h.now));
    h.advance_to(*wake);
  }
  EXPECT_EQ(delays[0], 1s);
  EXPECT_EQ(delays[1], 2s);
  EXPECT_EQ(delays[2], 4s);
  EXPECT_EQ(delays[3], 8s);
  EXPECT_EQ(delays[4], 10s);
  EXPECT_EQ(delays[7], 10s);
  // A successful round trip resets the back-off.
  h.feed(events::busy{h.now, "b", milliseconds(-1), 1, false});
  h.advance_to(*h.timer(timer_id::wake));
  h.feed(events::acquire_failed{"again"});
  EXPECT_EQ(*h.timer(timer_id::wake) - h.now, 1s);
}

TEST(election_machine, a_standby_keeping_a_failsafe_promise_retries_every_retry_interval) {
  machine_harness h;
  h.feed(events::start{});
  for (int i = 0; i < 4; ++i) {
    h.feed(events::acquire_failed{"connection refused"});
    h.advance_to(*h.timer(timer_id::wake));
  }
  for (int i = 0; i < 3; ++i) {
    h.feed(events::acquire_failed{"connection refused", true});
    EXPECT_EQ(h.transitions.back().why, reason::store_error);
    EXPECT_EQ(*h.timer(timer_id::wake) - h.now, 1s) << "not the back-off's 10 s (F9)";
    h.advance_to(*h.timer(timer_id::wake));
  }
  h.feed(events::acquire_failed{"connection refused"});
  EXPECT_EQ(*h.timer(timer_id::wake) - h.now, 10s) << "the promise ended: the back-off again";
}

TEST(election_machine, leader_renews_every_renew_interval) {
  machine_harness h;
  h.become_leader();
  auto acquired_at = h.now;
  h.advance(3s);
  EXPECT_EQ(h.machine.current(), state::renewing);
  EXPECT_EQ(h.count<actions::renew>(), 1);
  h.advance(20ms);
  h.feed(events::renewed{acquired_at + 3s});
  EXPECT_EQ(h.machine.current(), state::working);
  EXPECT_EQ(h.machine.valid_until(), acquired_at + 3s + 9898ms);
  EXPECT_EQ(h.timer(timer_id::wake), acquired_at + 6s);
  EXPECT_EQ(h.timer(timer_id::deadline), acquired_at + 9s);
  auto extended = h.last<actions::lease_extended>();
  ASSERT_TRUE(extended);
  EXPECT_EQ(extended->valid_until, acquired_at + 3s + 9898ms);
}

TEST(election_machine, renewal_failures_are_retried_until_the_deadline_then_the_app_stops) {
  machine_harness h;
  h.become_leader();
  auto acquired_at = h.now;
  auto valid_until = h.machine.valid_until();
  h.advance(3s);
  int failures = 0;
  for (int i = 0; i < 100 && h.machine.current() == state::renewing; ++i) {
    h.feed(events::renew_failed{"timeout"});
    ++failures;
    if (h.machine.current() == state::working) {
      EXPECT_EQ(h.count<actions::stop_app>(), 0) << "the app keeps working before the deadline";
      h.advance_to(*h.timer(timer_id::wake));
    }
  }
  EXPECT_GE(failures, 3);
  EXPECT_EQ(h.machine.current(), state::pausing);
  EXPECT_EQ(h.transitions.back().why, reason::store_unreachable);
  EXPECT_GE(h.now, acquired_at + 6s);
  auto stop = h.last<actions::stop_app>();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->why, reason::store_unreachable);
  EXPECT_EQ(stop->kill_at, valid_until);
  EXPECT_EQ(h.timer(timer_id::kill), valid_until);
  EXPECT_FALSE(h.timer(timer_id::wake)) << "no renewals after giving up";
}

// A password rotated on the server, or an ACL change, refuses every
// renewal: the store answered, so "unreachable" would send an operator to the
// network instead of to the credentials.
TEST(election_machine, renewals_refused_until_the_deadline_stop_the_app_as_refused) {
  machine_harness h;
  h.become_leader();
  h.advance(3s);
  for (int i = 0; i < 100 && h.machine.current() == state::renewing; ++i) {
    h.feed(events::renew_failed{"AUTH as baton: WRONGPASS", true});
    if (h.machine.current() == state::working) h.advance_to(*h.timer(timer_id::wake));
  }
  ASSERT_EQ(h.machine.current(), state::pausing);
  EXPECT_EQ(h.transitions.back().why, reason::store_refused);
  EXPECT_EQ(h.last<actions::stop_app>()->why, reason::store_refused);
  EXPECT_STREQ(to_string(reason::store_refused), "store-refused");
}

// The reason follows the last failure: refused once, then timing out, is a
// store that stopped answering.
TEST(election_machine, a_refusal_followed_by_timeouts_is_unreachable) {
  machine_harness h;
  h.become_leader();
  h.advance(3s);
  h.feed(events::renew_failed{"NOPERM", true});
  for (int i = 0; i < 100 && h.machine.current() != state::pausing; ++i) {
    if (h.machine.current() == state::working) h.advance_to(*h.timer(timer_id::wake));
    if (h.machine.current() == state::renewing) h.feed(events::renew_failed{"timeout"});
  }
  ASSERT_EQ(h.machine.current(), state::pausing);
  EXPECT_EQ(h.transitions.back().why, reason::store_unreachable);
}

TEST(election_machine, a_failed_release_is_said_as_failed_not_released) {
  machine_harness h;
  h.become_leader();
  h.feed(events::shutdown{"SIGTERM"});
  h.feed(events::app_stopped{});
  ASSERT_EQ(h.machine.current(), state::releasing);
  h.feed(events::release_done{"connect 127.0.0.1:6379: Connection refused"});
  // Shutting down: the daemon stops either way, with the release's error said.
  EXPECT_EQ(h.machine.current(), state::stopped);
  EXPECT_EQ(h.transitions.back().detail, "connect 127.0.0.1:6379: Connection refused");

  machine_harness r;
  r.become_leader();
  r.feed(events::resign{});
  r.feed(events::app_stopped{});
  ASSERT_EQ(r.machine.current(), state::releasing);
  r.feed(events::release_done{"timeout"});
  EXPECT_EQ(r.machine.current(), state::idle);
  EXPECT_EQ(r.transitions.back().why, reason::release_failed);
  EXPECT_STREQ(to_string(reason::release_failed), "release-failed");

  machine_harness ok;
  ok.become_leader();
  ok.feed(events::resign{});
  ok.feed(events::app_stopped{});
  ok.feed(events::release_done{""});
  EXPECT_EQ(ok.transitions.back().why, reason::released);
}

// A held-back standby can say until when and why (baton status).
TEST(election_machine, a_store_hold_back_is_remembered_until_an_answer_without_one) {
  machine_harness h;
  h.feed(events::start{});
  EXPECT_LE(h.machine.store_held_back().until, h.now);
  events::busy held{h.now, "", 2500ms, 9, true, true};
  held.held_back_why = "";
  h.feed(held);
  EXPECT_EQ(h.machine.store_held_back().until, h.now + 2500ms);
  EXPECT_EQ(h.machine.store_held_back().why, "after a store reset");
  EXPECT_EQ(h.machine.token(), 0u) << "a held-back answer carries no holder's token";
  h.advance_to(*h.timer(timer_id::wake));
  ASSERT_EQ(h.machine.current(), state::acquiring);
  h.feed(events::busy{h.now, "b", 5s, 11, true});
  EXPECT_LE(h.machine.store_held_back().until, h.now);
  EXPECT_TRUE(h.machine.store_held_back().why.empty());
}

TEST(election_machine, deadline_fires_while_a_renewal_hangs) {
  machine_harness h;
  h.become_leader();
  auto valid_until = h.machine.valid_until();
  h.advance(3s);
  ASSERT_EQ(h.machine.current(), state::renewing);
  h.advance(3s);  // no reply at all until the deadline
  EXPECT_EQ(h.machine.current(), state::pausing);
  EXPECT_EQ(h.last<actions::stop_app>()->kill_at, valid_until);
  // The late reply changes nothing: the stop goes on.
  h.feed(events::renewed{h.now - 3s});
  EXPECT_EQ(h.machine.current(), state::pausing);
  EXPECT_EQ(h.timer(timer_id::kill), valid_until);
}

TEST(election_machine, slow_stop_is_killed_at_the_end_of_validity_then_released) {
  machine_harness h;
  h.become_leader();
  auto valid_until = h.machine.valid_until();
  h.advance(3s);
  h.advance(3s);  // renewal hangs past the deadline
  ASSERT_EQ(h.machine.current(), state::pausing);
  EXPECT_EQ(h.count<actions::kill_app>(), 0);
  h.advance_to(valid_until);
  EXPECT_EQ(h.count<actions::kill_app>(), 1);
  EXPECT_EQ(h.count<actions::release>(), 0) << "no release before the app is confirmed stopped";
  h.feed(events::app_stopped{});
  EXPECT_EQ(h.machine.current(), state::releasing);
  EXPECT_EQ(h.count<actions::release>(), 1);
  h.feed(events::release_done{"connection refused"});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_TRUE(h.timer(timer_id::wake));
}

TEST(election_machine, renew_failure_reported_after_the_deadline_stops_at_once) {
  machine_harness h;
  h.become_leader();
  h.advance(3s);
  h.now += 4s;  // the failure arrives after the deadline, before the timer fired
  h.feed(events::renew_failed{"timeout"});
  EXPECT_EQ(h.machine.current(), state::pausing);
  EXPECT_EQ(h.transitions.back().why, reason::store_unreachable);
}

TEST(election_machine, lost_lease_stops_the_app_at_once_with_kill_at_validity) {
  machine_harness h;
  h.become_leader();
  auto valid_until = h.machine.valid_until();
  h.advance(3s);
  h.feed(events::lost{});
  EXPECT_EQ(h.machine.current(), state::pausing);
  EXPECT_FALSE(h.machine.holds_lease());
  auto stop = h.last<actions::stop_app>();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->why, reason::lost);
  EXPECT_EQ(stop->token, 7u) << "the stopped term's token, not the next holder's";
  EXPECT_EQ(h.machine.term_token(), 7u);
  EXPECT_EQ(stop->kill_at, valid_until);
  EXPECT_FALSE(h.timer(timer_id::wake));
  h.feed(events::app_stopped{});
  EXPECT_EQ(h.count<actions::release>(), 0) << "nothing to release: the key is not ours";
  EXPECT_EQ(h.machine.current(), state::idle);
}

TEST(election_machine, lost_after_a_freeze_past_validity_kills_immediately) {
  machine_harness h;
  h.become_leader();
  h.advance(3s);
  h.now += 20s;  // the whole process was frozen
  h.feed(events::lost{});
  EXPECT_EQ(h.machine.current(), state::pausing);
  EXPECT_EQ(h.count<actions::kill_app>(), 1);
}

TEST(election_machine, failing_start_releases_and_backs_off_exponentially) {
  machine_harness h;
  h.feed(events::start{});
  std::vector<milliseconds> backoffs;
  for (int i = 0; i < 7; ++i) {
    h.feed(events::acquired{h.now, static_cast<std::uint64_t>(i + 1)});
    ASSERT_EQ(h.machine.current(), state::working);
    h.feed(events::app_start_failed{"on_start: exit code 1"});
    EXPECT_EQ(h.machine.current(), state::pausing);
    EXPECT_EQ(h.transitions.back().why, reason::start_failed);
    EXPECT_EQ(h.transitions.back().detail, "on_start: exit code 1");
    h.feed(events::app_stopped{});
    ASSERT_EQ(h.machine.current(), state::releasing);
    h.feed(events::release_done{});
    ASSERT_EQ(h.machine.current(), state::idle);
    auto wake = *h.timer(timer_id::wake);
    backoffs.push_back(std::chrono::duration_cast<milliseconds>(wake - h.now));
    // A release announcement does not cut the back-off short.
    h.feed(events::peer_released{});
    EXPECT_EQ(h.machine.current(), state::idle);
    h.advance_to(wake);
  }
  EXPECT_EQ(backoffs[0], 1s);
  EXPECT_EQ(backoffs[1], 2s);
  EXPECT_EQ(backoffs[2], 4s);
  EXPECT_EQ(backoffs[5], 30s);
  EXPECT_EQ(backoffs[6], 30s);
}

TEST(election_machine, child_exit_releases_and_competes_again) {
  machine_harness h;
  h.become_leader();
  h.lead_for(20s);  // ran longer than a ttl: not a fast failure
  ASSERT_EQ(h.machine.current(), state::working);
  h.feed(events::app_exited{0, "exit code 0"});
  EXPECT_EQ(h.machine.current(), state::pausing);
  EXPECT_EQ(h.last<actions::stop_app>()->why, reason::child_exited);
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(*h.timer(timer_id::wake) - h.now, 1s);
}

TEST(election_machine, child_exit_with_exit_policy_exits_with_its_status) {
  auto timing = default_timing();
  timing.exit_when_app_exits = true;
  machine_harness h(timing);
  h.become_leader();
  h.feed(events::app_exited{137, "killed by SIGKILL"});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::stopped);
  EXPECT_EQ(h.last<actions::exit_process>()->code, 137);
}

TEST(election_machine, release_announcement_wakes_a_standby_at_once) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "b", 9s, 1, true});
  h.advance(100ms);
  h.feed(events::peer_released{});
  EXPECT_EQ(h.machine.current(), state::acquiring);
  EXPECT_EQ(h.transitions.back().why, reason::peer_released);
  EXPECT_FALSE(h.timer(timer_id::wake));
}

TEST(election_machine, release_announcement_is_ignored_by_a_leader) {
  machine_harness h;
  h.become_leader();
  h.feed(events::peer_released{});
  EXPECT_EQ(h.machine.current(), state::working);
}

TEST(election_machine, stale_timers_and_replies_are_ignored) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "b", 5s, 1, true});
  h.fire(timer_id::deadline);
  h.fire(timer_id::kill);
  h.feed(events::renewed{h.now});
  h.feed(events::lost{});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(h.transitions.size(), 2u);
}

TEST(election_machine, stopped_ignores_everything) {
  machine_harness h;
  h.feed(events::shutdown{"SIGTERM"});
  ASSERT_EQ(h.machine.current(), state::stopped);
  h.clear_actions();
  h.feed(events::start{});
  h.fire(timer_id::wake);
  h.feed(events::peer_released{});
  EXPECT_TRUE(h.actions.empty());
}

TEST(election_machine, every_state_change_is_reported_with_a_reason) {
  machine_harness h;
  h.become_leader();
  h.advance(3s);
  h.feed(events::renewed{h.now});
  h.feed(events::shutdown{"SIGTERM"});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  std::vector<std::pair<state, reason>> seen;
  for (const auto& t : h.transitions) seen.emplace_back(t.to, t.why);
  std::vector<std::pair<state, reason>> expected{
      {state::acquiring, reason::started}, {state::working, reason::acquired},
      {state::renewing, reason::renewing}, {state::working, reason::renewed},
      {state::pausing, reason::shutdown},  {state::releasing, reason::app_stopped},
      {state::stopped, reason::shutdown}};
  EXPECT_EQ(seen, expected);
  for (std::size_t i = 1; i < h.transitions.size(); ++i) {
    EXPECT_EQ(h.transitions[i].from, h.transitions[i - 1].to);
  }
}

TEST(election_machine, names_are_stable_for_logs_and_scripts) {
  EXPECT_STREQ(to_string(state::pausing), "pausing");
  EXPECT_STREQ(to_string(reason::store_unreachable), "store-unreachable");
  EXPECT_STREQ(to_string(reason::child_exited), "child-exited");
  EXPECT_STREQ(to_string(timer_id::kill), "kill");
}

}  // namespace
}  // namespace baton::testing
