// Prometheus metrics of one baton daemon: its state, leadership, the term and
// its leader, the lease and its renewals, store command latencies and errors,
// probes, app failures, hook durations and socket clients. Values are kept in
// a prometheus-cpp registry and exposed in the text format by text(); serving
// them over HTTP is someone else's job. Every family is named and described
// once, in metric_families(), which the registry, baton(1) and the docs test
// read.
//
// Label values come from small fixed sets (states, commands, hooks), so the
// number of series stays bounded whatever the daemon passes in: names outside
// a set are counted under "other". Error kinds are open, but only the first
// 32 distinct kinds get their own series.
//
// All members may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace baton {

/// One metric family baton exports.
struct metric_family {
  std::string_view name;
  std::string_view type;    ///< "gauge", "counter" or "histogram"
  std::string_view labels;  ///< its label names, comma-separated; "" = none
  std::string_view help;    ///< the exposition's HELP line
};

/// Every family baton exports, in a fixed order: the one list the registry
/// is built from, baton(1)'s METRICS section and `baton __metrics` print, and
/// the docs test holds docs/operating.md and the shipped alert rules and
/// dashboard to.
std::span<const metric_family> metric_families();

class metrics {
 public:
  /// Sets baton_info{version,election,node_id} to 1 and creates every series
  /// of the fixed label sets at 0, so dashboards see them before they move.
  metrics(std::string election, std::string node_id);
  ~metrics();
  metrics(metrics&&) noexcept;
  metrics& operator=(metrics&&) noexcept;
  metrics(const metrics&) = delete;
  metrics& operator=(const metrics&) = delete;

  /// baton_state{state}: 1 for `state`, 0 for the other states (idle,
  /// acquiring, working, renewing, pausing, releasing, stopped). An unknown
  /// state sets all of them to 0.
  void set_state(std::string_view state);
  /// baton_transitions_total{from,to} += 1. Names that are not states count
  /// as "other".
  void on_transition(std::string_view from, std::string_view to);
  /// baton_is_leader: 1 while this node holds the lease.
  void set_leader(bool leading);
  /// baton_leader_changes_total += 1.
  void on_leader_change();
  /// baton_switchovers_total += 1: this leader began handing over to a
  /// named node (`baton switchover`).
  void count_switchover();
  /// baton_lease_remaining_seconds; 0 when not leading. Negative or NaN
  /// values are recorded as 0.
  void set_lease_remaining(double seconds);
  /// baton_store_command_duration_seconds{command}: one observation, in
  /// seconds, of acquire, renew or release (anything else counts as "other");
  /// also recorded under the Redis-era name baton_redis_command_duration_seconds.
  void observe_store_command(std::string_view command, double seconds);
  /// baton_store_errors_total{kind} += 1, kind as store_error_kind() names it
  /// (unavailable, timeout, auth, protocol, no_quorum, refused, other); also
  /// counted in baton_redis_errors_total under the Redis-era kind
  /// (unavailable -> connect, protocol and refused -> reply).
  void on_store_error(std::string_view kind);
  /// Only baton_redis_command_duration_seconds{command} (the Redis-era name).
  void observe_redis_command(std::string_view command, double seconds);
  /// Only baton_redis_errors_total{kind} += 1; kind e.g. connect, timeout,
  /// reply, closed, auth, other.
  void on_redis_error(std::string_view kind);
  /// baton_hook_duration_seconds{hook}: one run of on_start or on_stop (else
  /// "other"), in seconds; a failed run also adds 1 to
  /// baton_hook_failures_total{hook}.
  void observe_hook(std::string_view hook, double seconds, bool ok);
  /// baton_timer_delay_seconds: how late one of the daemon's timers fired
  /// (renewals, retries, deadlines), in seconds: the event loop's delay,
  /// which grows on a loaded machine and eats into a short lease.
  void observe_timer_delay(double seconds);
  /// baton_socket_clients: connected app socket clients.
  void set_socket_clients(std::size_t clients);

  /// baton_term_token: the fencing token of the current term as this node
  /// knows it (its own while it leads, else the holder's its last attempt or
  /// an announcement named; 0 before any). A gauge holds a double, exact up
  /// to 2^53: tokens counted from a server's clock in microseconds (as the
  /// Redis kinds and PostgreSQL count them) stay below it until the 2250s.
  void set_term_token(std::uint64_t token);
  /// baton_leader_info{node_id}: 1 for the leader this node knows of; no
  /// series while it knows none. A new node id replaces the old series.
  void set_known_leader(std::string_view node_id);
  /// baton_live and baton_ready: 1 while /livez (and /readyz) would answer 200.
  void set_probes(bool live, bool ready);
  /// baton_app_failures_total{kind} += 1: start_failed (on_start failed, or
  /// the command or its keeper could not start), exited (the command ended
  /// by itself while leading), killed (a stop ended in SIGKILL); anything
  /// else counts as "other".
  void count_app_failure(std::string_view kind);
  /// baton_renewal_deadline_ratio: one successful renewal, as the share of
  /// lease.renew_deadline that had passed since the previous success was
  /// sent when its answer came (at 1 the leader gives up). Negative or NaN
  /// values are recorded as 0.
  void observe_renewal_deadline_ratio(double ratio);
  /// lease.failsafe peers, as the daemon last counted it.
  struct failsafe_gauges {
    bool on_confirmations = false;
    std::size_t round_confirmed = 0;
    std::size_t round_asked = 0;
    std::uint64_t rounds_counted = 0;  ///< since the daemon started
    double promise_seconds = 0;
    std::uint64_t refused_requests = 0;  ///< since the daemon started
  };
  /// baton_failsafe_on_confirmations, _round_confirmed, _round_asked,
  /// _promise_seconds; and baton_failsafe_rounds_counted_total and
  /// _refused_requests_total brought up to the totals given.
  void set_failsafe(const failsafe_gauges& g);

  /// The whole registry in the Prometheus text exposition format (0.0.4).
  std::string text() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
