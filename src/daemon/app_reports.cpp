// What the app's side reports, turned into machine events (see
// app_reports.hpp).
#include "app_reports.hpp"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "ack_command.hpp"
#include "narration.hpp"

namespace baton {

app_reports::app_reports(stop_gate& gate, metrics& stats, handover_timing& timing,
                         std::function<bool()> can_execute, std::function<void(event)> post)
    : gate_(gate),
      stats_(stats),
      timing_(timing),
      can_execute_(std::move(can_execute)),
      post_(std::move(post)) {}

app_controller::listener app_reports::listener() {
  app_controller::listener l;
  l.started = [this] { post_(events::app_started{}); };
  l.start_failed = [this](std::string detail) {
    spdlog::error("{}", start_failed_line(detail));
    // A command or hook that cannot be executed at all stops this node from
    // competing until it can (the machine asks with check_app).
    const bool cannot_execute = !can_execute_();
    post_(events::app_start_failed{std::move(detail), cannot_execute});
  };
  l.child_exited = [this](exit_status s) {
    spdlog::warn("{}", child_exited_line(s.describe()));
    post_(events::app_exited{s.as_exit_code(), s.describe()});
  };
  l.hook_finished = [this](const std::string& hook, milliseconds duration, bool ok) {
    stats_.observe_hook(hook, std::chrono::duration<double>(duration).count(), ok);
  };
  l.stopped = [this] { on_stopped(); };
  return l;
}

void app_reports::on_stopped() {
  const auto now = mono_clock::now();
  timing_.app_stopped(now);
  if (gate_.on_app_stopped(now)) {
    // The app controller has logged "app: stopped" already.
    post_(events::app_stopped{});
    return;
  }
  spdlog::info("{}", awaiting_ack_line(gate_.token(), gate_.wake_at(), now));
  gate_holds();
}

// Errors are thrown: the socket sends them back as {"type":"error"}.
nlohmann::json app_reports::acknowledge(const nlohmann::json& request, const peer_info& peer) {
  const auto token = ack_token(request);
  const auto result = gate_.on_ack(token, mono_clock::now());
  if (!result.error.empty()) throw std::runtime_error(result.error);
  spdlog::info("{}", acknowledged_line(gate_.token(), peer.pid, peer.uid));
  if (result.release) post_(events::app_stopped{});
  return {{"type", "acknowledged"}, {"token", gate_.token()}};
}

void app_reports::killed(time_point now) {
  if (gate_.on_kill(now)) {
    post_(events::app_stopped{});
  } else {
    // A client that missed the stop may work until the deadline it was
    // given: the gate says when that is over (if it waits at all).
    gate_holds();
  }
}

void app_reports::ask_gate(time_point now, std::uint64_t token) {
  if (gate_.on_timer(now)) {
    spdlog::warn("{}", ack_missed_line(token));
    post_(events::app_stopped{});
  } else {
    gate_holds();
  }
}

void app_reports::kill_deadline(time_point kill_at) {
  gate_.on_kill_at(kill_at);
  gate_holds();
}

void app_reports::gate_holds() {
  post_(events::stop_gate_holds{gate_.wake_at()});
}

}  // namespace baton
