// The one definition of "this node leads" (election_machine::leads and
// believes_leading) and of the leader this node knows of, plus how a standby
// that the store holds back after a reset is told apart from one that sees a
// holder.
#include <gtest/gtest.h>

#include "machine_harness.hpp"

namespace baton::testing {
namespace {

TEST(leadership, a_working_leader_leads_until_its_validity_ends) {
  machine_harness h;
  h.feed(events::start{});
  const auto sent = h.now;
  h.feed(events::acquired{sent, 9});
  EXPECT_TRUE(h.machine.believes_leading());
  EXPECT_TRUE(h.machine.leads(h.now));
  EXPECT_EQ(h.machine.known_leader("me", h.now), "me");
  // Past sent + ttl - drift it still believes, but no longer leads.
  const auto after = sent + h.machine.timing().validity() + 1ms;
  EXPECT_TRUE(h.machine.believes_leading());
  EXPECT_FALSE(h.machine.leads(after));
  EXPECT_EQ(h.machine.known_leader("me", after), "");
}

TEST(leadership, a_standby_never_leads_and_knows_the_holder) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "node-b", 7000ms, 5, true});
  EXPECT_FALSE(h.machine.believes_leading());
  EXPECT_FALSE(h.machine.leads(h.now));
  EXPECT_EQ(h.machine.known_leader("me", h.now), "node-b");
}

TEST(leadership, a_stopping_leader_does_not_lead_but_is_still_the_known_leader) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::acquired{h.now, 9});
  h.feed(events::app_started{});
  h.feed(events::shutdown{"SIGTERM"});
  EXPECT_EQ(h.machine.current(), state::pausing);
  EXPECT_FALSE(h.machine.believes_leading());
  EXPECT_FALSE(h.machine.leads(h.now));
  // Nobody else may start before its release: it is still the holder.
  EXPECT_EQ(h.machine.known_leader("me", h.now), "me");
}

TEST(leadership, held_back_without_a_holder_names_no_leader_and_says_why) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "", 1500ms, 0, true, true});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(h.machine.known_leader("me", h.now), "");
  ASSERT_FALSE(h.transitions.empty());
  EXPECT_EQ(h.transitions.back().why, reason::busy);
  EXPECT_EQ(h.transitions.back().detail, "held back after a store reset");
  // The retry goes just after the hold-back, as for a holder's expiry.
  auto wake = h.timer(timer_id::wake);
  ASSERT_TRUE(wake);
  EXPECT_GE(*wake, h.now + 1501ms);
  EXPECT_LE(*wake, h.now + 1503ms);
}

TEST(leadership, held_back_with_an_old_holder_names_it) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "node-b", 1500ms, 4, true, true});
  EXPECT_EQ(h.machine.known_leader("me", h.now), "node-b");
  EXPECT_EQ(h.transitions.back().detail, "held back after a store reset; node-b holds a lease");
  // The answer's token is the store's counter (lifted after a failover),
  // not node-b's: the leader's token is unknown.
  EXPECT_EQ(h.machine.token(), 0u);
}

TEST(leadership, a_holders_token_is_known_from_a_busy_answer_and_forgotten_on_a_hold_back) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "node-b", 7000ms, 5, true});
  EXPECT_EQ(h.machine.token(), 5u);
  h.advance_to(*h.timer(timer_id::wake));
  h.feed(events::timer{timer_id::wake});
  h.feed(events::busy{h.now, "", 1500ms, 1795660866878487, true, true});
  EXPECT_EQ(h.machine.token(), 0u);
}

TEST(leadership, a_hold_back_naming_the_same_holder_keeps_its_known_token) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::peer_acquired{"node-b", 41});
  h.feed(events::busy{h.now, "node-b", 1500ms, 1795660866878487, true, true});
  EXPECT_EQ(h.machine.token(), 41u) << "node-b's term, as its announcement said";
  h.advance_to(*h.timer(timer_id::wake));
  h.feed(events::timer{timer_id::wake});
  h.feed(events::busy{h.now, "node-b", 1500ms, 0, true});
  EXPECT_EQ(h.machine.token(), 41u) << "an answer that names no token (a Redlock tie)";
  h.advance_to(*h.timer(timer_id::wake));
  h.feed(events::timer{timer_id::wake});
  h.feed(events::busy{h.now, "node-b", 1500ms, 37, true});
  EXPECT_EQ(h.machine.token(), 41u) << "a lower figure: masters that missed the write-back";
  h.advance_to(*h.timer(timer_id::wake));
  h.feed(events::timer{timer_id::wake});
  h.feed(events::busy{h.now, "node-c", 1500ms, 1795660866878488, true, true});
  EXPECT_EQ(h.machine.token(), 0u) << "another holder's token is not known";
}

}  // namespace
}  // namespace baton::testing

namespace baton::testing {
namespace {

TEST(stop_reasons, a_deadline_noticed_within_the_validity_means_the_store_did_not_answer) {
  machine_harness h;
  h.become_leader(7);
  const auto deadline = h.timer(timer_id::deadline);
  ASSERT_TRUE(deadline);
  h.advance_to(*deadline);
  h.feed(events::timer{timer_id::deadline});
  auto stop = h.last<actions::stop_app>();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->why, reason::store_unreachable);
}

TEST(stop_reasons, a_deadline_noticed_after_the_validity_means_the_daemon_did_not_run) {
  machine_harness h;
  h.become_leader(7);
  // The process was stopped past the lease's end: the timers fire late.
  h.now = h.machine.valid_until() + 5s;
  h.feed(events::timer{timer_id::deadline});
  auto stop = h.last<actions::stop_app>();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->why, reason::lease_expired);
  EXPECT_STREQ(to_string(reason::lease_expired), "lease-expired");
}

TEST(term_start, renewals_do_not_move_the_start_of_the_term) {
  machine_harness h;
  h.become_leader(7);
  const auto started = h.machine.term_started();
  const auto wake = h.timer(timer_id::wake);
  ASSERT_TRUE(wake);
  h.advance_to(*wake);
  h.feed(events::timer{timer_id::wake});
  h.feed(events::renewed{h.now});
  EXPECT_EQ(h.machine.current(), state::working);
  EXPECT_EQ(h.machine.term_started(), started);
  EXPECT_GT(h.machine.last_renewal(), started);
}

}  // namespace
}  // namespace baton::testing

namespace baton::testing {
namespace {

TEST(app_blocked, a_command_that_cannot_execute_stops_the_node_competing_until_it_can) {
  machine_harness h;
  h.become_leader(7);
  h.feed(events::app_start_failed{"child: cannot execute /x: No such file or directory", true});
  EXPECT_TRUE(h.machine.app_blocked());
  h.feed(events::app_stopped{});
  ASSERT_EQ(h.count<actions::release>(), 1);
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::idle);
  // A release announcement does not bring it back while blocked.
  h.clear_actions();
  h.feed(events::peer_released{});
  EXPECT_EQ(h.count<actions::acquire>(), 0);
  // Its retry timer asks to look, not to acquire.
  auto wake = h.timer(timer_id::wake);
  ASSERT_TRUE(wake);
  h.now = *wake;
  h.feed(events::timer{timer_id::wake});
  EXPECT_EQ(h.count<actions::check_app>(), 1);
  EXPECT_EQ(h.count<actions::acquire>(), 0);
  EXPECT_EQ(h.machine.current(), state::idle);
  // Still missing: look again soon (about retry_interval), still no acquire.
  h.feed(events::app_checked{false, "child: cannot execute /x"});
  auto again = h.timer(timer_id::wake);
  ASSERT_TRUE(again);
  EXPECT_LE(*again, h.now + 1200ms);
  EXPECT_EQ(h.count<actions::acquire>(), 0);
  // Back: compete at once.
  h.now = *again;
  h.feed(events::timer{timer_id::wake});
  h.feed(events::app_checked{true, ""});
  EXPECT_FALSE(h.machine.app_blocked());
  EXPECT_EQ(h.count<actions::acquire>(), 1);
  EXPECT_EQ(h.machine.current(), state::acquiring);
}

TEST(app_blocked, with_on_exit_exit_a_command_that_cannot_execute_exits_127) {
  auto t = default_timing();
  t.exit_when_app_exits = true;
  machine_harness h(t);
  h.become_leader(7);
  h.feed(events::app_start_failed{"child: cannot execute /x", true});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  auto exit = h.last<actions::exit_process>();
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->code, 127);
  EXPECT_EQ(h.machine.current(), state::stopped);
}

TEST(app_blocked, an_ordinary_start_failure_does_not_block) {
  machine_harness h;
  h.become_leader(7);
  h.feed(events::app_start_failed{"on_start: exit code 3", false});
  EXPECT_FALSE(h.machine.app_blocked());
}

}  // namespace
}  // namespace baton::testing
