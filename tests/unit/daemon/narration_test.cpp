// What the daemon tells its log (src/daemon/narration.hpp): the lines
// operators and tests grep, as tables of input and the exact text, and the
// once-per-change memory as sequences.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "daemon/narration.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

constexpr time_point narrated_at{100s};

TEST(narration, state_lines_name_the_states_the_reason_and_any_detail) {
  struct row {
    transition t;
    const char* line;
  };
  const std::vector<row> rows = {
      {{state::idle, state::acquiring, reason::retry, ""}, "state idle -> acquiring (retry)"},
      {{state::acquiring, state::idle, reason::busy, "node-b"},
       "state acquiring -> idle (busy: node-b)"},
      {{state::renewing, state::pausing, reason::store_unreachable, "timeout"},
       "state renewing -> pausing (store-unreachable: timeout)"},
  };
  for (const auto& r : rows) EXPECT_EQ(state_line(r.t), r.line);
}

TEST(narration, routine_transitions_are_debug_and_a_store_error_is_said_once_and_its_end_once) {
  struct row {
    transition t;
    loudness level;
    bool answers_again;
  };
  // One narrator through the whole table: each row depends on the ones before.
  const std::vector<row> rows = {
      {{state::idle, state::acquiring, reason::retry, ""}, loudness::debug, false},
      {{state::acquiring, state::idle, reason::busy, "node-b"}, loudness::debug, false},
      {{state::idle, state::idle, reason::busy, "node-b"}, loudness::info, false},
      {{state::acquiring, state::idle, reason::store_error, "refused"}, loudness::warn, false},
      {{state::acquiring, state::idle, reason::store_error, "refused"}, loudness::debug, false},
      {{state::acquiring, state::idle, reason::store_error, "timeout"}, loudness::warn, false},
      {{state::idle, state::acquiring, reason::retry, ""}, loudness::debug, false},
      {{state::acquiring, state::working, reason::acquired, ""}, loudness::info, true},
      {{state::working, state::renewing, reason::renewing, ""}, loudness::debug, false},
      {{state::renewing, state::working, reason::renew_failed, "timeout"}, loudness::warn, false},
      {{state::renewing, state::working, reason::renew_failed, "timeout"}, loudness::debug, false},
      {{state::renewing, state::working, reason::renewed, ""}, loudness::debug, true},
      {{state::renewing, state::working, reason::renewed, ""}, loudness::debug, false},
      {{state::working, state::pausing, reason::shutdown, "SIGTERM"}, loudness::info, false},
  };
  narrator n;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto v = n.on_transition(rows[i].t);
    EXPECT_EQ(v.level, rows[i].level) << "row " << i;
    EXPECT_EQ(v.store_answers_again, rows[i].answers_again) << "row " << i;
  }
}

TEST(narration, a_standby_says_who_leads_once_per_change) {
  struct row {
    state s;
    std::string leader;
    std::uint64_t token;
    std::optional<std::string> line;
  };
  const std::vector<row> rows = {
      {state::idle, "", 0, "standing by: no leader known yet"},
      {state::acquiring, "", 0, std::nullopt},
      {state::idle, "node-b", 0, "standing by: node-b leads (token not known here)"},
      {state::idle, "node-b", 7, "standing by: node-b leads with token 7"},
      {state::acquiring, "node-b", 7, std::nullopt},
      // Leading, or any state but idle and acquiring, forgets the note.
      {state::working, "node-a", 8, std::nullopt},
      {state::idle, "node-b", 7, "standing by: node-b leads with token 7"},
      {state::idle, "node-a", 9, std::nullopt},
      {state::idle, "node-b", 7, "standing by: node-b leads with token 7"},
  };
  narrator n;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(n.who_leads(rows[i].s, "node-a", rows[i].leader, rows[i].token), rows[i].line)
        << "row " << i;
  }
}

TEST(narration, a_hold_back_with_a_reason_of_its_own_is_said_once_per_reason) {
  auto held_back = [](std::string why) {
    acquire_answer a;
    a.outcome = acquire_outcome::held_back;
    a.why = std::move(why);
    a.remaining = 900ms;
    return a;
  };
  acquire_answer busy;
  busy.outcome = acquire_outcome::held;
  const std::string vanished = "the lease key vanished before its expiry";
  const std::string said = "held back: " + vanished + "; trying again when it would have expired, "
                           "in 900ms";
  struct row {
    acquire_answer answer;
    std::optional<std::string> line;
  };
  const std::vector<row> rows = {
      {held_back(""), std::nullopt},  // a reset: its own event says it
      {held_back(vanished), said},
      {held_back(vanished), std::nullopt},
      {busy, std::nullopt},
      {held_back(vanished), said},
  };
  narrator n;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(n.hold_back(rows[i].answer), rows[i].line) << "row " << i;
  }
}

TEST(narration, resets_say_what_the_store_knows_of_them) {
  struct row {
    store_events::reset e;
    const char* line;
  };
  const std::vector<row> rows = {
      {{"run_id changed", false, "", ""},
       "Redis lost its data or failed over (run_id changed): holding every acquisition back for "
       "one ttl (600ms)"},
      {{"no record", true, "", ""},
       "Redis has no record of election jobs (no record): holding every acquisition back for one "
       "ttl (600ms). Either this is the election's first start on this store (`baton init-store` "
       "creates the record beforehand and skips this wait) or Redis lost its data (a restart "
       "without persistence, a failover to a replica without it), and a leader may still be "
       "working"},
      {{"run_id changed", false, "redis://m2:6379", ""},
       "Redis master redis://m2:6379 lost its data (run_id changed): it refuses grants for one "
       "ttl (600ms); the other masters decide meanwhile"},
      {{"no record", true, "redis://m2:6379", ""},
       "Redis master redis://m2:6379 has no record of the election (no record): it refuses "
       "grants for one ttl (600ms); the other masters decide meanwhile (`baton init-store` "
       "creates the record on every master)"},
      {{"session 0x1 expired", false, "", "the ensemble expired this node's session"},
       "the ensemble expired this node's session (session 0x1 expired): the store holds "
       "acquisitions back for one ttl (600ms) from when each candidate first sees the hold"},
  };
  for (const auto& r : rows) EXPECT_EQ(reset_line(r.e, "Redis", "jobs", 600ms), r.line);
}

TEST(narration, start_and_stop_lines_say_what_there_is_to_start_and_when_it_is_killed) {
  EXPECT_EQ(start_line(12, true), "leading with token 12: starting the app");
  EXPECT_EQ(start_line(12, false),
            "leading with token 12 (no command or hooks: socket clients hear it)");
  actions::stop_app stop{reason::resigned, narrated_at + 1500ms, 12, true, false, 10000ms};
  EXPECT_EQ(stop_line(stop, true, narrated_at),
            "stopping the app (resigned); SIGKILL in 1500ms if it is still running");
  stop.capped_by_lease = true;
  EXPECT_EQ(stop_line(stop, true, narrated_at),
            "stopping the app (resigned); SIGKILL in 1500ms if it is still running "
            "(child.stop_timeout 10000ms, capped by the lease's validity)");
  EXPECT_EQ(stop_line(stop, false, narrated_at), "stepping down (resigned)");
}

}  // namespace
}  // namespace baton
