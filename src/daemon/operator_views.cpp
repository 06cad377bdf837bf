// The status, probes and metrics (see operator_views.hpp).
#include "operator_views.hpp"

#include "status_report.hpp"

namespace baton {

namespace {

double seconds_since(time_point start) {
  return std::chrono::duration<double>(mono_clock::now() - start).count();
}

}  // namespace

operator_views::operator_views(const config& cfg, const election_machine& machine,
                               const lease_store& store, const stop_gate& gate,
                               const app_controller& app, const app_socket& socket,
                               const succession& candidates, metrics& stats)
    : cfg_(cfg),
      machine_(machine),
      store_(store),
      gate_(gate),
      app_(app),
      socket_(socket),
      candidates_(candidates),
      stats_(stats) {}

void operator_views::on_transition(const transition& t) {
  ++transition_counts_[std::string(to_string(t.from)) + "->" + to_string(t.to)];
  // The app's failures, as the machine meets them: a stop that begins for
  // one, and a stop that needed SIGKILL, counted as it ends.
  if (t.to == state::pausing && t.why == reason::start_failed) {
    stats_.count_app_failure("start_failed");
  }
  if (t.to == state::pausing && t.why == reason::child_exited) stats_.count_app_failure("exited");
  if (t.from == state::pausing && machine_.stop_killed()) stats_.count_app_failure("killed");
  note_renewal(t);
}

void operator_views::note_renewal(const transition& t) {
  if (t.to != state::working || (t.why != reason::acquired && t.why != reason::renewed)) {
    if (!machine_.holds_lease()) last_success_sent_.reset();
    return;
  }
  // The machine has taken the success: last_renewal() is when it was sent.
  // The deadline it just escaped was counted from the previous one.
  const auto deadline = machine_.timing().renew_deadline;
  if (t.why == reason::renewed && last_success_sent_ && deadline.count() > 0) {
    const std::chrono::duration<double> used = mono_clock::now() - *last_success_sent_;
    stats_.observe_renewal_deadline_ratio(used / std::chrono::duration<double>(deadline));
  }
  last_success_sent_ = machine_.last_renewal();
}

void operator_views::observe_command(const char* command, time_point sent, const store_error& e) {
  stats_.observe_store_command(command, seconds_since(sent));
  observe_look(sent, e);
}

// A look is not one of the timed store commands, but whether the store
// answers it counts for readiness as any call does.
void operator_views::observe_look(time_point sent, const store_error& e) {
  if (!e) {
    store_answers_.answered = true;
    store_answers_.failing_since.reset();
    return;
  }
  stats_.on_store_error(store_error_kind(e.code));
  store_answers_.last_error = e.message();
  if (!store_answers_.failing_since) store_answers_.failing_since = sent;
}

probe_view operator_views::probe() const {
  auto now = mono_clock::now();
  auto liveness = assess_liveness(machine_, now, cfg_.hooks.timeout);
  auto readiness = assess_readiness(machine_, now, cfg_.hooks.timeout, store_answers_);
  probe_view p;
  p.healthy = liveness.healthy;
  p.unhealthy_reason = liveness.reason;
  p.ready = readiness.healthy;
  p.unready_reason = readiness.reason;
  p.is_leader = machine_.leads(now);
  p.leader = machine_.known_leader(cfg_.node_id, now);
  if (!p.leader.empty()) p.leader_token = machine_.token();
  p.leader_advertise =
      leader_advertise(p.leader, cfg_.node_id, cfg_.advertise, candidates_.candidates());
  return p;
}

std::string operator_views::metrics_text() {
  auto now = mono_clock::now();
  double remaining = 0;
  if (machine_.holds_lease() && machine_.valid_until() > now) {
    remaining = std::chrono::duration<double>(machine_.valid_until() - now).count();
  }
  stats_.set_lease_remaining(remaining);
  stats_.set_leader(machine_.leads(now));
  stats_.set_term_token(machine_.token());
  stats_.set_known_leader(machine_.known_leader(cfg_.node_id, now));
  const auto probes = probe();
  stats_.set_probes(probes.healthy, probes.ready);
  stats_.set_socket_clients(socket_.client_count());
  if (failsafe_gauges_) stats_.set_failsafe(failsafe_gauges_(now));
  return stats_.text();
}

nlohmann::json operator_views::status() const {
  status_inputs in;
  in.node_id = cfg_.node_id;
  in.election = cfg_.election;
  in.machine = &machine_;
  in.store = store_.status();
  in.last_renew_latency = last_renew_latency_;
  in.transitions = transition_counts_;
  if (gate_.stopping()) in.awaiting_ack = gate_.waiting_for_ack_only();
  in.keeper_pid = app_.child_pid();
  in.command_pid = in.keeper_pid > 0 ? app_.command_pid() : 0;
  in.store_answers = store_answers_;
  in.hook_timeout = cfg_.hooks.timeout;
  in.candidates = candidates_.candidates();
  in.advertise = cfg_.advertise;
  if (standing_) in.standing = standing_();
  const auto now = mono_clock::now();
  auto s = status_report(in, now);
  if (failsafe_report_) s["failsafe"] = failsafe_report_(now);
  return s;
}

}  // namespace baton
