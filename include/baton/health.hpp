// The daemon's own health, as two signals, the way Kubernetes separates them:
//
// - Liveness (/healthz and /livez, `baton health`, the image's HEALTHCHECK,
//   the systemd watchdog): the event loop turns (an answer at all proves it; a
//   loop that does not run cannot answer, which the caller's timeout reports)
//   and no leader is wedged. Its cure is a restart, so nothing a restart does
//   not fix belongs in it: a store outage would otherwise restart every node
//   at once, and a restarted node finds the store just as down.
// - Readiness (/readyz, `baton health --ready`): live, and the store answered
//   recently: what an operator or a load balancer asks before counting on
//   this node to take part in the election.
//
// A leader is wedged when it believes it leads but has not renewed within its
// renew deadline (its deadline timer should have stopped the app by then, so
// the event loop did not run: what client-go's health adaptor checks), or
// when it cannot stop its app: the stop has run on long past the app's kill
// deadline.
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
  /// The store answered at least once since the daemon started.
  bool answered = false;
  /// Since when every store call failed (nullopt: the last one succeeded, or
  /// none was made yet).
  std::optional<time_point> failing_since;
  /// The latest failure, for the reason text.
  std::string last_error;
};

/// How long a stop may run on past the app's kill deadline before the leader
/// counts as wedged: the longer of `hook_timeout` (hooks.timeout: on_stop may
/// begin only once the killed child is reaped, and runs for up to that long
/// before it is killed too) and `ttl` (with socket.require_ack the stop also
/// waits out the lease deadline a socket app was last given, at most one
/// validity after the kill deadline), plus 5 s to reap the processes on a
/// loaded machine. A SIGKILLed process that is still not gone by then will
/// not go (uninterruptible sleep).
milliseconds stop_overrun_limit(milliseconds hook_timeout, milliseconds ttl);

/// Liveness: unhealthy only when a leader is wedged (above). The store's
/// answers play no part.
health_verdict assess_liveness(const election_machine& machine, time_point now,
                               milliseconds hook_timeout);

/// How long every store call may fail before the node is not ready: one lease
/// ttl. By then a leader has given up (renew_deadline < ttl) and no lease this
/// node knows of is still valid, so the node cannot take part.
milliseconds store_failure_grace(milliseconds ttl);

/// Readiness: live (assess_liveness), and the store has answered since the
/// daemon started, and it has not failed every call for longer than
/// store_failure_grace(ttl). A store that answers again is ready at once.
health_verdict assess_readiness(const election_machine& machine, time_point now,
                                milliseconds hook_timeout, const store_health& store);

/// The one-line summary systemd shows in `systemctl status` (STATUS=).
std::string service_status_line(const election_machine& machine, const std::string& node_id);

}  // namespace baton
