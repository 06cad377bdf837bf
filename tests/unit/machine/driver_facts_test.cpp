// What the driver used to work out for itself and now reads off the machine:
// whether a stop is voluntary and whether the lease cut its stop_timeout short
// (the stop's log line), when the stop gate hears of a kill deadline
// (actions::stop_deadline), what a shutdown signal leads to (its log line),
// and whether a hold-back is a resign's cool-down (`cooldown_remaining_ms`).
#include <functional>

#include "machine_harness.hpp"

namespace baton::testing {
namespace {

lease_timing with_stop_timeout(milliseconds stop_timeout) {
  auto t = default_timing();
  t.stop_timeout = stop_timeout;
  return t;
}

// Every kill timer the machine arms is announced to the stop gate at once,
// with the same deadline, and nothing else is.
void expect_stop_deadlines_follow_kill_timers(const machine_harness& h) {
  int kill_timers = 0;
  for (std::size_t i = 0; i < h.actions.size(); ++i) {
    const auto* arm = std::get_if<actions::arm_timer>(&h.actions[i]);
    if (!arm || arm->id != timer_id::kill) continue;
    ++kill_timers;
    ASSERT_LT(i + 1, h.actions.size()) << "arm_timer kill is the last action";
    const auto* due = std::get_if<actions::stop_deadline>(&h.actions[i + 1]);
    ASSERT_TRUE(due) << "arm_timer kill not followed by stop_deadline: "
                     << describe(h.actions[i + 1], h.now);
    EXPECT_EQ(due->kill_at, arm->at);
  }
  EXPECT_EQ(h.count<actions::stop_deadline>(), kill_timers);
}

struct stop_case {
  const char* name;
  milliseconds stop_timeout;
  std::function<void(machine_harness&)> cause;  // from a fresh leader to the stop
  reason why;
  bool voluntary;
  bool capped_by_lease;
};

TEST(driver_facts, a_stop_says_whether_it_is_voluntary_and_whether_the_lease_capped_it) {
  const stop_case cases[] = {
      {"shutdown", 5s, [](machine_harness& h) { h.feed(events::shutdown{"SIGTERM"}); },
       reason::shutdown, true, false},
      {"shutdown, stop_timeout past the validity", 20s,
       [](machine_harness& h) { h.feed(events::shutdown{"SIGTERM"}); }, reason::shutdown, true,
       true},
      {"shutdown late in the renewal period", 5s,
       [](machine_harness& h) {
         h.advance(3s);  // the renewal is sent and not answered yet
         h.advance(2s);
         h.feed(events::shutdown{"SIGTERM"});
       },
       reason::shutdown, true, true},
      {"resign", 5s, [](machine_harness& h) { h.feed(events::resign{}); }, reason::resigned, true,
       false},
      {"child exited", 5s,
       [](machine_harness& h) {
         h.feed(events::app_exited{1, "exit 1"});
       },
       reason::child_exited, true, false},
      {"start failed", 20s,
       [](machine_harness& h) { h.feed(events::app_start_failed{"on_start failed"}); },
       reason::start_failed, true, true},
      {"lost", 20s,
       [](machine_harness& h) {
         h.advance(3s);
         h.feed(events::lost{});
       },
       reason::lost, false, false},
      {"renew deadline", 20s, [](machine_harness& h) { h.advance(6s); }, reason::store_unreachable,
       false, false},
      {"renew deadline, refused", 20s,
       [](machine_harness& h) {
         h.advance(3s);
         h.feed(events::renew_failed{"NOAUTH", true});
         h.advance(3s);
       },
       reason::store_refused, false, false},
      {"lease expired", 20s,
       [](machine_harness& h) {
         h.now += 11s;
         h.fire(timer_id::deadline);
       },
       reason::lease_expired, false, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    machine_harness h(with_stop_timeout(c.stop_timeout));
    h.become_leader();
    const auto valid_until = h.machine.valid_until();
    c.cause(h);
    ASSERT_EQ(h.machine.current(), state::pausing);
    const auto stop = h.last<actions::stop_app>();
    ASSERT_TRUE(stop);
    EXPECT_EQ(stop->why, c.why);
    EXPECT_EQ(stop->voluntary, c.voluntary);
    EXPECT_EQ(stop->capped_by_lease, c.capped_by_lease);
    EXPECT_EQ(stop->stop_timeout, c.stop_timeout);
    // The kill deadline the flags describe.
    if (c.voluntary && !c.capped_by_lease) {
      EXPECT_EQ(stop->kill_at, h.now + c.stop_timeout);
    } else {
      EXPECT_EQ(stop->kill_at, std::min(valid_until, h.machine.valid_until()));
    }
    expect_stop_deadlines_follow_kill_timers(h);
  }
}

TEST(driver_facts, every_move_of_the_kill_deadline_reaches_the_stop_gate) {
  // A voluntary stop whose renewals move the kill deadline, then a lost
  // lease that pulls it in, then a second signal that kills at once.
  machine_harness h(with_stop_timeout(20s));
  h.become_leader();
  h.advance(1s);
  h.feed(events::shutdown{"SIGTERM"});
  ASSERT_EQ(h.count<actions::stop_deadline>(), 1);
  const auto first = h.last<actions::stop_deadline>()->kill_at;
  h.advance(2s);  // the wake timer sends a renewal
  h.feed(events::renewed{h.now});
  ASSERT_EQ(h.count<actions::stop_deadline>(), 2);
  EXPECT_GT(h.last<actions::stop_deadline>()->kill_at, first);
  h.advance(3s);
  h.feed(events::lost{});
  EXPECT_EQ(h.count<actions::stop_deadline>(), 3);
  h.feed(events::shutdown{"SIGTERM"});
  EXPECT_EQ(h.count<actions::kill_app>(), 1);
  EXPECT_EQ(h.count<actions::stop_deadline>(), 3) << "a kill now arms no kill timer";
  expect_stop_deadlines_follow_kill_timers(h);
}

enum class then { exits, stops_the_app, kills_the_app, waits };

struct signal_case {
  const char* name;
  std::function<void(machine_harness&)> setup;
  state in;
  const char* said;
  then effect;
};

TEST(driver_facts, a_shutdown_signal_is_said_as_what_the_machine_then_does) {
  const signal_case cases[] = {
      {"standby",
       [](machine_harness& h) {
         h.feed(events::start{});
         h.feed(events::busy{h.now, "b", 9s, 3, true});
       },
       state::idle, "shutting down", then::exits},
      {"acquiring", [](machine_harness& h) { h.feed(events::start{}); }, state::acquiring,
       "shutting down once the store answers", then::waits},
      {"leader", [](machine_harness& h) { h.become_leader(); }, state::working,
       "shutting down: stopping the app, then releasing the lease", then::stops_the_app},
      {"stopping after a resign",
       [](machine_harness& h) {
         h.become_leader();
         h.feed(events::resign{});
       },
       state::pausing, "shutting down once the app has stopped (a second signal kills it now)",
       then::waits},
      {"stopping after a lost lease",
       [](machine_harness& h) {
         h.become_leader();
         h.advance(3s);
         h.feed(events::lost{});
       },
       state::pausing, "shutting down once the app has stopped (a second signal kills it now)",
       then::waits},
      {"stopping after a first signal",
       [](machine_harness& h) {
         h.become_leader();
         h.feed(events::shutdown{"SIGTERM"});
       },
       state::pausing, "stopping the app now (SIGKILL)", then::kills_the_app},
      {"stopping after a kill",
       [](machine_harness& h) {
         h.become_leader();
         h.feed(events::shutdown{"SIGTERM"});
         h.feed(events::shutdown{"SIGTERM"});
       },
       state::pausing, "shutting down once the app, already killed, is down", then::waits},
      {"releasing",
       [](machine_harness& h) {
         h.become_leader();
         h.feed(events::shutdown{"SIGTERM"});
         h.feed(events::app_stopped{});
       },
       state::releasing, "shutting down once the store answers", then::waits},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    machine_harness h;
    c.setup(h);
    ASSERT_EQ(h.machine.current(), c.in);
    EXPECT_STREQ(h.machine.shutdown_outcome(), c.said);
    const auto actions = h.feed(events::shutdown{"SIGTERM"});
    auto has = [&](auto kind) {
      using A = decltype(kind);
      for (const auto& a : actions) {
        if (std::holds_alternative<A>(a)) return true;
      }
      return false;
    };
    EXPECT_EQ(has(actions::exit_process{}), c.effect == then::exits);
    EXPECT_EQ(has(actions::stop_app{}), c.effect == then::stops_the_app);
    EXPECT_EQ(has(actions::kill_app{}), c.effect == then::kills_the_app);
  }
}

struct cooldown_case {
  const char* name;
  std::function<void(machine_harness&)> run;
  bool cooling_down;
};

TEST(driver_facts, a_hold_back_is_a_resign_cool_down_only_after_a_resign) {
  auto t = default_timing();
  t.resign_cooldown = 20s;
  auto resign_and_release = [](machine_harness& h) {
    h.become_leader();
    h.feed(events::resign{});
    h.feed(events::app_stopped{});
    h.feed(events::release_done{});
  };
  const cooldown_case cases[] = {
      {"leader", [](machine_harness& h) { h.become_leader(); }, false},
      {"stopping for a resign",
       [](machine_harness& h) {
         h.become_leader();
         h.feed(events::resign{});
       },
       false},
      {"resigned, within the cool-down",
       [&](machine_harness& h) {
         resign_and_release(h);
         h.advance(19s);
       },
       true},
      {"resigned, the cool-down over",
       [&](machine_harness& h) {
         resign_and_release(h);
         h.advance(20s);
       },
       false},
      {"the app failed after the cool-down",
       [&](machine_harness& h) {
         resign_and_release(h);
         h.advance(20s);
         h.feed(events::acquired{h.now, 9});
         h.feed(events::app_start_failed{"on_start failed"});
         h.feed(events::app_stopped{});
         h.feed(events::release_done{});
         ASSERT_GT(h.machine.held_back_until(), h.now) << "a back-off, not a cool-down";
       },
       false},
      {"the app failed",
       [](machine_harness& h) {
         h.become_leader();
         h.feed(events::app_exited{1, "exit 1"});
         h.feed(events::app_stopped{});
         h.feed(events::release_done{});
         ASSERT_GT(h.machine.held_back_until(), h.now) << "a back-off, not a cool-down";
       },
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    machine_harness h(t);
    c.run(h);
    EXPECT_EQ(h.machine.cooling_down_after_resign(h.now), c.cooling_down);
  }
}

}  // namespace
}  // namespace baton::testing
