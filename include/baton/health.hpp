// The daemon's own health, as /healthz, `baton health` and the status report
// it: a leader that believes it leads but has not renewed within its renew
// deadline is wedged (its deadline timer should have stopped the app by then,
// so the event loop did not run), which is what client-go's health adaptor
// checks. An event loop that does not run at all cannot answer, which the
// caller's timeout reports.
#pragma once

#include <optional>
#include <string>

#include "baton/election_machine.hpp"

namespace baton {

struct health_verdict {
  bool healthy = true;
  /// "ok", or why not, for people.
  std::string reason = "ok";
};

/// How the store has been answering, as the driver saw it.
struct store_health {
  /// Since when every store call failed (nullopt: the last one succeeded, or
  /// none was made yet).
  std::optional<time_point> failing_since;
  /// The latest failure, for the reason text.
  std::string last_error;
};

/// How long a store may fail without an answer before the daemon calls
/// itself unhealthy: max(3 × ttl, 30 s). A leader stops its app much sooner
/// (renew_deadline); this is about a node that cannot take part at all, such
/// as one with a wrong password, which would otherwise look healthy forever.
milliseconds store_failure_grace(milliseconds ttl);

/// Unhealthy when wedged (above), or when every store call has failed for
/// longer than store_failure_grace(ttl).
health_verdict assess_health(const election_machine& machine, time_point now,
                             const store_health& store = {});

/// The one-line summary systemd shows in `systemctl status` (STATUS=).
std::string service_status_line(const election_machine& machine, const std::string& node_id);

}  // namespace baton
