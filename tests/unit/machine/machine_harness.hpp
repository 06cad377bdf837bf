// A fake clock and fake timers around the pure election machine. Timers are
// actions, so "time passes" is just firing the armed timers in order: no test
// sleeps. The harness records every action so tests can assert what the
// machine asked the store and the app to do.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
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

/// default_timing() with the cool-down after a resign or a switchover.
inline lease_timing with_cooldown(milliseconds cooldown) {
  auto t = default_timing();
  t.resign_cooldown = cooldown;
  return t;
}

/// The random choices of a property test: the same seed gives the same run.
class seeded_choices {
 public:
  explicit seeded_choices(std::uint64_t seed) : rng_(seed) {}
  /// Uniform in [0, n).
  int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
  /// True with `percent` % probability.
  bool chance(int percent) { return pick(100) < percent; }
  /// Uniform in [lo, hi].
  milliseconds between(milliseconds lo, milliseconds hi) {
    auto span = static_cast<std::uint64_t>((hi - lo).count()) + 1;
    return lo + milliseconds(static_cast<milliseconds::rep>(rng_() % span));
  }

 private:
  std::mt19937_64 rng_;
};

/// Milliseconds from `origin` to `t`, for traces ("+1234ms").
inline std::string ms_after(time_point origin, time_point t) {
  auto ms = std::chrono::duration_cast<milliseconds>(t - origin).count();
  return (ms < 0 ? "" : "+") + std::to_string(ms) + "ms";
}

/// One line for an event in a trace; times relative to `origin`.
inline std::string describe(const event& e, time_point origin) {
  return std::visit(
      [&](const auto& ev) -> std::string {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, events::start>) return "start";
        if constexpr (std::is_same_v<T, events::timer>)
          return std::string("timer ") + to_string(ev.id);
        if constexpr (std::is_same_v<T, events::acquired>)
          return "acquired sent=" + ms_after(origin, ev.sent) +
                 " token=" + std::to_string(ev.token);
        if constexpr (std::is_same_v<T, events::busy>)
          return "busy sent=" + ms_after(origin, ev.sent) + " holder_ttl=" +
                 std::to_string(ev.holder_ttl.count()) + "ms token=" + std::to_string(ev.token) +
                 (ev.watching_releases ? " watching" : "");
        if constexpr (std::is_same_v<T, events::acquire_failed>)
          return "acquire_failed " + ev.error;
        if constexpr (std::is_same_v<T, events::renewed>)
          return "renewed sent=" + ms_after(origin, ev.sent);
        if constexpr (std::is_same_v<T, events::lost>) return "lost";
        if constexpr (std::is_same_v<T, events::renew_failed>) return "renew_failed " + ev.error;
        if constexpr (std::is_same_v<T, events::release_done>)
          return "release_done" + (ev.error.empty() ? std::string() : " error=" + ev.error);
        if constexpr (std::is_same_v<T, events::app_started>) return "app_started";
        if constexpr (std::is_same_v<T, events::app_start_failed>)
          return std::string("app_start_failed") + (ev.cannot_execute ? " cannot_execute" : "");
        if constexpr (std::is_same_v<T, events::app_checked>)
          return std::string("app_checked ") + (ev.executable ? "executable" : "not executable");
        if constexpr (std::is_same_v<T, events::app_exited>)
          return "app_exited " + std::to_string(ev.exit_code);
        if constexpr (std::is_same_v<T, events::app_stopped>) return "app_stopped";
        if constexpr (std::is_same_v<T, events::shutdown>) return "shutdown " + ev.signal;
        if constexpr (std::is_same_v<T, events::peer_released>) return "peer_released";
        if constexpr (std::is_same_v<T, events::resign>) return "resign";
        if constexpr (std::is_same_v<T, events::peer_acquired>)
          return "peer_acquired " + ev.holder + " token=" + std::to_string(ev.token);
        if constexpr (std::is_same_v<T, events::confirmed>)
          return "confirmed sent=" + ms_after(origin, ev.sent) +
                 " valid_until=" + ms_after(origin, ev.valid_until);
        if constexpr (std::is_same_v<T, events::stop_gate_holds>)
          return "stop_gate_holds" +
                 (ev.look_again_at ? " look_again_at=" + ms_after(origin, *ev.look_again_at)
                                   : std::string());
        if constexpr (std::is_same_v<T, events::standing>)
          return std::string("standing ") + (ev.may_lead ? "may lead" : "may not lead");
      },
      e);
}

/// One line for an action in a trace; times relative to `origin`.
inline std::string describe(const action& a, time_point origin) {
  return std::visit(
      [&](const auto& act) -> std::string {
        using T = std::decay_t<decltype(act)>;
        if constexpr (std::is_same_v<T, actions::acquire>) return "acquire";
        if constexpr (std::is_same_v<T, actions::renew>) return "renew";
        if constexpr (std::is_same_v<T, actions::release>) return "release";
        if constexpr (std::is_same_v<T, actions::start_app>)
          return std::string("start_app ") + to_string(act.why) + " token=" +
                 std::to_string(act.token) + " valid_until=" + ms_after(origin, act.valid_until);
        if constexpr (std::is_same_v<T, actions::stop_app>)
          return std::string("stop_app ") + to_string(act.why) + " token=" +
                 std::to_string(act.token) + " kill_at=" + ms_after(origin, act.kill_at) +
                 (act.voluntary ? " voluntary" : "") + (act.capped_by_lease ? " capped" : "");
        if constexpr (std::is_same_v<T, actions::kill_app>) return "kill_app";
        if constexpr (std::is_same_v<T, actions::arm_timer>)
          return std::string("arm_timer ") + to_string(act.id) + " at " + ms_after(origin, act.at);
        if constexpr (std::is_same_v<T, actions::cancel_timer>)
          return std::string("cancel_timer ") + to_string(act.id);
        if constexpr (std::is_same_v<T, actions::lease_extended>)
          return "lease_extended valid_until=" + ms_after(origin, act.valid_until) +
                 (act.stopping ? " stopping" : "");
        if constexpr (std::is_same_v<T, actions::exit_process>)
          return "exit_process " + std::to_string(act.code);
        if constexpr (std::is_same_v<T, actions::check_app>) return "check_app";
        if constexpr (std::is_same_v<T, actions::stop_deadline>)
          return "stop_deadline kill_at=" + ms_after(origin, act.kill_at);
        if constexpr (std::is_same_v<T, actions::ask_stop_gate>) return "ask_stop_gate";
        if constexpr (std::is_same_v<T, actions::look>) return "look";
      },
      a);
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
