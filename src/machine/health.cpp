#include "baton/health.hpp"

#include <algorithm>

namespace baton {

namespace {

// Reaping a SIGKILLed process and its hooks takes milliseconds; this much
// more covers a loaded machine.
constexpr milliseconds reap_margin{5000};

// "31.2s": store outages run to minutes, where milliseconds are noise.
std::string seconds_text(milliseconds d) {
  const auto tenths = d.count() / 100;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "s";
}

std::string with_error(std::string text, const std::string& error) {
  return error.empty() ? text : text + ": " + error;
}

}  // namespace

milliseconds stop_overrun_limit(milliseconds hook_timeout, milliseconds ttl) {
  return std::max(hook_timeout, ttl) + reap_margin;
}

health_verdict assess_liveness(const election_machine& machine, time_point now,
                               milliseconds hook_timeout) {
  if (machine.current() == state::pausing) {
    const auto overrun = std::chrono::duration_cast<milliseconds>(now - machine.kill_deadline());
    const auto limit = stop_overrun_limit(hook_timeout, machine.timing().ttl);
    if (overrun <= limit) return {};
    return {false, "leader cannot stop its app: still stopping " + std::to_string(overrun.count()) +
                       "ms after its kill deadline (limit " + std::to_string(limit.count()) +
                       "ms: the longer of hooks.timeout and the ttl, + " +
                       std::to_string(reap_margin.count()) + "ms)"};
  }
  if (!machine.believes_leading()) return {};
  const auto deadline = machine.timing().renew_deadline;
  const auto since = std::chrono::duration_cast<milliseconds>(now - machine.last_renewal());
  if (since <= deadline) return {};
  return {false, "leader has not renewed for " + std::to_string(since.count()) +
                     "ms (renew deadline " + std::to_string(deadline.count()) + "ms)"};
}

milliseconds store_failure_grace(milliseconds ttl) {
  return ttl;
}

health_verdict assess_readiness(const election_machine& machine, time_point now,
                                milliseconds hook_timeout, const store_health& store) {
  if (auto live = assess_liveness(machine, now, hook_timeout); !live.healthy) return live;
  if (store.failing_since) {
    const auto failing = std::chrono::duration_cast<milliseconds>(now - *store.failing_since);
    if (failing > store_failure_grace(machine.timing().ttl)) {
      return {false, with_error("the store has not answered for " + seconds_text(failing),
                                store.last_error)};
    }
  }
  if (!store.answered) {
    const std::string error = store.failing_since ? store.last_error : "";
    return {false, with_error("the store has not answered yet", error)};
  }
  return {};
}

std::string service_status_line(const election_machine& machine, const std::string& node_id) {
  const auto s = machine.current();
  const std::string state_name = to_string(s);
  if (machine.believes_leading()) {
    return "leader (" + state_name + "), token " + std::to_string(machine.token());
  }
  if (s == state::pausing || s == state::releasing) {
    return "stepping down (" + state_name + ")";
  }
  if (s == state::stopped) return "stopped";
  const auto& holder = machine.observed_holder();
  if (holder.empty() || holder == node_id) return "standby (" + state_name + "), no known leader";
  return "standby (" + state_name + "), leader " + holder + " token " +
         std::to_string(machine.token());
}

}  // namespace baton
