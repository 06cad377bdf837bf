// The election machine shutting down from every state: at once when idle,
// after the release when leading, the app stopped first, and a second
// signal killing now (the rest of the machine's cases are
// election_machine_test.cpp's).
#include <gtest/gtest.h>

#include <optional>

#include "machine_harness.hpp"

namespace baton::testing {
namespace {

TEST(election_machine, shutdown_when_idle_exits_at_once) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "b", 5s, 1, true});
  h.feed(events::shutdown{"SIGTERM"});
  EXPECT_EQ(h.machine.current(), state::stopped);
  ASSERT_TRUE(h.last<actions::exit_process>());
  EXPECT_EQ(h.last<actions::exit_process>()->code, 0);
  EXPECT_FALSE(h.timer(timer_id::wake));
}

TEST(election_machine, shutdown_while_acquiring_then_acquired_releases_without_starting) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::shutdown{"SIGTERM"});
  EXPECT_EQ(h.machine.current(), state::acquiring);
  h.feed(events::acquired{h.now, 9});
  EXPECT_EQ(h.machine.current(), state::releasing);
  EXPECT_EQ(h.count<actions::start_app>(), 0);
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::stopped);
  EXPECT_EQ(h.last<actions::exit_process>()->code, 0);
}

TEST(election_machine, shutdown_while_acquiring_then_busy_or_error_exits) {
  for (bool error : {false, true}) {
    machine_harness h;
    h.feed(events::start{});
    h.feed(events::shutdown{"SIGINT"});
    if (error) {
      h.feed(events::acquire_failed{"refused"});
    } else {
      h.feed(events::busy{h.now, "b", 5s, 1, true});
    }
    EXPECT_EQ(h.machine.current(), state::stopped);
    EXPECT_TRUE(h.last<actions::exit_process>());
  }
}

TEST(election_machine, shutdown_while_working_keeps_renewing_until_the_app_stopped) {
  machine_harness h;
  h.become_leader();
  h.advance(1s);
  auto signalled = h.now;
  h.feed(events::shutdown{"SIGTERM"});
  EXPECT_EQ(h.machine.current(), state::pausing);
  auto stop = h.last<actions::stop_app>();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->why, reason::shutdown);
  EXPECT_EQ(stop->kill_at, signalled + 5s);
  // The app takes its time; the lease is renewed meanwhile.
  h.advance(2s);
  EXPECT_EQ(h.count<actions::renew>(), 1);
  h.feed(events::renewed{h.now});
  EXPECT_EQ(h.timer(timer_id::kill), signalled + 5s) << "renewals do not push the stop timeout";
  ASSERT_TRUE(h.last<actions::lease_extended>());
  EXPECT_TRUE(h.last<actions::lease_extended>()->stopping) << "not a reason to keep working";
  EXPECT_EQ(h.count<actions::release>(), 0);
  h.advance(1s);
  h.feed(events::app_stopped{});
  EXPECT_EQ(h.machine.current(), state::releasing);
  EXPECT_EQ(h.count<actions::release>(), 1);
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::stopped);
  EXPECT_EQ(h.last<actions::exit_process>()->code, 0);
}

TEST(election_machine, shutdown_while_renewing_handles_the_reply_in_pausing) {
  machine_harness h;
  h.become_leader();
  h.advance(3s);
  ASSERT_EQ(h.machine.current(), state::renewing);
  h.feed(events::shutdown{"SIGTERM"});
  EXPECT_EQ(h.machine.current(), state::pausing);
  h.feed(events::lost{});
  EXPECT_FALSE(h.machine.holds_lease());
  h.feed(events::app_stopped{});
  EXPECT_EQ(h.count<actions::release>(), 0);
  EXPECT_EQ(h.machine.current(), state::stopped);
}

TEST(election_machine, voluntary_stop_with_failing_renewals_is_killed_at_validity) {
  auto timing = default_timing();
  timing.stop_timeout = 60s;  // longer than the lease could cover
  machine_harness h(timing);
  h.become_leader();
  auto valid_until = h.machine.valid_until();
  h.feed(events::shutdown{"SIGTERM"});
  EXPECT_EQ(h.timer(timer_id::kill), valid_until);
  for (int i = 0; i < 100 && h.count<actions::kill_app>() == 0; ++i) {
    h.advance_to(std::min(*h.timer(timer_id::wake), *h.timer(timer_id::kill)));
    if (h.machine.current() == state::pausing && h.count<actions::kill_app>() == 0) {
      h.feed(events::renew_failed{"refused"});
    }
  }
  EXPECT_EQ(h.count<actions::kill_app>(), 1);
  EXPECT_LE(h.now, valid_until);
}

TEST(election_machine, second_shutdown_signal_kills_now) {
  machine_harness h;
  h.become_leader();
  h.feed(events::shutdown{"SIGTERM"});
  EXPECT_EQ(h.count<actions::kill_app>(), 0);
  h.feed(events::shutdown{"SIGINT"});
  EXPECT_EQ(h.count<actions::kill_app>(), 1);
  h.feed(events::shutdown{"SIGINT"});
  EXPECT_EQ(h.count<actions::kill_app>(), 1);
}

TEST(election_machine, shutdown_while_releasing_exits_after_the_release) {
  machine_harness h;
  h.become_leader();
  h.feed(events::app_exited{3, "exit code 3"});
  h.feed(events::app_stopped{});
  ASSERT_EQ(h.machine.current(), state::releasing);
  h.feed(events::shutdown{"SIGTERM"});
  EXPECT_EQ(h.machine.current(), state::releasing);
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::stopped);
}

}  // namespace
}  // namespace baton::testing
