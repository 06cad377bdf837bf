#include "baton/health.hpp"

#include <algorithm>

namespace baton {

milliseconds store_failure_grace(milliseconds ttl) {
  return std::max(ttl * 3, milliseconds(30000));
}

health_verdict assess_health(const election_machine& machine, time_point now,
                             const store_health& store) {
  if (store.failing_since) {
    const auto failing = std::chrono::duration_cast<milliseconds>(now - *store.failing_since);
    if (failing > store_failure_grace(machine.timing().ttl)) {
      return {false, "the store has not answered for " + std::to_string(failing.count() / 1000) +
                         "s" + (store.last_error.empty() ? "" : ": " + store.last_error)};
    }
  }
  if (!machine.believes_leading()) return {};
  const auto deadline = machine.timing().renew_deadline;
  const auto since = std::chrono::duration_cast<milliseconds>(now - machine.last_renewal());
  if (since <= deadline) return {};
  return {false, "leader has not renewed for " + std::to_string(since.count()) + "ms (renew deadline " +
                     std::to_string(deadline.count()) + "ms)"};
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
  return "standby (" + state_name + "), leader " + holder + " token " + std::to_string(machine.token());
}

}  // namespace baton
