// What the daemon tells its log about the election (see narration.hpp).
#include "narration.hpp"

#include <spdlog/fmt/fmt.h>

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
    return fmt::format("state {} -> {} ({})", to_string(t.from), to_string(t.to),
                       to_string(t.why));
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
                     a.capped_by_lease ? " (child.stop_timeout " +
                                             std::to_string(a.stop_timeout.count()) +
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
                     : token == 0   ? "standing by: " + leader + " leads (token not known here)"
                                    : "standing by: " + leader + " leads with token " +
                                        std::to_string(token);
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

}  // namespace baton
