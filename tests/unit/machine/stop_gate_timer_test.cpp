// The stop gate's timer as the machine's (timer_id::gate): armed while a
// stop's release is held back (events::stop_gate_holds), a look at the gate
// asked when it fires (actions::ask_stop_gate), cancelled by app_stopped;
// outside a stop the machine ignores both.
#include <functional>

#include "machine_harness.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

struct gate_case {
  const char* name;
  std::function<void(machine_harness&)> before;  // from a fresh machine
  std::function<event(const machine_harness&)> then;
  std::optional<milliseconds> gate_timer_after;  // the gate timer's due time from now; none: off
  int asks;                                      // ask_stop_gate actions of `then`
};

void stop_by_resign(machine_harness& h) {
  h.become_leader(7);
  h.feed(events::resign{});
  ASSERT_EQ(h.machine.current(), state::pausing);
}

void hold_for_2s(machine_harness& h) {
  stop_by_resign(h);
  h.feed(events::stop_gate_holds{h.now + 2s});
}

TEST(stop_gate_timer, the_machine_arms_asks_and_cancels_only_during_a_stop) {
  const gate_case cases[] = {
      {"held back with a time to look again", stop_by_resign,
       [](const machine_harness& h) { return events::stop_gate_holds{h.now + 2s}; }, 2s, 0},
      {"held back waiting for nothing timed", hold_for_2s,
       [](const machine_harness&) { return events::stop_gate_holds{}; }, std::nullopt, 0},
      {"held back again: the new time wins", hold_for_2s,
       [](const machine_harness& h) { return events::stop_gate_holds{h.now + 5s}; }, 5s, 0},
      {"the timer fires during the stop", hold_for_2s,
       [](const machine_harness&) { return events::timer{timer_id::gate}; }, std::nullopt, 1},
      {"app_stopped ends the stop", hold_for_2s,
       [](const machine_harness&) { return events::app_stopped{}; }, std::nullopt, 0},
      {"a leader ignores a hold-back", [](machine_harness& h) { h.become_leader(7); },
       [](const machine_harness& h) { return events::stop_gate_holds{h.now + 2s}; }, std::nullopt,
       0},
      {"a standby ignores the timer", [](machine_harness& h) { h.feed(events::start{}); },
       [](const machine_harness&) { return events::timer{timer_id::gate}; }, std::nullopt, 0},
      {"after the stop a stale timer asks nothing",
       [](machine_harness& h) {
         hold_for_2s(h);
         h.feed(events::app_stopped{});
       },
       [](const machine_harness&) { return events::timer{timer_id::gate}; }, std::nullopt, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    machine_harness h;
    c.before(h);
    h.clear_actions();
    const auto state_before = h.machine.current();
    auto step = h.feed(c.then(h));
    int asks = 0;
    for (const auto& a : step) asks += std::holds_alternative<actions::ask_stop_gate>(a) ? 1 : 0;
    EXPECT_EQ(asks, c.asks);
    auto due = h.timer(timer_id::gate);
    if (c.gate_timer_after) {
      ASSERT_TRUE(due);
      EXPECT_EQ(*due, h.now + *c.gate_timer_after);
    } else if (!std::holds_alternative<events::timer>(c.then(h))) {
      EXPECT_FALSE(due);
    }
    if (std::holds_alternative<events::stop_gate_holds>(c.then(h))) {
      EXPECT_EQ(h.machine.current(), state_before) << "a hold-back changes no state";
    }
  }
}

// A hold-back is no release: the lease stays, and a stop that keeps
// renewing keeps doing so while the gate waits.
TEST(stop_gate_timer, a_held_back_stop_releases_nothing_until_app_stopped) {
  machine_harness h;
  hold_for_2s(h);
  h.feed(events::timer{timer_id::gate});
  EXPECT_EQ(h.count<actions::release>(), 0);
  EXPECT_EQ(h.machine.current(), state::pausing);
  h.feed(events::app_stopped{});
  EXPECT_EQ(h.count<actions::release>(), 1);
}

}  // namespace
}  // namespace baton::testing
