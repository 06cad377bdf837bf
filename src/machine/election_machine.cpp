// The one place that maps (state, event) to (next state, actions). Each
// event has its handler: the start and the timers here, the others in the
// files beside this one (acquiring.cpp, term.cpp, endings.cpp), and the
// pacing they share in pacing.cpp. Inside a handler, a switch over the
// state. Events that make no sense in a state (a late reply, a timer that
// was re-armed) are ignored there, which keeps stale completions from
// moving the machine.
#include "baton/election_machine.hpp"

#include <utility>

#include "step_context.hpp"

namespace baton {

milliseconds lease_timing::drift() const {
  return lease_drift(ttl, drift_factor);
}

milliseconds lease_timing::validity() const {
  return ttl - drift();
}

election_machine::election_machine(lease_timing timing, std::uint64_t seed)
    : timing_(timing), rng_(seed) {}

step_result election_machine::step(const event& e, time_point now) {
  step_context ctx{now, {}};
  if (state_ != state::stopped) {
    std::visit([&](const auto& ev) { on(ev, ctx); }, e);
  }
  return std::move(ctx.result);
}

void election_machine::go(step_context& ctx, state next, reason why, std::string detail) {
  ctx.result.change = transition{state_, next, why, std::move(detail)};
  state_ = next;
  since_ = ctx.now;
}

// --- start and timers ------------------------------------------------------

void election_machine::on(const events::start&, step_context& ctx) {
  if (state_ != state::idle) return;
  give_up_at_ = ctx.now + timing_.one_term_wait;
  if (!may_lead_) {
    stand_by(ctx);
    return;
  }
  ctx.emit(actions::acquire{});
  go(ctx, state::acquiring, reason::started);
}

void election_machine::on(const events::timer& ev, step_context& ctx) {
  switch (ev.id) {
    case timer_id::wake:
      if (state_ == state::idle && !may_lead_) {
        stand_by(ctx);
      } else if (state_ == state::idle && app_blocked_) {
        // Taking the lease for an app that cannot start would only churn
        // terms (and fencing tokens): look first.
        ctx.emit(actions::check_app{});
      } else if (state_ == state::idle) {
        ctx.emit(actions::acquire{});
        go(ctx, state::acquiring, reason::retry);
      } else if (state_ == state::working) {
        renew_in_flight_ = true;
        ctx.emit(actions::renew{});
        go(ctx, state::renewing, reason::renewing);
      } else if (state_ == state::pausing && voluntary_stop_ && holding_ && !renew_in_flight_) {
        // A voluntary stop keeps the lease alive until the app is down.
        renew_in_flight_ = true;
        ctx.emit(actions::renew{});
      }
      return;
    case timer_id::deadline:
      if (state_ == state::working || state_ == state::renewing) {
        begin_stop(ctx, deadline_reason(ctx), false);
      }
      return;
    case timer_id::kill:
      if (state_ == state::pausing && !killed_) {
        killed_ = true;
        ctx.emit(actions::kill_app{});
      }
      return;
    case timer_id::gate:
      // The gate decides; the machine only says when to ask it.
      if (state_ == state::pausing) ctx.emit(actions::ask_stop_gate{});
      return;
  }
}

// Only a stop holds a release back; app_stopped, the one way out of
// pausing, cancels the timer.
void election_machine::on(const events::stop_gate_holds& ev, step_context& ctx) {
  if (state_ != state::pausing) return;
  if (ev.look_again_at) {
    ctx.emit(actions::arm_timer{timer_id::gate, *ev.look_again_at});
  } else {
    ctx.emit(actions::cancel_timer{timer_id::gate});
  }
}

// --- names ------------------------------------------------------------------

const char* to_string(state s) {
  switch (s) {
    case state::idle:
      return "idle";
    case state::acquiring:
      return "acquiring";
    case state::working:
      return "working";
    case state::renewing:
      return "renewing";
    case state::pausing:
      return "pausing";
    case state::releasing:
      return "releasing";
    case state::stopped:
      return "stopped";
  }
  return "unknown";
}

const char* to_string(reason r) {
  switch (r) {
    case reason::started:
      return "started";
    case reason::retry:
      return "retry";
    case reason::acquired:
      return "acquired";
    case reason::busy:
      return "busy";
    case reason::store_error:
      return "store-error";
    case reason::renewing:
      return "renewing";
    case reason::renewed:
      return "renewed";
    case reason::renew_failed:
      return "renew-failed";
    case reason::lost:
      return "lost";
    case reason::store_unreachable:
      return "store-unreachable";
    case reason::store_refused:
      return "store-refused";
    case reason::release_failed:
      return "release-failed";
    case reason::shutdown:
      return "shutdown";
    case reason::child_exited:
      return "child-exited";
    case reason::start_failed:
      return "start-failed";
    case reason::app_stopped:
      return "app-stopped";
    case reason::released:
      return "released";
    case reason::peer_released:
      return "peer-released";
    case reason::late_reply:
      return "late-reply";
    case reason::resigned:
      return "resigned";
    case reason::switchover:
      return "switchover";
    case reason::preempted:
      return "preempted";
    case reason::lease_expired:
      return "lease-expired";
  }
  return "unknown";
}

const char* to_string(timer_id t) {
  switch (t) {
    case timer_id::wake:
      return "wake";
    case timer_id::deadline:
      return "deadline";
    case timer_id::kill:
      return "kill";
    case timer_id::gate:
      return "gate";
  }
  return "unknown";
}

}  // namespace baton
