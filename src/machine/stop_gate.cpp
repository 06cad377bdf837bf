// The stop gate's bookkeeping; see stop_gate.hpp for the rule.
#include "baton/stop_gate.hpp"

#include <algorithm>

namespace baton {

void stop_gate::on_term(std::uint64_t token) {
  phase_ = phase::idle;
  token_ = token;
  told_ = false;
  told_until_ = {};
  kill_at_ = {};
  app_down_ = false;
  acked_ = false;
  deadline_passed_ = false;
}

void stop_gate::on_published(std::size_t subscribers, time_point deadline) {
  // Renewals continue during a voluntary stop; a client that only hears
  // those was never told to start.
  if (phase_ != phase::idle || subscribers == 0) return;
  told_ = true;
  told_until_ = std::max(told_until_, deadline);
}

void stop_gate::on_status_read(bool says_leading, time_point deadline) {
  if (says_leading) on_published(1, deadline);
}

void stop_gate::on_stop(time_point kill_at, std::size_t subscribers, time_point now) {
  if (phase_ == phase::stopping) {
    on_kill_at(kill_at);
    return;
  }
  phase_ = phase::stopping;
  kill_at_ = kill_at;
  app_down_ = false;
  acked_ = false;
  deadline_passed_ = kill_at <= now;
  if (subscribers > 0) told_ = true;
}

void stop_gate::on_kill_at(time_point kill_at) {
  if (phase_ == phase::stopping) kill_at_ = kill_at;
}

bool stop_gate::on_kill(time_point now) {
  if (phase_ != phase::stopping) return false;
  deadline_passed_ = true;
  return try_release(now);
}

bool stop_gate::on_app_stopped(time_point now) {
  if (phase_ != phase::stopping) return true;
  app_down_ = true;
  return try_release(now);
}

bool stop_gate::on_timer(time_point now) {
  return try_release(now);
}

stop_gate::ack_result stop_gate::on_ack(std::optional<std::uint64_t> token, time_point now) {
  ack_result r;
  if (phase_ != phase::stopping) {
    r.error = "nothing to acknowledge";
    return r;
  }
  if (token && *token != token_) {
    r.error = "token " + std::to_string(*token) + " is not the stopping term's (" +
              std::to_string(token_) + ")";
    return r;
  }
  acked_ = true;
  r.release = try_release(now);
  return r;
}

std::optional<time_point> stop_gate::wake_at() const {
  if (!waiting_for_ack_only()) return std::nullopt;
  // Killed (or due) already: only a told deadline can still be ahead.
  if (deadline_passed_) return told_until_;
  return std::max(kill_at_, told_until_);
}

bool stop_gate::waiting_for_ack_only() const {
  return phase_ == phase::stopping && app_down_ && require_ack_ && told_ && !acked_;
}

bool stop_gate::try_release(time_point now) {
  if (phase_ != phase::stopping || !app_down_) return false;
  const bool stop_due = deadline_passed_ || now >= kill_at_;
  const bool ack_done = !require_ack_ || acked_ || !told_ || (stop_due && now >= told_until_);
  if (!ack_done) return false;
  phase_ = phase::released;
  return true;
}

}  // namespace baton
