// The machine's handlers of a term's endings and standing: one term only,
// shutdown, resign and switchover announcements, drain and never-lead.
#include "baton/election_machine.hpp"

#include <algorithm>
#include <utility>

#include "step_context.hpp"

namespace baton {

// --- one term only ----------------------------------------------------------

void election_machine::end_one_term(step_context& ctx, one_term_end how, int code, reason why,
                                    std::string detail) {
  one_term_end_ = how;
  ctx.emit(actions::cancel_timer{timer_id::wake});
  ctx.emit(actions::exit_process{code});
  go(ctx, state::stopped, why, std::move(detail));
}

// A term that started the app is the only one: whatever ended it, the
// process ends with it. Without one (a grant that came too late to lead
// on, and so was given back), the node competes on while the wait lasts.
bool election_machine::one_term_over(step_context& ctx, const std::string& detail,
                                     reason released_why) {
  const reason why = state_ == state::releasing ? released_why : reason::app_stopped;
  if (exit_code_) {
    // The command ended by itself (or could not be executed) before any
    // signal: its status, as a shell would give it.
    end_one_term(ctx, one_term_end::ran, *exit_code_, reason::child_exited, detail);
  } else if (shutdown_requested_) {
    end_one_term(ctx, one_term_end::interrupted, signal_code_, reason::shutdown, detail);
  } else if (term_ran_) {
    end_one_term(ctx, one_term_end::cut_short, one_term_exit::cut_short, stop_reason_.value_or(why),
                 detail);
  } else if (ctx.now >= give_up_at_) {
    end_one_term(ctx, one_term_end::unavailable, one_term_exit::unavailable, why, detail);
  } else {
    return false;
  }
  return true;
}

mono_clock::duration election_machine::within_wait(mono_clock::duration delay,
                                                   time_point now) const {
  return std::max(mono_clock::duration::zero(), std::min(delay, give_up_at_ - now));
}

// --- shutdown ---------------------------------------------------------------

void election_machine::on(const events::shutdown& ev, step_context& ctx) {
  bool repeated = shutdown_requested_;
  shutdown_requested_ = true;
  if (!repeated) signal_code_ = signal_exit_code(ev.signal);
  switch (state_) {
    case state::idle:
      if (timing_.one_term) {
        end_one_term(ctx, one_term_end::interrupted, signal_code_, reason::shutdown, ev.signal);
        return;
      }
      ctx.emit(actions::cancel_timer{timer_id::wake});
      ctx.emit(actions::exit_process{exit_code_.value_or(0)});
      go(ctx, state::stopped, reason::shutdown, ev.signal);
      return;
    case state::working:
    case state::renewing:
      begin_stop(ctx, reason::shutdown, true);
      ctx.result.change->detail = ev.signal;
      return;
    case state::pausing:
      // A second signal means "now": skip the graceful wait.
      if (repeated && !killed_) arm_kill(ctx, ctx.now);
      return;
    case state::acquiring:
    case state::releasing:
    case state::stopped:
      return;  // the pending reply finishes the term, then we exit
  }
}

// Says what on(events::shutdown) above does in each state; keep the two together.
const char* election_machine::shutdown_outcome() const {
  switch (state_) {
    case state::idle:
      return "shutting down";
    case state::working:
    case state::renewing:
      return "shutting down: stopping the app, then releasing the lease";
    case state::pausing:
      if (killed_) return "shutting down once the app, already killed, is down";
      if (shutdown_requested_) return "stopping the app now (SIGKILL)";
      return "shutting down once the app has stopped (a second signal kills it now)";
    case state::acquiring:
    case state::releasing:
      return "shutting down once the store answers";
    case state::stopped:
      return "shutting down already";
  }
  return "shutting down";
}

// --- resign and announcements ----------------------------------------------

void election_machine::on(const events::resign& ev, step_context& ctx) {
  if (!can_resign() || shutdown_requested_) return;
  // A voluntary stop: the lease is kept (renewed) until the app is down, then
  // released (reserved for a switchover's target); finish_term() starts the
  // cool-down.
  hand_over_to_ = ev.to;
  hand_over_window_ = ev.window;
  const reason why = ev.to.empty()  ? reason::resigned
                     : ev.preempted ? reason::preempted
                                    : reason::switchover;
  begin_stop(ctx, why, true);
  if (!ev.to.empty()) ctx.result.change->detail = "to " + ev.to;
}

void election_machine::on(const events::peer_acquired& ev, step_context&) {
  // Our own announcement, or one that races our own term, changes nothing:
  // while we hold the lease the replies to our commands are the truth.
  if (holding_) return;
  holder_ = ev.holder;
  holder_token_ = ev.token;
  reserved_for_.clear();
}

// --- standing ---------------------------------------------------------------

void election_machine::on(const events::standing& ev, step_context& ctx) {
  if (ev.may_lead == may_lead_) return;
  may_lead_ = ev.may_lead;
  if (!may_lead_) return;
  // Undrained while standing by: compete at once, or once a resign's
  // cool-down or an app's back-off is over (the look's wake-up may come
  // sooner).
  if (state_ != state::idle || app_blocked_) return;
  if (ctx.now < backoff_until_) {
    wait_then_retry(ctx, backoff_until_ - ctx.now);
    return;
  }
  ctx.emit(actions::cancel_timer{timer_id::wake});
  ctx.emit(actions::acquire{});
  go(ctx, state::acquiring, reason::retry, "allowed to lead again");
}

// A standby that may not lead registers (so that it is listed, as such)
// at least every half ttl: every kind keeps a registration two ttls.
void election_machine::stand_by(step_context& ctx) {
  ctx.emit(actions::look{});
  wait_then_retry(
      ctx,
      jittered(std::min(timing_.ttl / 2, std::max(timing_.retry_interval, timing_.ttl / 4)), 0.2));
}

}  // namespace baton
