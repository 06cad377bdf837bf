// The stop gate as pure logic with a fake clock: it decides when the machine
// may hear "app stopped", i.e. when the lease may be released.
#include "baton/stop_gate.hpp"

#include <gtest/gtest.h>

#include <string>

namespace baton {
namespace {

using namespace std::chrono_literals;

// A fake clock: time points are offsets from an arbitrary origin.
time_point at(milliseconds offset) {
  return time_point{} + 1h + offset;
}

// A gate in a term with token 7 whose start event reached `subscribers`.
stop_gate term(bool require_ack, std::size_t subscribers = 1) {
  stop_gate g(require_ack);
  g.on_term(7);
  g.on_published(subscribers);
  return g;
}

TEST(stop_gate, without_require_ack_the_app_report_passes_at_once) {
  auto g = term(false);
  EXPECT_FALSE(g.ack_required());
  g.on_stop(at(3000ms), 1, at(0ms));
  EXPECT_TRUE(g.on_app_stopped(at(10ms)));
  EXPECT_FALSE(g.stopping());
  EXPECT_FALSE(g.wake_at());
}

TEST(stop_gate, needs_both_the_app_and_the_ack_app_first) {
  auto g = term(true);
  EXPECT_TRUE(g.ack_required());
  g.on_stop(at(3000ms), 1, at(0ms));
  EXPECT_FALSE(g.on_app_stopped(at(10ms)));
  EXPECT_TRUE(g.waiting_for_ack_only());
  ASSERT_TRUE(g.wake_at());
  EXPECT_EQ(*g.wake_at(), at(3000ms));
  EXPECT_FALSE(g.on_timer(at(2999ms))) << "an early wake-up releases nothing";
  auto r = g.on_ack(7, at(20ms));
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.release);
  EXPECT_FALSE(g.stopping());
  EXPECT_TRUE(g.acknowledged());
}

TEST(stop_gate, needs_both_the_app_and_the_ack_ack_first) {
  auto g = term(true);
  g.on_stop(at(3000ms), 1, at(0ms));
  auto r = g.on_ack(std::nullopt, at(5ms));  // no token: the stop under way
  EXPECT_EQ(r.error, "");
  EXPECT_FALSE(r.release) << "the hooks and child have not stopped yet";
  EXPECT_FALSE(g.wake_at());
  EXPECT_TRUE(g.on_app_stopped(at(10ms)));
}

TEST(stop_gate, the_kill_deadline_releases_without_an_ack) {
  auto g = term(true);
  g.on_stop(at(3000ms), 1, at(0ms));
  EXPECT_FALSE(g.on_app_stopped(at(10ms)));
  EXPECT_TRUE(g.on_timer(at(3000ms)));
  EXPECT_FALSE(g.acknowledged());
  // Exactly once.
  EXPECT_FALSE(g.on_timer(at(3001ms)));
  EXPECT_FALSE(g.on_ack(7, at(3002ms)).release);
}

TEST(stop_gate, the_machines_kill_releases_once_the_app_is_down) {
  auto g = term(true);
  g.on_stop(at(3000ms), 1, at(0ms));
  // SIGKILL before the app is down (an app ignoring SIGTERM): still wait
  // for the app controller.
  EXPECT_FALSE(g.on_kill(at(3000ms)));
  EXPECT_TRUE(g.on_app_stopped(at(3010ms)));
}

TEST(stop_gate, the_operators_second_signal_releases_before_the_deadline) {
  auto g = term(true);
  g.on_stop(at(3000ms), 1, at(0ms));
  EXPECT_FALSE(g.on_app_stopped(at(10ms)));
  EXPECT_TRUE(g.on_kill(at(500ms)));
}

TEST(stop_gate, a_moved_deadline_is_followed) {
  auto g = term(true);
  g.on_stop(at(1000ms), 1, at(0ms));
  g.on_kill_at(at(2500ms));  // a voluntary stop renewed meanwhile
  EXPECT_FALSE(g.on_app_stopped(at(10ms)));
  EXPECT_EQ(*g.wake_at(), at(2500ms));
  EXPECT_FALSE(g.on_timer(at(1000ms)));
  EXPECT_TRUE(g.on_timer(at(2500ms)));
}

TEST(stop_gate, a_past_deadline_at_the_stop_needs_no_ack) {
  // The lease's validity has already ended: waiting for anything gains nothing.
  auto g = term(true);
  g.on_stop(at(0ms), 1, at(5ms));
  EXPECT_TRUE(g.on_app_stopped(at(10ms)));
}

TEST(stop_gate, a_term_no_subscriber_heard_needs_no_ack) {
  auto g = term(true, 0);
  g.on_stop(at(3000ms), 0, at(0ms));
  EXPECT_TRUE(g.on_app_stopped(at(10ms)));
}

TEST(stop_gate, a_subscriber_that_heard_only_the_stop_is_waited_for) {
  auto g = term(true, 0);
  g.on_stop(at(3000ms), 1, at(0ms));
  EXPECT_FALSE(g.on_app_stopped(at(10ms)));
}

TEST(stop_gate, a_subscriber_that_heard_a_renewal_is_waited_for_even_if_gone) {
  stop_gate g(true);
  g.on_term(7);
  g.on_published(0);                  // start: nobody listening
  g.on_published(2);                  // a renewal reached two clients
  g.on_stop(at(3000ms), 0, at(0ms));  // they have disconnected since
  EXPECT_FALSE(g.on_app_stopped(at(10ms)));
  EXPECT_TRUE(g.on_timer(at(3000ms)));
}

TEST(stop_gate, only_a_status_read_saying_this_node_leads_counts_as_telling) {
  struct row {
    const char* name;
    bool says_leading;
    bool waits_for_an_ack;
  };
  for (const auto& r :
       {row{"a leading status", true, true}, row{"a standby's status", false, false}}) {
    SCOPED_TRACE(r.name);
    auto g = term(true, 0);  // nobody heard the start event
    g.on_status_read(r.says_leading, at(5000ms));
    g.on_stop(at(3000ms), 0, at(0ms));
    EXPECT_EQ(g.on_app_stopped(at(10ms)), !r.waits_for_an_ack);
    // A reader that was told it leads may work until the deadline it read.
    if (r.waits_for_an_ack) EXPECT_EQ(g.wake_at(), at(5000ms));
  }
}

TEST(stop_gate, renewals_during_a_stop_do_not_count_as_telling) {
  auto g = term(true, 0);
  g.on_stop(at(3000ms), 0, at(0ms));
  g.on_published(1);  // a renewed event of the voluntary stop
  EXPECT_TRUE(g.on_app_stopped(at(10ms)));
}

TEST(stop_gate, wrong_or_untimely_acks_are_errors) {
  auto g = term(true);
  EXPECT_EQ(g.on_ack(7, at(0ms)).error, "nothing to acknowledge");
  g.on_stop(at(3000ms), 1, at(0ms));
  auto old = g.on_ack(6, at(1ms));
  EXPECT_EQ(old.error, "token 6 is not the stopping term's (7)");
  EXPECT_FALSE(old.release);
  EXPECT_FALSE(g.acknowledged());
  EXPECT_FALSE(g.on_app_stopped(at(10ms))) << "a wrong token acknowledged nothing";
  EXPECT_TRUE(g.on_ack(7, at(11ms)).release);
  EXPECT_EQ(g.on_ack(7, at(12ms)).error, "nothing to acknowledge") << "after the release";
}

TEST(stop_gate, a_new_term_forgets_the_last_stop) {
  auto g = term(true);
  g.on_stop(at(3000ms), 1, at(0ms));
  EXPECT_TRUE(g.on_ack(7, at(1ms)).error.empty());
  EXPECT_TRUE(g.on_app_stopped(at(2ms)));
  g.on_term(9);
  g.on_published(1);
  g.on_stop(at(8000ms), 1, at(5000ms));
  EXPECT_FALSE(g.acknowledged());
  EXPECT_EQ(g.on_ack(7, at(5001ms)).error, "token 7 is not the stopping term's (9)");
  EXPECT_FALSE(g.on_app_stopped(at(5002ms)));
  EXPECT_TRUE(g.on_ack(9, at(5003ms)).release);
}

TEST(stop_gate, app_reports_outside_a_stop_pass_through) {
  stop_gate g(true);
  EXPECT_TRUE(g.on_app_stopped(at(0ms)));
  EXPECT_FALSE(g.on_kill(at(0ms)));
  EXPECT_FALSE(g.on_timer(at(0ms)));
}

}  // namespace
}  // namespace baton
