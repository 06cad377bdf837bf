// What the app's side reports, turned into machine events: the app
// controller's listener (started, failed to start, exited by itself, stopped,
// and each hook's duration for the metrics) and the socket's stop
// acknowledgements ({"cmd":"stopped"}, ack_command.hpp).
//
// "Stopped" reaches the machine through the stop gate (baton/stop_gate.hpp),
// which with socket.require_ack also waits for a socket client's
// acknowledgement or the stop's kill deadline. While the gate holds the
// release back, the machine keeps its gate timer armed at the gate's next
// look (events::stop_gate_holds) and asks again when it fires
// (actions::ask_stop_gate). The gate decides; this only carries its answers
// to the machine and says them (narration.hpp).
#pragma once

#include <cstdint>
#include <functional>

#include <nlohmann/json.hpp>

#include "baton/app_controller.hpp"
#include "baton/app_socket.hpp"
#include "baton/election_machine.hpp"
#include "baton/metrics.hpp"
#include "baton/stop_gate.hpp"
#include "handover_timing.hpp"

namespace baton {

class app_reports {
 public:
  /// `can_execute`: whether the app's command and hooks can be executed at
  /// all (app_controller::can_execute); `post` hands an event to the driver.
  /// Every reference must outlive this object.
  app_reports(stop_gate& gate, metrics& stats, handover_timing& timing,
              std::function<bool()> can_execute, std::function<void(event)> post);

  /// The listener to make the app controller with.
  app_controller::listener listener();

  /// The socket's `stopped` from `peer` (allowed already): the reply, or
  /// throws std::runtime_error with what to send back.
  nlohmann::json acknowledge(const nlohmann::json& request, const peer_info& peer);

  /// actions::kill_app, once the app was sent SIGKILL at `now`.
  void killed(time_point now);
  /// actions::ask_stop_gate at `now`, in term `token`.
  void ask_gate(time_point now, std::uint64_t token);
  /// actions::stop_deadline: the stop's kill deadline is `kill_at`.
  void kill_deadline(time_point kill_at);

 private:
  void on_stopped();
  // The gate holds the release back: the machine arms its gate timer for
  // when the gate wants another look, or cancels it when the gate waits for
  // nothing (wake_at() is then empty).
  void gate_holds();

  stop_gate& gate_;
  metrics& stats_;
  handover_timing& timing_;
  std::function<bool()> can_execute_;
  std::function<void(event)> post_;
};

}  // namespace baton
