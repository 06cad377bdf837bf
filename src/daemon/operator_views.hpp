// What an operator sees of the daemon: the status object (`baton status`,
// the socket, /status), the probes (/healthz, /livez, /readyz, /leader,
// /standby) and the metrics text (/metrics). It keeps the records they need
// beside the machine's own state (transitions counted, the last renewal's
// latency, how the store has been answering) and reads everything else
// through references it never changes; the report itself is a pure function
// (status_report.hpp, baton/health.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "baton/app_controller.hpp"
#include "baton/app_socket.hpp"
#include "baton/config.hpp"
#include "baton/election_machine.hpp"
#include "baton/health.hpp"
#include "baton/http_routes.hpp"
#include "baton/lease_store.hpp"
#include "baton/metrics.hpp"
#include "baton/stop_gate.hpp"
#include "succession.hpp"

namespace baton {

class operator_views {
 public:
  /// Everything is read, never changed, except `stats` (the metrics text
  /// sets its gauges) ; all must outlive this object.
  operator_views(const config& cfg, const election_machine& machine, const lease_store& store,
                 const stop_gate& gate, const app_controller& app, const app_socket& socket,
                 const succession& candidates, metrics& stats);

  /// A transition happened (counted per from->to for the status); the
  /// machine has taken it already. App failures and the renewals' use of
  /// the renew deadline are counted from it for the metrics.
  void on_transition(const transition& t);
  /// A renewal was answered `latency` after it was sent.
  void on_renew_answered(milliseconds latency) { last_renew_latency_ = latency; }
  /// A store command sent at `sent` completed with `e` (cancelled ones are
  /// not reported): its duration and errors for the metrics, and whether the
  /// store answers, for readiness.
  void observe_command(const char* command, time_point sent, const store_error& e);
  /// A look (lease_store::async_look) sent at `sent` completed with `e`:
  /// whether the store answers, for readiness, and its errors; not timed
  /// as a lease command.
  void observe_look(time_point sent, const store_error& e);

  /// lease.failsafe peers: its part of the status and of the metrics, at a
  /// given time (unset while the mode is off).
  void show_failsafe(std::function<nlohmann::json(time_point)> report,
                     std::function<metrics::failsafe_gauges(time_point)> gauges) {
    failsafe_report_ = std::move(report);
    failsafe_gauges_ = std::move(gauges);
  }

  /// This node's standing (eligible, drained, never) for the status.
  void show_standing(std::function<std::string()> standing) { standing_ = std::move(standing); }

  /// The status object.
  nlohmann::json status() const;
  /// What the HTTP probes answer.
  probe_view probe() const;
  /// The metrics text, its gauges set for now (leadership, the term and its
  /// leader, the lease, the probes, the socket's clients).
  std::string metrics_text();

 private:
  // The renewal's share of the renew deadline, and the term's last success.
  void note_renewal(const transition& t);

  const config& cfg_;
  const election_machine& machine_;
  const lease_store& store_;
  const stop_gate& gate_;
  const app_controller& app_;
  const app_socket& socket_;
  const succession& candidates_;
  metrics& stats_;

  std::map<std::string, std::uint64_t> transition_counts_;
  std::optional<milliseconds> last_renew_latency_;
  // When the last successful acquire or renewal of this term was sent, for
  // the next renewal's share of the renew deadline (nullopt: no term).
  std::optional<time_point> last_success_sent_;
  store_health store_answers_;  // whether the store answers, for readiness
  std::function<nlohmann::json(time_point)> failsafe_report_;
  std::function<metrics::failsafe_gauges(time_point)> failsafe_gauges_;
  std::function<std::string()> standing_;
};

}  // namespace baton
