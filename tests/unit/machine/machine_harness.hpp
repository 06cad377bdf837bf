// A fake clock and fake timers around the pure election machine. Timers are
// actions, so "time passes" is just firing the armed timers in order: no test
// sleeps. The harness records every action so tests can assert what the
// machine asked the store and the app to do.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <vector>

#include "baton/election_machine.hpp"

namespace baton::testing {

using namespace std::chrono_literals;

inline lease_timing default_timing() {
  lease_timing t;
  t.ttl = 10s;
  t.renew_interval = 3s;
  t.renew_deadline = 6s;
  t.retry_interval = 1s;
  t.stop_timeout = 5s;
  t.drift_factor = 0.01;
  return t;
}

class machine_harness {
 public:
  explicit machine_harness(lease_timing timing = default_timing(), std::uint64_t seed = 42)
      : machine(timing, seed) {}

  election_machine machine;
  time_point now = time_point{} + 1000s;
  std::map<timer_id, time_point> timers;
  std::vector<action> actions;  // every action, in order
  std::vector<transition> transitions;

  /// Feed an event at the current time; returns the actions of this step.
  std::vector<action> feed(const event& e) {
    auto result = machine.step(e, now);
    for (const auto& a : result.actions) {
      if (auto* arm = std::get_if<actions::arm_timer>(&a)) timers[arm->id] = arm->at;
      if (auto* cancel = std::get_if<actions::cancel_timer>(&a)) timers.erase(cancel->id);
      actions.push_back(a);
    }
    if (result.change) transitions.push_back(*result.change);
    return result.actions;
  }

  /// Let `d` pass, firing due timers in time order (bounded).
  void advance(milliseconds d) { advance_to(now + d); }

  void advance_to(time_point target) {
    for (int fired = 0; fired < 10000; ++fired) {
      auto next = timers.end();
      for (auto it = timers.begin(); it != timers.end(); ++it) {
        if (it->second <= target && (next == timers.end() || it->second < next->second)) next = it;
      }
      if (next == timers.end()) break;
      auto id = next->first;
      now = std::max(now, next->second);
      timers.erase(next);
      feed(events::timer{id});
    }
    now = std::max(now, target);
  }

  /// Fire one armed timer now, whatever its due time (for stale-timer tests).
  void fire(timer_id id) { feed(events::timer{id}); }

  template <class A>
  int count() const {
    int n = 0;
    for (const auto& a : actions) n += std::holds_alternative<A>(a) ? 1 : 0;
    return n;
  }

  template <class A>
  std::optional<A> last() const {
    for (auto it = actions.rbegin(); it != actions.rend(); ++it) {
      if (auto* found = std::get_if<A>(&*it)) return *found;
    }
    return std::nullopt;
  }

  std::optional<time_point> timer(timer_id id) const {
    auto it = timers.find(id);
    if (it == timers.end()) return std::nullopt;
    return it->second;
  }

  /// Start and win the lease at the current time.
  void become_leader(std::uint64_t token = 7) {
    feed(events::start{});
    feed(events::acquired{now, token});
    feed(events::app_started{});
  }

  /// Stay leader for `d`, answering every renewal with success at once.
  void lead_for(milliseconds d) {
    auto until = now + d;
    for (int i = 0; i < 10000; ++i) {
      auto wake = timer(timer_id::wake);
      if (!wake || *wake > until) break;
      advance_to(*wake);
      if (machine.current() == state::renewing) feed(events::renewed{now});
    }
    advance_to(until);
  }

  void clear_actions() { actions.clear(); }
};

}  // namespace baton::testing
