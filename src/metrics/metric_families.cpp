// The names, types, labels and help of every metric family baton exports
// (see baton/metrics.hpp): metrics.cpp registers each family from its row
// here, baton(1) lists them, and tests/docs/check_metrics.py holds
// docs/operating.md and monitoring/ to them.
#include "baton/metrics.hpp"

#include <array>

namespace baton {
namespace {

constexpr std::array<metric_family, 27> families = {{
    {"baton_info", "gauge", "version,election,node_id",
     "Always 1; the labels say which baton this is."},
    {"baton_is_leader", "gauge", "", "1 while this node holds the lease, else 0."},
    {"baton_state", "gauge", "state",
     "1 for the election state the daemon is in, 0 for the others."},
    {"baton_transitions_total", "counter", "from,to",
     "State changes of the election machine, by from and to state."},
    {"baton_leader_changes_total", "counter", "", "Times this node gained or lost leadership."},
    {"baton_switchovers_total", "counter", "",
     "Times this node, leading, began handing over to a named node (baton switchover)."},
    {"baton_term_token", "gauge", "",
     "Fencing token of the current term as this node knows it (its own while it leads); 0 "
     "before it knows one."},
    {"baton_leader_info", "gauge", "node_id",
     "1 for the leader this node knows of; no series while it knows none."},
    {"baton_lease_remaining_seconds", "gauge", "",
     "Seconds left on the lease this node holds, as of the last renewal; 0 when not leading."},
    {"baton_renewal_deadline_ratio", "histogram", "",
     "Per successful renewal: the share of lease.renew_deadline that had passed since the "
     "previous success was sent when its answer came (at 1 the leader gives up)."},
    {"baton_live", "gauge", "", "1 while the daemon is live (/livez answers 200), else 0."},
    {"baton_ready", "gauge", "",
     "1 while the daemon is ready (/readyz answers 200: live, and the store answers), else 0."},
    {"baton_store_command_duration_seconds", "histogram", "command",
     "Round-trip time of lease commands sent to the store, in seconds."},
    {"baton_store_errors_total", "counter", "kind",
     "Failed store operations, by store-neutral kind of failure."},
    {"baton_timer_delay_seconds", "histogram", "",
     "How late the daemon's timers fired (renewals, retries, deadlines), in seconds: the event "
     "loop's delay."},
    {"baton_redis_command_duration_seconds", "histogram", "command",
     "Round-trip time of lease commands sent to Redis, in seconds."},
    {"baton_redis_errors_total", "counter", "kind", "Failed Redis operations, by kind of failure."},
    {"baton_app_failures_total", "counter", "kind",
     "App failures: start_failed (on_start, the command or its keeper could not start), exited "
     "(the command ended by itself while leading), killed (a stop ended in SIGKILL)."},
    {"baton_hook_duration_seconds", "histogram", "hook", "Run time of hook commands, in seconds."},
    {"baton_hook_failures_total", "counter", "hook",
     "Hook runs that failed (non-zero exit, signal, timeout or spawn error)."},
    {"baton_socket_clients", "gauge", "", "Clients connected to the app socket."},
    {"baton_failsafe_on_confirmations", "gauge", "",
     "1 while this leader's app runs on its peers' confirmations (lease.failsafe peers: the "
     "store cannot be reached and a round counted), else 0."},
    {"baton_failsafe_round_confirmed", "gauge", "",
     "Peers that confirmed this leader's current round of confirmations."},
    {"baton_failsafe_round_asked", "gauge", "",
     "Peers this leader's current round of confirmations asked."},
    {"baton_failsafe_rounds_counted_total", "counter", "",
     "Rounds of confirmations in which every listed peer confirmed."},
    {"baton_failsafe_promise_seconds", "gauge", "",
     "Seconds left of the promise this node keeps to a leader it confirmed (it takes no lease "
     "meanwhile); 0 when none."},
    {"baton_failsafe_refused_requests_total", "counter", "",
     "Requests the peer port refused: malformed, another election or node, a wrong or missing "
     "MAC."},
}};

}  // namespace

std::span<const metric_family> metric_families() { return families; }

}  // namespace baton
