// A property test over many random event orders: whatever replies, failures,
// signals and delays come, the machine never asks to release the lease while
// the app may still run, never starts the app twice in one term, and always
// asks for the app to be killed no later than the end of the lease's
// validity. The random schedule is seeded, so a failure is reproducible.
// stop_gate_safety_property_test.cpp runs the machine together with the stop
// gate and a model of the daemon around them, against an independent bound.
#include <gtest/gtest.h>

#include "machine_harness.hpp"

namespace baton::testing {
namespace {

struct app_model {
  bool running = false;         // between start_app and app_stopped
  bool stop_requested = false;  // stop_app seen, app_stopped not yet fed
  bool killed = false;
};

TEST(election_machine_safety, random_schedules_never_release_or_overrun_a_running_app) {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    seeded_choices choose(seed);
    auto pick = [&](int n) { return choose.pick(n); };
    machine_harness h(default_timing(), seed);
    app_model app;
    bool acquire_pending = false, renew_pending = false, release_pending = false;
    time_point renew_sent{};
    h.feed(events::start{});

    for (int step = 0; step < 200 && h.machine.current() != state::stopped; ++step) {
      // Observe what the last step asked for.
      for (const auto& a : h.actions) {
        if (std::holds_alternative<actions::acquire>(a)) acquire_pending = true;
        if (std::holds_alternative<actions::renew>(a)) {
          renew_pending = true;
          renew_sent = h.now;
        }
        if (std::holds_alternative<actions::release>(a)) {
          ASSERT_FALSE(app.running) << "seed " << seed << ": release while the app may run";
          release_pending = true;
        }
        if (std::holds_alternative<actions::start_app>(a)) {
          ASSERT_FALSE(app.running) << "seed " << seed << ": app started twice";
          app = {true, false, false};
        }
        if (auto* stop = std::get_if<actions::stop_app>(&a)) {
          ASSERT_TRUE(app.running) << "seed " << seed;
          app.stop_requested = true;
          // The kill deadline never lies beyond what the lease covers.
          ASSERT_LE(stop->kill_at, h.machine.valid_until()) << "seed " << seed;
        }
        if (std::holds_alternative<actions::kill_app>(a)) app.killed = true;
      }
      h.clear_actions();

      // While the app runs, the lease must be valid: either still ours and
      // within validity, or the kill is due by the end of validity.
      if (app.running && !app.killed) {
        ASSERT_LE(h.now, h.machine.valid_until()) << "seed " << seed << ": app outlived the lease";
      }

      switch (pick(11)) {
        case 0:
          h.advance(milliseconds(pick(4000)));
          break;
        case 1:
          if (acquire_pending) {
            acquire_pending = false;
            int r = pick(3);
            if (r == 0) h.feed(events::acquired{h.now - milliseconds(pick(50)), 1});
            if (r == 1)
              h.feed(events::busy{h.now, "other", milliseconds(pick(10000)), 1, pick(2) == 0});
            if (r == 2) h.feed(events::acquire_failed{"x"});
          }
          break;
        case 2:
          if (renew_pending) {
            renew_pending = false;
            int r = pick(3);
            if (r == 0) h.feed(events::renewed{renew_sent});
            if (r == 1) h.feed(events::lost{});
            if (r == 2) h.feed(events::renew_failed{"x"});
          }
          break;
        case 3:
          if (release_pending) {
            release_pending = false;
            h.feed(events::release_done{pick(2) ? "" : "x"});
          }
          break;
        case 4:
          if (app.running && !app.stop_requested) h.feed(events::app_started{});
          break;
        case 5:
          if (app.running && app.stop_requested && (app.killed || pick(3) == 0)) {
            app = {};
            h.feed(events::app_stopped{});
          }
          break;
        case 6:
          if (app.running && !app.stop_requested && pick(4) == 0) {
            h.feed(events::app_exited{1, "exit code 1"});
          }
          break;
        case 7:
          if (pick(20) == 0) h.feed(events::shutdown{"SIGTERM"});
          break;
        case 8:
          if (pick(3) == 0) h.feed(events::peer_released{});
          break;
        case 9:
          if (pick(8) == 0) h.feed(events::resign{});
          break;
        case 10:
          h.feed(events::peer_acquired{"other", 2});
          break;
      }
    }
  }
}

}  // namespace
}  // namespace baton::testing
