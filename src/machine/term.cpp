// The machine's handlers of a term: renewals and their failures, and the
// app's start, exit and stop.
#include "baton/election_machine.hpp"

#include <algorithm>
#include <utility>

#include "step_context.hpp"

namespace baton {

// --- renew ------------------------------------------------------------------

void election_machine::record_success(step_context& ctx, time_point sent) {
  last_ok_ = sent;
  valid_until_ = sent + timing_.validity();
  ctx.emit(actions::arm_timer{timer_id::wake, sent + timing_.renew_interval});
  ctx.emit(actions::arm_timer{timer_id::deadline, sent + timing_.renew_deadline});
  ctx.emit(actions::lease_extended{valid_until_});
}

void election_machine::on(const events::renewed& ev, step_context& ctx) {
  if (!renew_in_flight_) return;
  renew_in_flight_ = false;
  last_renew_refused_ = false;
  if (state_ == state::renewing) {
    record_success(ctx, ev.sent);
    go(ctx, state::working, reason::renewed);
  } else if (state_ == state::pausing && voluntary_stop_ && holding_) {
    last_ok_ = ev.sent;
    valid_until_ = ev.sent + timing_.validity();
    ctx.emit(actions::lease_extended{valid_until_, true});
    ctx.emit(actions::arm_timer{timer_id::wake, ev.sent + timing_.renew_interval});
    // The stop_timeout of this stop, not a reloaded one: the kill_at already
    // announced must not move earlier.
    arm_kill(ctx, std::min(stop_started_ + stop_timeout_of_stop_, valid_until_));
  }
}

void election_machine::on(const events::lost&, step_context& ctx) {
  if (!renew_in_flight_) return;
  renew_in_flight_ = false;
  if (state_ == state::renewing) {
    holding_ = false;
    begin_stop(ctx, reason::lost, false);
  } else if (state_ == state::pausing && holding_) {
    // Another node may already lead: stop waiting for a graceful finish
    // beyond our validity.
    holding_ = false;
    voluntary_stop_ = false;
    ctx.emit(actions::cancel_timer{timer_id::wake});
    arm_kill(ctx, std::min(kill_at_, valid_until_));
  }
}

void election_machine::on(const events::renew_failed& ev, step_context& ctx) {
  if (!renew_in_flight_) return;
  renew_in_flight_ = false;
  auto deadline = last_ok_ + timing_.renew_deadline;
  last_renew_refused_ = ev.refused;
  if (state_ == state::renewing) {
    if (ctx.now >= deadline) {
      begin_stop(ctx, deadline_reason(ctx), false);
      return;
    }
    ctx.emit(actions::arm_timer{timer_id::wake, std::min(ctx.now + renew_retry_delay(), deadline)});
    go(ctx, state::working, reason::renew_failed, ev.error);
  } else if (state_ == state::pausing && voluntary_stop_ && holding_) {
    ctx.emit(actions::arm_timer{timer_id::wake, ctx.now + renew_retry_delay()});
  }
}

// A counted round of confirmations stands for a renewal sent when the round
// was: the leader works on, and the renew deadline counts from that send.
// Only a leader at work takes one (a stop under way keeps the kill deadline
// it announced), and never once its validity has passed: the keeper killed
// its app at that deadline, and a term over stays over.
void election_machine::on(const events::confirmed& ev, step_context& ctx) {
  if ((state_ != state::working && state_ != state::renewing) || !holding_) return;
  if (ctx.now >= valid_until_) return;
  if (ev.valid_until <= valid_until_ && ev.sent <= last_ok_) return;
  valid_until_ = std::max(valid_until_, ev.valid_until);
  last_ok_ = std::max(last_ok_, ev.sent);
  ctx.emit(actions::arm_timer{timer_id::deadline, last_ok_ + timing_.renew_deadline});
  ctx.emit(actions::lease_extended{valid_until_});
}

// --- the app ----------------------------------------------------------------

void election_machine::on(const events::app_started&, step_context& ctx) {
  if ((state_ == state::working || state_ == state::renewing) && app_ == app_phase::starting) {
    app_ = app_phase::running;
    app_started_at_ = ctx.now;
  }
}

void election_machine::on(const events::app_start_failed& ev, step_context& ctx) {
  if (state_ != state::working && state_ != state::renewing) return;
  ++app_failures_;
  if (ev.cannot_execute) {
    app_blocked_ = true;
    // As a shell would: 127, command not found or not executable.
    if (timing_.exit_when_app_exits || timing_.one_term) exit_code_ = 127;
  }
  begin_stop(ctx, reason::start_failed, true);
  ctx.result.change->detail = ev.detail;
}

void election_machine::on(const events::app_exited& ev, step_context& ctx) {
  if (state_ != state::working && state_ != state::renewing) return;
  // An app that ran for at least a ttl is not failing fast: back off from the
  // start again.
  bool ran_long = app_ == app_phase::running && ctx.now - app_started_at_ >= timing_.ttl;
  app_failures_ = ran_long ? 1 : app_failures_ + 1;
  if (timing_.exit_when_app_exits || timing_.one_term) exit_code_ = ev.exit_code;
  begin_stop(ctx, reason::child_exited, true);
  ctx.result.change->detail = ev.detail;
}

// The renew deadline comes before the lease's validity ends; noticing it only
// after the validity means this process did not run in between, which says
// more than "the store did not answer".
reason election_machine::deadline_reason(const step_context& ctx) const {
  if (ctx.now >= valid_until_) return reason::lease_expired;
  // The last answer decides: a refusal is a store that answers "no".
  return last_renew_refused_ ? reason::store_refused : reason::store_unreachable;
}

void election_machine::begin_stop(step_context& ctx, reason why, bool voluntary) {
  app_ = app_phase::stopping;
  stop_reason_ = why;
  voluntary_stop_ = voluntary && holding_;
  stop_started_ = ctx.now;
  stop_timeout_of_stop_ = timing_.stop_timeout;
  killed_ = false;
  ctx.emit(actions::cancel_timer{timer_id::deadline});
  if (!voluntary_stop_) ctx.emit(actions::cancel_timer{timer_id::wake});
  // Involuntary: the lease may lapse at valid_until, so the app must be gone by
  // then. Voluntary: the lease is still renewed, so stop_timeout applies, yet
  // never past what the lease currently covers.
  const bool capped = voluntary_stop_ && valid_until_ < ctx.now + timing_.stop_timeout;
  auto kill_at = voluntary_stop_ && !capped ? ctx.now + timing_.stop_timeout : valid_until_;
  ctx.emit(actions::stop_app{why, kill_at, token_, voluntary_stop_, capped, timing_.stop_timeout});
  arm_kill(ctx, kill_at);
  go(ctx, state::pausing, why);
}

void election_machine::arm_kill(step_context& ctx, time_point at) {
  kill_at_ = at;
  if (killed_) return;
  if (at <= ctx.now) {
    killed_ = true;
    ctx.emit(actions::cancel_timer{timer_id::kill});
    ctx.emit(actions::kill_app{});
  } else {
    ctx.emit(actions::arm_timer{timer_id::kill, at});
    ctx.emit(actions::stop_deadline{at});
  }
}

void election_machine::on(const events::app_stopped&, step_context& ctx) {
  if (state_ != state::pausing) return;
  app_ = app_phase::down;
  ctx.emit(actions::cancel_timer{timer_id::kill});
  ctx.emit(actions::cancel_timer{timer_id::wake});
  ctx.emit(actions::cancel_timer{timer_id::deadline});
  ctx.emit(actions::cancel_timer{timer_id::gate});
  if (holding_) {
    // Only now may the next leader start: give the lease back (reserved
    // for a switchover's target).
    ctx.emit(actions::release{hand_over_to_,
                              hand_over_to_.empty() ? milliseconds(0) : hand_over_window_,
                              stepped_down() ? timing_.resign_cooldown : milliseconds(0)});
    go(ctx, state::releasing, reason::app_stopped);
    return;
  }
  finish_term(ctx);
}

void election_machine::on(const events::release_done& ev, step_context& ctx) {
  if (state_ != state::releasing) return;
  // A failed release is not retried: the key expires by itself, and this
  // node's app is already stopped, so waiting costs takeover time only.
  holding_ = false;
  finish_term(ctx, ev.error, ev.error.empty() ? reason::released : reason::release_failed);
}

void election_machine::finish_term(step_context& ctx, const std::string& detail,
                                   reason released_why) {
  if (timing_.one_term && one_term_over(ctx, detail, released_why)) return;
  if (shutdown_requested_ || exit_code_) {
    int code = exit_code_.value_or(0);
    ctx.emit(actions::cancel_timer{timer_id::wake});
    ctx.emit(actions::exit_process{code});
    go(ctx, state::stopped, shutdown_requested_ ? reason::shutdown : reason::child_exited, detail);
    return;
  }
  bool app_failed = stop_reason_ == reason::start_failed || stop_reason_ == reason::child_exited;
  auto delay = jittered(timing_.retry_interval, 0.2);
  resign_cooldown_ = false;
  if (app_failed && app_failures_ > 0) {
    delay = failure_backoff();
    backoff_until_ = ctx.now + delay;
  } else if (stepped_down()) {
    // Stay out long enough for another node to take the lease: release
    // announcements and busy replies do not bring us back before then.
    delay = timing_.resign_cooldown;
    backoff_until_ = ctx.now + delay;
    resign_cooldown_ = true;
  }
  stop_reason_.reset();
  hand_over_to_.clear();
  wait_then_retry(ctx, timing_.one_term ? within_wait(delay, ctx.now) : delay);
  go(ctx, state::idle, state_ == state::releasing ? released_why : reason::app_stopped, detail);
}

}  // namespace baton
