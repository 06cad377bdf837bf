// The one place that maps (state, event) to (next state, actions). Each
// event has its handler below; inside it, a switch over the state. Events that
// make no sense in a state (a late reply, a timer that was re-armed) are
// ignored there, which keeps stale completions from moving the machine.
#include "baton/election_machine.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace baton {

namespace {

// Largest stagger added after a holder's expiry, so standbys that wake for
// the same expiry do not all hit the store at the same instant. Kept small:
// it adds directly to the takeover lag after a crash (the first of several
// standbys wins, so on average a fraction of it).
constexpr std::chrono::microseconds expiry_stagger{300};
// With many standbys the window grows by this much per candidate the store
// sees: about what one attempt costs the store and a 2-core host, so the
// herd's attempts follow each other instead of queueing together, and the
// earliest (the likely winner) still goes within about this long.
constexpr std::chrono::microseconds stagger_per_contender{50};
// ... but never wider than this, nor than ttl / 20.
constexpr std::chrono::microseconds max_herd_stagger{100000};
// Ceiling of the back-off after the app failed to start or exited.
constexpr milliseconds max_failure_backoff{30000};

std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

milliseconds doubled(milliseconds base, unsigned times, milliseconds cap) {
  auto value = base;
  for (unsigned i = 0; i < times && value < cap; ++i) value *= 2;
  return std::min(value, cap);
}

}  // namespace

milliseconds lease_timing::drift() const { return lease_drift(ttl, drift_factor); }

milliseconds lease_timing::validity() const { return ttl - drift(); }

struct election_machine::step_context {
  time_point now;
  step_result result;

  void emit(action a) { result.actions.push_back(std::move(a)); }
};

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

// --- acquire ----------------------------------------------------------------

void election_machine::on(const events::acquired& ev, step_context& ctx) {
  if (state_ != state::acquiring) return;
  acquire_errors_ = 0;
  holding_ = true;
  token_ = ev.token;
  holder_.clear();
  store_hold_back_ = {};
  last_ok_ = ev.sent;
  valid_until_ = ev.sent + timing_.validity();
  if (shutdown_requested_) {
    // Never start an app we are about to stop; give the lease straight back.
    ctx.emit(actions::release{});
    go(ctx, state::releasing, reason::shutdown);
    return;
  }
  if (!may_lead_) {
    // Drained while the attempt was on its way: never start the app.
    ctx.emit(actions::release{});
    go(ctx, state::releasing, reason::resigned, "drained while acquiring");
    return;
  }
  if (ctx.now >= ev.sent + timing_.renew_deadline) {
    // The reply took so long that the lease is already due to be given up.
    ctx.emit(actions::release{});
    go(ctx, state::releasing, reason::late_reply);
    return;
  }
  record_success(ctx, ev.sent);
  term_started_ = ctx.now;
  term_ran_ = true;
  app_ = app_phase::starting;
  ctx.emit(actions::start_app{reason::acquired, token_, valid_until_});
  go(ctx, state::working, reason::acquired);
}

void election_machine::on(const events::busy& ev, step_context& ctx) {
  if (state_ != state::acquiring) return;
  acquire_errors_ = 0;
  const bool same_holder = !ev.holder.empty() && ev.holder == holder_;
  // A reservation's former holder no longer leads: nobody does until the
  // switchover's target takes the lease.
  holder_ = ev.reserved_for.empty() ? ev.holder : std::string();
  reserved_for_ = ev.reserved_for;
  reserved_until_ = ev.reserved_for.empty() ? time_point{}
                                             : ctx.now + std::max(ev.holder_ttl, milliseconds(0));
  // A held-back answer carries the store's counter, not the token of the
  // node that may still hold a lease, and a Redlock answer whose masters
  // disagree carries none (0): the token this node last learnt for that
  // same holder (a busy answer, its term's announcement), else unknown (0)
  // rather than misleading.
  if (!ev.held_back && ev.token != 0) {
    holder_token_ = ev.token;
  } else if (!same_holder) {
    holder_token_ = 0;
  }
  if (ev.contenders >= 0) contenders_ = ev.contenders;
  outranked_by_ = std::max(ev.outranked_by, 0);
  back_runner_ = ev.back_runner;
  store_hold_back_ = {};
  if (ev.held_back) {
    store_hold_back_.until = ctx.now + std::max(ev.holder_ttl, milliseconds(0));
    store_hold_back_.why = ev.held_back_why.empty() ? "after a store reset" : ev.held_back_why;
  }
  if (shutdown_requested_) {
    finish_term(ctx);
    return;
  }
  // The holder's key cannot be free before its PTTL runs out, and a
  // renewal only moves that later: the next attempt goes just after it. A
  // release announcement wakes us sooner; without one, a graceful release
  // would only be seen by polling, so fall back to retry_interval.
  mono_clock::duration delay = jittered(timing_.retry_interval, 0.2);
  if (ev.holder_ttl >= milliseconds(0)) {
    const auto stagger = herd_stagger();
    // The store counted the lease down from before its answer left, so
    // either figure, counted from our receipt of it, ends at or after the
    // expiry. holder_ttl is rounded down to the millisecond: the key can
    // live up to 1 ms longer than it says.
    mono_clock::duration until_free = ev.free_in >= std::chrono::microseconds(0)
                                          ? mono_clock::duration(ev.free_in)
                                          : mono_clock::duration(ev.holder_ttl + milliseconds(1));
    auto after_expiry = until_free + stagger + yield_delay();
    delay = ev.watching_releases ? after_expiry : std::min(delay, after_expiry);
  }
  if (backoff_until_ > ctx.now) delay = std::max(delay, backoff_until_ - ctx.now);
  std::string detail = ev.holder;
  if (ev.held_back && !ev.held_back_why.empty()) {
    detail = "held back: " + ev.held_back_why;
  } else if (ev.held_back) {
    detail = ev.holder.empty() ? std::string("held back after a store reset")
                               : "held back after a store reset; " + ev.holder + " holds a lease";
  } else if (!ev.reserved_for.empty()) {
    detail = "reserved for " + ev.reserved_for + " by a switchover" +
             (ev.holder.empty() ? std::string() : " from " + ev.holder);
  }
  if (timing_.one_term && ctx.now >= give_up_at_) {
    end_one_term(ctx, one_term_end::held, one_term_exit::held, reason::busy, std::move(detail));
    return;
  }
  // One term only: a last attempt when the wait runs out, should neither
  // the holder's expiry nor a release come first.
  if (timing_.one_term) delay = within_wait(delay, ctx.now);
  wait_then_retry(ctx, delay);
  go(ctx, state::idle, reason::busy, std::move(detail));
}

void election_machine::on(const events::acquire_failed& ev, step_context& ctx) {
  if (state_ != state::acquiring) return;
  if (shutdown_requested_) {
    finish_term(ctx);
    return;
  }
  if (timing_.one_term && ctx.now >= give_up_at_) {
    end_one_term(ctx, one_term_end::unavailable, one_term_exit::unavailable, reason::store_error,
                 ev.error);
    return;
  }
  mono_clock::duration delay = ev.keeps_promise ? timing_.retry_interval : error_backoff();
  ++acquire_errors_;
  if (timing_.one_term) delay = within_wait(delay, ctx.now);
  wait_then_retry(ctx, delay);
  go(ctx, state::idle, reason::store_error, ev.error);
}

void election_machine::on(const events::app_checked& ev, step_context& ctx) {
  if (state_ != state::idle || !app_blocked_) return;
  if (!ev.executable) {
    // A look costs nothing: come back soon, so a restored command leads fast.
    wait_then_retry(ctx, jittered(timing_.retry_interval, 0.2));
    return;
  }
  app_blocked_ = false;
  app_failures_ = 0;
  backoff_until_ = ctx.now;
  ctx.emit(actions::cancel_timer{timer_id::wake});
  ctx.emit(actions::acquire{});
  go(ctx, state::acquiring, reason::retry, "the app can be executed again");
}

void election_machine::on(const events::peer_released&, step_context& ctx) {
  if (state_ != state::idle || ctx.now < backoff_until_ || app_blocked_ || !may_lead_) return;
  if (outranked_by_ > 0 || back_runner_) {
    // A candidate of a higher priority, or a front runner, heard it too:
    // let it go first. (A back runner hears releases only when the ACL kept
    // it off the back runners' channel.)
    wait_then_retry(ctx, herd_stagger() + yield_delay());
    return;
  }
  if (herd_window() > expiry_stagger) {
    // Every standby heard the same release: spread the herd's attempts
    // (the wake timer acquires), rather than all of them at this instant.
    wait_then_retry(ctx, herd_stagger());
    return;
  }
  ctx.emit(actions::cancel_timer{timer_id::wake});
  ctx.emit(actions::acquire{});
  go(ctx, state::acquiring, reason::peer_released);
}

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
    end_one_term(ctx, one_term_end::cut_short, one_term_exit::cut_short,
                 stop_reason_.value_or(why), detail);
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
  const reason why = ev.to.empty() ? reason::resigned
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
  wait_then_retry(ctx, jittered(std::min(timing_.ttl / 2, std::max(timing_.retry_interval,
                                                                     timing_.ttl / 4)),
                                0.2));
}

// --- timing helpers ---------------------------------------------------------

std::chrono::microseconds election_machine::herd_window() const {
  if (contenders_ <= 0) return expiry_stagger;
  const auto cap = std::min(max_herd_stagger,
                            std::chrono::duration_cast<std::chrono::microseconds>(timing_.ttl / 20));
  return std::max(expiry_stagger, std::min(cap, stagger_per_contender * contenders_));
}

mono_clock::duration election_machine::yield_delay() const {
  const auto step = std::clamp(std::chrono::duration_cast<milliseconds>(timing_.ttl / 40),
                               milliseconds(10), milliseconds(250));
  return step * (std::min(outranked_by_, 3) + (back_runner_ ? 1 : 0));
}

std::chrono::microseconds election_machine::herd_stagger() {
  const auto window = herd_window();
  return std::chrono::microseconds(
      static_cast<std::chrono::microseconds::rep>(splitmix64(rng_) % (window.count() + 1)));
}

void election_machine::wait_then_retry(step_context& ctx, mono_clock::duration delay) {
  ctx.emit(actions::arm_timer{timer_id::wake, ctx.now + delay});
}

milliseconds election_machine::jittered(milliseconds base, double spread) {
  // Uniform in [base * (1 - spread), base * (1 + spread)].
  auto unit = static_cast<double>(splitmix64(rng_) >> 11) * 0x1.0p-53;
  auto factor = 1.0 + spread * (2.0 * unit - 1.0);
  return milliseconds(
      static_cast<milliseconds::rep>(std::llround(static_cast<double>(base.count()) * factor)));
}

milliseconds election_machine::error_backoff() const {
  return doubled(timing_.retry_interval, acquire_errors_, std::max(timing_.retry_interval, timing_.ttl));
}

milliseconds election_machine::failure_backoff() const {
  return doubled(timing_.retry_interval, app_failures_ - 1,
                 std::max(timing_.retry_interval, max_failure_backoff));
}

milliseconds election_machine::renew_retry_delay() const {
  return std::max(timing_.renew_interval / 4, milliseconds(1));
}

// --- names ------------------------------------------------------------------

const char* to_string(state s) {
  switch (s) {
    case state::idle: return "idle";
    case state::acquiring: return "acquiring";
    case state::working: return "working";
    case state::renewing: return "renewing";
    case state::pausing: return "pausing";
    case state::releasing: return "releasing";
    case state::stopped: return "stopped";
  }
  return "unknown";
}

const char* to_string(reason r) {
  switch (r) {
    case reason::started: return "started";
    case reason::retry: return "retry";
    case reason::acquired: return "acquired";
    case reason::busy: return "busy";
    case reason::store_error: return "store-error";
    case reason::renewing: return "renewing";
    case reason::renewed: return "renewed";
    case reason::renew_failed: return "renew-failed";
    case reason::lost: return "lost";
    case reason::store_unreachable: return "store-unreachable";
    case reason::store_refused: return "store-refused";
    case reason::release_failed: return "release-failed";
    case reason::shutdown: return "shutdown";
    case reason::child_exited: return "child-exited";
    case reason::start_failed: return "start-failed";
    case reason::app_stopped: return "app-stopped";
    case reason::released: return "released";
    case reason::peer_released: return "peer-released";
    case reason::late_reply: return "late-reply";
    case reason::resigned: return "resigned";
    case reason::switchover: return "switchover";
    case reason::preempted: return "preempted";
    case reason::lease_expired: return "lease-expired";
  }
  return "unknown";
}

const char* to_string(timer_id t) {
  switch (t) {
    case timer_id::wake: return "wake";
    case timer_id::deadline: return "deadline";
    case timer_id::kill: return "kill";
    case timer_id::gate: return "gate";
  }
  return "unknown";
}

}  // namespace baton
