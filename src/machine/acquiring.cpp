// The machine's handlers of the acquire: a term won, the lease busy or held
// back, an attempt failed, a release heard.
#include "baton/election_machine.hpp"

#include <algorithm>
#include <utility>

#include "pacing.hpp"
#include "step_context.hpp"

namespace baton {

// --- acquire ----------------------------------------------------------------

void election_machine::on(const events::acquired& ev, step_context& ctx) {
  if (state_ != state::acquiring) return;
  release_heard_while_acquiring_ = false;
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
  const bool released_meanwhile = std::exchange(release_heard_while_acquiring_, false);
  const bool same_holder = !ev.holder.empty() && ev.holder == holder_;
  // A reservation's former holder no longer leads: nobody does until the
  // switchover's target takes the lease.
  holder_ = ev.reserved_for.empty() ? ev.holder : std::string();
  reserved_for_ = ev.reserved_for;
  reserved_until_ =
      ev.reserved_for.empty() ? time_point{} : ctx.now + std::max(ev.holder_ttl, milliseconds(0));
  // A held-back answer carries the store's counter, not the token of the
  // node that may still hold a lease, and a Redlock answer whose masters
  // disagree carries none (0): the token this node last learnt for that
  // same holder (a busy answer, its term's announcement), else unknown (0)
  // rather than misleading.
  // The same holder's token never goes down (a new term takes a higher
  // one): a lower figure is a Redlock master that had not yet seen the
  // winner's write-back, which a standby can ask in between.
  if (ev.held_back || ev.token == 0) {
    if (!same_holder) holder_token_ = 0;
  } else {
    holder_token_ = same_holder ? std::max(holder_token_, ev.token) : ev.token;
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
    // The store counted the lease down at some moment between our send and
    // our receipt of its answer. holder_ttl is rounded down to the
    // millisecond: the key can live up to 1 ms longer than it says.
    mono_clock::duration until_free = ev.free_in >= std::chrono::microseconds(0)
                                          ? mono_clock::duration(ev.free_in)
                                          : mono_clock::duration(ev.holder_ttl + milliseconds(1));
    // A holder's lease is counted from halfway between the two, the best
    // guess of that moment, rather than from the receipt, which is late by
    // the answer's way back (measured: a third of a millisecond after a
    // Redis that rested a second). An attempt that arrives a little early
    // is refused and tried again a moment later; safety is the store's. A
    // hold-back's end is a rule's (a reset's fence, a failsafe hold) and
    // keeps the receipt.
    if (!ev.held_back && ev.sent <= ctx.now) {
      until_free -= std::min(until_free, (ctx.now - ev.sent) / 2);
    }
    auto after_expiry = until_free + stagger + yield_delay();
    // A release heard while this answer was on its way: the lease it
    // names may be free already (a switchover's reservation for this
    // node, say). Try again as the release itself would have us do.
    if (released_meanwhile && !ev.held_back) after_expiry = stagger + yield_delay();
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
  release_heard_while_acquiring_ = false;
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
  if (state_ == state::acquiring) {
    release_heard_while_acquiring_ = true;
    return;
  }
  if (state_ != state::idle || ctx.now < backoff_until_ || app_blocked_ || !may_lead_) return;
  if (outranked_by_ > 0 || back_runner_) {
    // A candidate of a higher priority, or a front runner, heard it too:
    // let it go first. (A back runner hears releases only when the ACL kept
    // it off the back runners' channel.)
    wait_then_retry(ctx, herd_stagger() + yield_delay());
    return;
  }
  if (herd_window() > pacing::expiry_stagger) {
    // Every standby heard the same release: spread the herd's attempts
    // (the wake timer acquires), rather than all of them at this instant.
    wait_then_retry(ctx, herd_stagger());
    return;
  }
  ctx.emit(actions::cancel_timer{timer_id::wake});
  ctx.emit(actions::acquire{});
  go(ctx, state::acquiring, reason::peer_released);
}

}  // namespace baton
