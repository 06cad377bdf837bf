// The store's side of the loop (see store_side.hpp).
//
// Replies are tagged with the time their command was SENT, since the machine
// counts a lease's validity from then.
#include "store_side.hpp"

#include <spdlog/spdlog.h>

#include "say.hpp"

namespace baton {

namespace {

// After close() the store completes what was in flight as cancelled.
bool cancelled(const store_error& e) {
  return e.code == std::errc::operation_canceled;
}

}  // namespace

store_side::store_side(const config& cfg, lease_store& store, operator_views& views,
                       narrator& narration, handover_timing& timing, hooks h)
    : cfg_(cfg),
      store_(store),
      views_(views),
      narration_(narration),
      timing_(timing),
      hooks_(std::move(h)) {}

void store_side::watch() {
  store_.watch(
      [this](const store_event& e) { std::visit([this](const auto& ev) { on_event(ev); }, e); });
}

void store_side::on_event(const store_events::released&) {
  // Beside the old leader's "app reported stopped" line, this splits a
  // handover into the release's announcement and the new leader's part.
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{}", release_heard_line(mono_clock::now()));
  }
  hooks_.post(events::peer_released{});
}

void store_side::on_event(const store_events::acquired& e) {
  if (failsafe_) failsafe_->saw_term(e.holder, e.token);
  hooks_.post(events::peer_acquired{e.holder, e.token});
  hooks_.term_announced();
}

void store_side::on_event(const store_events::reset& e) {
  spdlog::warn("{}", reset_line(e, store_.status().label, cfg_.election, cfg_.lease.ttl));
}

void store_side::on_event(const store_events::wakeups& e) {
  wakeups_trusted_ = e.trusted;
  say(wakeups_line(e));
}

void store_side::on_event(const store_events::listed& e) {
  if (hooks_.listed) hooks_.listed(e.candidates);
}

void store_side::look() {
  const auto sent = mono_clock::now();
  store_.async_look([this, sent](store_error e, lease_holder h) {
    if (cancelled(e)) return;
    views_.observe_look(sent, e);
    if (e) return;
    hooks_.post(events::peer_acquired{h.node, h.token});
    hooks_.term_announced();
  });
}

void store_side::on_event(const store_events::note& e) {
  if (e.warning) return spdlog::warn("{}", e.text);
  spdlog::debug("{}", e.text);
}

void store_side::acquire() {
  auto sent = mono_clock::now();
  auto done = [this, sent](store_error e, acquire_answer r) {
    if (cancelled(e)) return;
    on_acquire_answer(sent, std::move(e), r);
  };
  if (failsafe_) {
    failsafe_calls_->async_acquire(failsafe_->acquire_args(hooks_.candidates(), sent),
                                   std::move(done));
  } else {
    store_.async_acquire(std::move(done));
  }
}

// What the machine hears of an acquire the rules of lease.failsafe peers
// hold back (a grant given back, a hold to clear, a register-only attempt):
// a held-back answer that ends at the verdict's time, for its reason.
events::busy store_side::held_back_until(time_point sent, time_point now,
                                         const acquire_verdict& verdict,
                                         const acquire_answer& r) const {
  events::busy b;
  b.sent = sent;
  b.holder = r.holder;
  b.holder_ttl = std::chrono::ceil<milliseconds>(
      std::max(verdict.retry_at - now, mono_clock::duration(0)));
  b.token = r.token;
  b.watching_releases = wakeups_trusted_;
  b.held_back = true;
  b.held_back_why = verdict.why;
  b.contenders = r.contenders;
  b.outranked_by = r.outranked_by;
  b.back_runner = r.back_runner;
  return b;
}

void store_side::on_acquire_answer(time_point sent, store_error e, const acquire_answer& r) {
  views_.observe_command("acquire", sent, e);
  const auto now = mono_clock::now();
  if (e) {
    hooks_.post(events::acquire_failed{e.message(), failsafe_ && failsafe_->keeps_promise(now)});
    return;
  }
  if (r.acquired()) {
    if (failsafe_) {
      if (auto verdict = failsafe_->granted(r.token, now)) {
        // F7: nothing may start; the grant goes back unused.
        spdlog::warn("lease won with token {} {}", r.token, verdict->why);
        store_.async_release([](store_error, release_answer) {});
        hooks_.post(held_back_until(sent, now, *verdict, acquire_answer{}));
        return;
      }
    }
    timing_.acquire_won(sent, now);
    hooks_.post(events::acquired{sent, r.token});
    hooks_.won();
    return;
  }
  if (failsafe_) {
    if (auto verdict = failsafe_->refused(r, now)) {
      hooks_.post(held_back_until(sent, now, *verdict, r));
      return;
    }
  }
  if (auto line = narration_.hold_back(r)) spdlog::warn("{}", *line);
  if (auto line = own_reservation_line(r, cfg_.node_id)) spdlog::warn("{}", *line);
  hooks_.post(events::busy{sent, r.holder, r.remaining, r.token, wakeups_trusted_,
                           r.outcome == acquire_outcome::held_back, r.free_in, r.why,
                           r.contenders, r.reserved_for, r.outranked_by, r.back_runner});
}

void store_side::renew() {
  auto sent = mono_clock::now();
  if (failsafe_) {
    const auto list = failsafe_->next_list(hooks_.candidates());
    failsafe_calls_->async_renew(list, [this, sent, seq = list.seq](store_error e, renew_answer r) {
      if (cancelled(e)) return;
      on_renew_answer(sent, seq, std::move(e), r);
    });
    return;
  }
  store_.async_renew([this, sent](store_error e, renew_answer r) {
    if (cancelled(e)) return;
    on_renew_answer(sent, 0, std::move(e), r);
  });
}

void store_side::post_renew_failed(const store_error& e) {
  hooks_.post(events::renew_failed{
      e.message(), e.code == store_errc::auth || e.code == store_errc::refused});
}

void store_side::post_lost(const std::string& detail) {
  // A store made of several servers says which ones (detail).
  spdlog::error("{}", lease_lost_line(detail));
  hooks_.post(events::lost{});
}

void store_side::on_renew_answer(time_point sent, std::uint64_t seq, store_error e, renew_answer r) {
  views_.observe_command("renew", sent, e);
  const auto answered = mono_clock::now();
  if (e) {
    if (failsafe_) failsafe_->renew_failed(e, answered);
    post_renew_failed(e);
    return;
  }
  views_.on_renew_answered(std::chrono::duration_cast<milliseconds>(answered - sent));
  if (r == renew_answer::renewed) {
    if (failsafe_) failsafe_->written(seq, answered);
    if (auto line = timing_.renewal_answered(answered)) spdlog::debug("{}", *line);
    hooks_.post(events::renewed{sent});
    return;
  }
  // F8: the store came back without the lease (it expired meanwhile, or the
  // store lost its data) while rounds of confirmations kept the app running.
  if (failsafe_ && failsafe_->resume_instead(answered)) {
    resume(answered);
    return;
  }
  post_lost(e.detail);
}

void store_side::resume(time_point lost_at) {
  const auto list = failsafe_->next_list(hooks_.candidates());
  const auto token = failsafe_->term_token();
  spdlog::info("the store answers again without this node's lease: resuming term {}", token);
  failsafe_calls_->async_resume(
      token, list, [this, lost_at, token, seq = list.seq](store_error e, renew_answer r) {
        if (cancelled(e)) return;
        views_.observe_command("renew", lost_at, e);
        const auto answered = mono_clock::now();
        if (e) {
          failsafe_->renew_failed(e, answered);
          post_renew_failed(e);
          return;
        }
        if (r == renew_answer::renewed) {
          failsafe_->written(seq, answered);
          spdlog::info("resumed term {} in the store: the app keeps its token", token);
          hooks_.post(events::renewed{lost_at});
          return;
        }
        failsafe_->resume_lost();
        post_lost("the store holds another term than " + std::to_string(token));
      });
}

void store_side::release(const actions::release& a) {
  auto sent = mono_clock::now();
  lease_store::release_handler done = [this, sent, to = a.hand_over_to](store_error e,
                                                                        release_answer r) {
    if (cancelled(e)) return;
    views_.observe_command("release", sent, e);
    if (auto line = release_line(e, r, to)) say(*line);
    if (e) {
      hooks_.post(events::release_done{e.message()});
      return;
    }
    const auto answered = mono_clock::now();
    if (r == release_answer::released) released_at_ = answered;
    if (spdlog::should_log(spdlog::level::debug)) {
      if (auto line = timing_.release_answered(sent, answered)) spdlog::debug("{}", *line);
    }
    hooks_.post(events::release_done{});
  };
  // The cool-down that follows is registered after the release, on the
  // same connection, so the leader that comes next can see it.
  if (a.cooldown > milliseconds(0)) {
    done = [this, done = std::move(done), cooldown = a.cooldown](store_error e, release_answer r) {
      if (!cancelled(e)) store_.register_cooldown(cooldown);
      done(std::move(e), r);
    };
  }
  if (a.hand_over_to.empty()) {
    store_.async_release(std::move(done));
  } else {
    store_.async_hand_over(a.hand_over_to, a.window, std::move(done));
  }
}

}  // namespace baton
