// What the daemon tells its log (see narration.hpp).
#include "narration.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "app_messages.hpp"

namespace baton {

namespace {

// Transitions that happen on every renewal or standby retry would drown the
// log at info; they are logged at debug unless something changed.
bool is_routine(const transition& t) {
  return t.why == reason::renewing || t.why == reason::renewed || t.why == reason::retry ||
         (t.why == reason::busy && t.from == state::acquiring);
}

}  // namespace

std::string state_line(const transition& t) {
  if (t.detail.empty()) {
    return fmt::format("state {} -> {} ({})", to_string(t.from), to_string(t.to), to_string(t.why));
  }
  return fmt::format("state {} -> {} ({}: {})", to_string(t.from), to_string(t.to),
                     to_string(t.why), t.detail);
}

std::string reset_line(const store_events::reset& e, const std::string& label,
                       const std::string& election, milliseconds ttl) {
  if (!e.member.empty()) {
    return fmt::format(
        "{} master {} {} ({}): it refuses grants for one ttl ({}ms); the other masters "
        "decide meanwhile{}",
        label, e.member, e.record_missing ? "has no record of the election" : "lost its data",
        e.why, ttl.count(),
        e.record_missing ? " (`baton init-store` creates the record on every master)" : "");
  }
  if (!e.what.empty()) {
    // The store knows what it was: no guess at lost data, and no length
    // promised here (each candidate waits one ttl from when it first sees
    // the hold, so the wait it gets is its own; its transitions say it).
    return fmt::format(
        "{} ({}): the store holds acquisitions back for one ttl ({}ms) from when each "
        "candidate first sees the hold",
        e.what, e.why, ttl.count());
  }
  if (e.record_missing) {
    // A missing record cannot be told apart from lost data: say both.
    return fmt::format(
        "{} has no record of election {} ({}): holding every acquisition back for one "
        "ttl ({}ms). Either this is the election's first start on this store "
        "(`baton init-store` creates the record beforehand and skips this wait) or "
        "{} lost its data (a restart without persistence, a failover to a replica "
        "without it), and a leader may still be working",
        label, election, e.why, ttl.count(), label);
  }
  // A restart that lost the data, or a failover to a replica that may lack
  // the last writes: the store cannot tell which, and the cure is the same.
  return fmt::format(
      "{} lost its data or failed over ({}): holding every acquisition back for one ttl ({}ms)",
      label, e.why, ttl.count());
}

std::string starting_line(std::string_view version, const config& cfg,
                          const std::string& endpoint) {
  return fmt::format(
      "baton {} starting: node {} in election {} on {} (ttl {}ms, renew every {}ms, "
      "deadline {}ms)",
      version, cfg.node_id, cfg.election, endpoint, cfg.lease.ttl.count(),
      cfg.lease.renew_interval.count(), cfg.lease.renew_deadline.count());
}

std::string scrubbed_variable_line(const std::string& name) {
  return fmt::format(
      "{} removed from the environment of hooks and the child: it holds a store's secret", name);
}

std::string signal_line(const std::string& signal, const std::string& outcome) {
  return fmt::format("received {}: {}", signal, outcome);
}

std::string exit_line(int code) {
  return fmt::format("exiting with code {}", code);
}

std::string store_answers_again_line(const store_status& s) {
  return fmt::format("{} answers again at {}", s.label, s.endpoint);
}

log_line wakeups_line(const store_events::wakeups& e) {
  if (!e.why.empty()) {
    return {loudness::warn,
            fmt::format("store announcements do not reach this node: {}; until they do, a "
                        "standby tries again when the holder's lease ends rather than at its "
                        "release",
                        e.why)};
  }
  return {loudness::debug, fmt::format("store announcements {}",
                                       e.trusted ? "reach this node" : "do not reach this node")};
}

std::optional<std::string> own_reservation_line(const acquire_answer& r, const std::string& self) {
  // The store's contract says this node's acquire takes its own
  // reservation: say so, the window will pass without a leader.
  if (r.acquired() || r.reserved_for != self) return std::nullopt;
  return fmt::format(
      "the store refused the lease reserved for this node (holder '{}', {}ms "
      "left); trying again when the reservation ends",
      r.holder, r.remaining.count());
}

std::string lease_lost_line(const std::string& detail) {
  return fmt::format("lease lost: {}",
                     detail.empty() ? "the key no longer holds this node's value" : detail);
}

std::optional<log_line> release_line(const store_error& e, release_answer r,
                                     const std::string& hand_over_to) {
  if (e) {
    return log_line{loudness::warn, fmt::format("release failed ({}); the lease will expire by "
                                                "itself",
                                                e.message())};
  }
  if (r == release_answer::not_ours) {
    return log_line{loudness::info, "release: the lease was no longer ours"};
  }
  if (r == release_answer::released && !hand_over_to.empty()) {
    return log_line{
        loudness::info,
        fmt::format("switchover: the lease is released, reserved for {}", hand_over_to)};
  }
  return std::nullopt;
}

std::string start_failed_line(const std::string& detail) {
  return fmt::format("app failed to start: {}", detail);
}

std::string child_exited_line(const std::string& status) {
  return fmt::format("supervised command exited by itself: {}", status);
}

std::string awaiting_ack_line(std::uint64_t token, std::optional<time_point> wake_at,
                              time_point now) {
  return fmt::format(
      "app stopped; waiting for a socket client to acknowledge the stop of term {} "
      "(at most {}ms, until the kill deadline)",
      token, wake_at ? remaining_ms(*wake_at, now) : 0);
}

std::string acknowledged_line(std::uint64_t token, long pid, unsigned long uid) {
  return fmt::format("stop of term {} acknowledged by pid {} (uid {})", token, pid, uid);
}

std::string ack_missed_line(std::uint64_t token) {
  return fmt::format(
      "no socket client acknowledged the stop of term {} before the kill "
      "deadline: going on without it",
      token);
}

log_line kill_line(bool waiting_for_ack_only, std::uint64_t token) {
  if (waiting_for_ack_only) return {loudness::warn, ack_missed_line(token)};
  return {loudness::error, "the app did not stop in time: sending SIGKILL"};
}

std::optional<std::string> stall_line(timer_id id, milliseconds late, milliseconds renew_interval) {
  // Far past its due time means this process did not run (SIGSTOP, a VM
  // pause, swapping): the reason the machine then gives, such as
  // store-unreachable, would otherwise hide that.
  if (late < std::max(milliseconds(100), renew_interval / 2)) return std::nullopt;
  return fmt::format(
      "the {} timer fired {}ms late: the daemon did not run for that long "
      "(stopped or paused?)",
      to_string(id), late.count());
}

std::string release_heard_line(time_point now) {
  return fmt::format("handover timing: heard the release at monotonic {} ns", mono_ns(now));
}

std::string takeover_line(mono_clock::duration answered, mono_clock::duration start_requested,
                          mono_clock::duration start_returned, time_point sent) {
  return fmt::format(
      "takeover timing: acquire answered {}, app start requested {}, start() "
      "returned {} after the acquire was sent (at monotonic {} ns)",
      microseconds_text(answered), microseconds_text(start_requested),
      microseconds_text(start_returned), mono_ns(sent));
}

std::string first_renewal_line(mono_clock::duration answered) {
  return fmt::format("takeover timing: first renewal answered {} after the acquire was sent",
                     microseconds_text(answered));
}

std::string release_timing_line(mono_clock::duration sent, mono_clock::duration answered,
                                time_point app_stopped) {
  return fmt::format(
      "handover timing: release sent {} and answered {} after the app was "
      "reported stopped (at monotonic {} ns)",
      microseconds_text(sent), microseconds_text(answered), mono_ns(app_stopped));
}

std::string start_line(std::uint64_t token, bool has_app) {
  if (has_app) return fmt::format("leading with token {}: starting the app", token);
  return fmt::format("leading with token {} (no command or hooks: socket clients hear it)", token);
}

std::string stop_line(const actions::stop_app& a, bool has_app, time_point now) {
  if (!has_app) return fmt::format("stepping down ({})", to_string(a.why));
  // A voluntary stop allows child.stop_timeout, but never past what the
  // lease still covers: the machine says when that shortened it.
  return fmt::format("stopping the app ({}); SIGKILL in {}ms if it is still running{}",
                     to_string(a.why), remaining_ms(a.kill_at, now),
                     a.capped_by_lease
                         ? " (child.stop_timeout " + std::to_string(a.stop_timeout.count()) +
                               "ms, capped by the lease's validity)"
                         : std::string());
}

narrator::transition_verdict narrator::on_transition(const transition& t) {
  transition_verdict v;
  v.level = is_routine(t) ? loudness::debug : loudness::info;
  if (t.why == reason::store_error || t.why == reason::renew_failed) {
    // Say it once when the store starts failing and once when it recovers.
    v.level = t.detail == last_store_error_ ? loudness::debug : loudness::warn;
    last_store_error_ = t.detail;
  } else if (!last_store_error_.empty() &&
             (t.why == reason::busy || t.why == reason::acquired || t.why == reason::renewed)) {
    v.store_answers_again = true;
    last_store_error_.clear();
  }
  return v;
}

std::optional<std::string> narrator::who_leads(state s, const std::string& self,
                                               const std::string& leader, std::uint64_t token) {
  // A standby says it, so its log does not end on "idle -> acquiring" as if
  // it were stuck.
  if (leader == self || (s != state::idle && s != state::acquiring)) {
    standby_note_.clear();
    return std::nullopt;
  }
  // A held-back answer does not carry the holder's token: 0 means unknown.
  std::string note = leader.empty() ? "standing by: no leader known yet"
                     : token == 0
                         ? "standing by: " + leader + " leads (token not known here)"
                         : "standing by: " + leader + " leads with token " + std::to_string(token);
  if (note == standby_note_) return std::nullopt;
  standby_note_ = note;
  return note;
}

std::optional<std::string> narrator::hold_back(const acquire_answer& r) {
  const bool held_back = r.outcome == acquire_outcome::held_back;
  std::optional<std::string> line;
  if (held_back && !r.why.empty() && r.why != hold_back_said_) {
    line = fmt::format("held back: {}; trying again when it would have expired, in {}ms", r.why,
                       r.remaining.count());
  }
  hold_back_said_ = held_back ? r.why : std::string();
  return line;
}

std::optional<log_line> narrator::app_check(bool ok, const std::string& why) {
  std::optional<log_line> line;
  if (!ok && why != app_check_note_) {
    line = log_line{loudness::error,
                    fmt::format("{}: not competing for the lease until it can be executed", why)};
  } else if (ok && !app_check_note_.empty()) {
    line = log_line{loudness::info, "the app can be executed again: competing for the lease"};
  }
  app_check_note_ = ok ? std::string() : why;
  return line;
}

}  // namespace baton
