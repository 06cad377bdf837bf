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

void store_side::acquire() {
  auto sent = mono_clock::now();
  store_.async_acquire([this, sent](store_error e, acquire_answer r) {
    if (cancelled(e)) return;
    views_.observe_command("acquire", sent, e);
    if (e) {
      hooks_.post(events::acquire_failed{e.message()});
    } else if (r.acquired()) {
      timing_.acquire_won(sent, mono_clock::now());
      hooks_.post(events::acquired{sent, r.token});
      hooks_.won();
    } else {
      if (auto line = narration_.hold_back(r)) spdlog::warn("{}", *line);
      if (auto line = own_reservation_line(r, cfg_.node_id)) spdlog::warn("{}", *line);
      hooks_.post(events::busy{sent, r.holder, r.remaining, r.token, wakeups_trusted_,
                               r.outcome == acquire_outcome::held_back, r.free_in, r.why,
                               r.contenders, r.reserved_for, r.outranked_by, r.back_runner});
    }
  });
}

void store_side::renew() {
  auto sent = mono_clock::now();
  store_.async_renew([this, sent](store_error e, renew_answer r) {
    if (cancelled(e)) return;
    views_.observe_command("renew", sent, e);
    if (e) {
      hooks_.post(events::renew_failed{
          e.message(), e.code == store_errc::auth || e.code == store_errc::refused});
      return;
    }
    const auto answered = mono_clock::now();
    views_.on_renew_answered(std::chrono::duration_cast<milliseconds>(answered - sent));
    if (r == renew_answer::renewed) {
      if (auto line = timing_.renewal_answered(answered)) spdlog::debug("{}", *line);
      hooks_.post(events::renewed{sent});
    } else {
      // A store made of several servers says which ones (e.detail).
      spdlog::error("{}", lease_lost_line(e.detail));
      hooks_.post(events::lost{});
    }
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
