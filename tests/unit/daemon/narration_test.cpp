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
  const std::string said = "held back: " + vanished +
                           "; trying again when it would have expired, "
                           "in 900ms";
  struct row {
    acquire_answer answer;
    std::optional<std::string> line;
  };
  const std::vector<row> rows = {
      {held_back(""), std::nullopt},  // a reset: its own event says it
      {held_back(vanished), said},   {held_back(vanished), std::nullopt},
      {busy, std::nullopt},          {held_back(vanished), said},
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

TEST(narration, start_up_signal_and_exit_lines_name_what_an_operator_looks_for) {
  config c;
  c.election = "jobs";
  c.node_id = "node-a";
  c.lease.ttl = 600ms;
  c.lease.renew_interval = 200ms;
  c.lease.renew_deadline = 400ms;
  EXPECT_EQ(starting_line("1.2.3", c, "redis://127.0.0.1:6379"),
            "baton 1.2.3 starting: node node-a in election jobs on redis://127.0.0.1:6379 (ttl "
            "600ms, renew every 200ms, deadline 400ms)");
  EXPECT_EQ(scrubbed_variable_line("PGPASSWORD"),
            "PGPASSWORD removed from the environment of hooks and the child: it holds a store's "
            "secret");
  EXPECT_EQ(signal_line("SIGTERM", "shutting down: stopping the app, then releasing the lease"),
            "received SIGTERM: shutting down: stopping the app, then releasing the lease");
  EXPECT_EQ(exit_line(143), "exiting with code 143");
}

TEST(narration, the_store_lines_say_its_recovery_its_announcements_and_a_lost_lease) {
  store_status s;
  s.label = "PostgreSQL";
  s.endpoint = "db:5432";
  EXPECT_EQ(store_answers_again_line(s), "PostgreSQL answers again at db:5432");

  struct row {
    store_events::wakeups e;
    log_line line;
  };
  const std::vector<row> rows = {
      {{true, ""}, {loudness::debug, "store announcements reach this node"}},
      {{false, ""}, {loudness::debug, "store announcements do not reach this node"}},
      {{false, "SUBSCRIBE refused"},
       {loudness::warn,
        "store announcements do not reach this node: SUBSCRIBE refused; until they do, a "
        "standby tries again when the holder's lease ends rather than at its release"}},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(wakeups_line(rows[i].e), rows[i].line) << "row " << i;
  }

  EXPECT_EQ(lease_lost_line(""), "lease lost: the key no longer holds this node's value");
  EXPECT_EQ(lease_lost_line("2 of 3 masters hold another value"),
            "lease lost: 2 of 3 masters hold another value");
}

TEST(narration, only_a_refusal_of_this_nodes_own_reservation_is_a_warning) {
  auto held_for = [](std::string reserved_for) {
    acquire_answer a;
    a.outcome = acquire_outcome::held;
    a.holder = "node-b";
    a.remaining = 800ms;
    a.reserved_for = std::move(reserved_for);
    return a;
  };
  EXPECT_EQ(own_reservation_line(held_for("node-a"), "node-a"),
            "the store refused the lease reserved for this node (holder 'node-b', 800ms left); "
            "trying again when the reservation ends");
  EXPECT_EQ(own_reservation_line(held_for("node-c"), "node-a"), std::nullopt);
  EXPECT_EQ(own_reservation_line(held_for(""), "node-a"), std::nullopt);
}

TEST(narration, a_release_says_a_failure_a_lease_no_longer_ours_and_a_reservation) {
  const store_error ok;
  const store_error timed_out{make_error_code(std::errc::timed_out), "no answer in 100ms"};
  struct row {
    store_error e;
    release_answer r;
    std::string to;
    std::optional<log_line> line;
  };
  const std::vector<row> rows = {
      {ok, release_answer::released, "", std::nullopt},
      {ok, release_answer::released, "node-b",
       log_line{loudness::info, "switchover: the lease is released, reserved for node-b"}},
      {ok, release_answer::not_ours, "",
       log_line{loudness::info, "release: the lease was no longer ours"}},
      {ok, release_answer::not_ours, "node-b",
       log_line{loudness::info, "release: the lease was no longer ours"}},
      {timed_out, release_answer::released, "node-b",
       log_line{loudness::warn,
                "release failed (no answer in 100ms); the lease will expire by itself"}},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(release_line(rows[i].e, rows[i].r, rows[i].to), rows[i].line) << "row " << i;
  }
}

TEST(narration, the_app_lines_say_its_failures_and_the_acknowledgements_of_its_stop) {
  EXPECT_EQ(start_failed_line("on_start exited with 3"),
            "app failed to start: on_start exited with 3");
  EXPECT_EQ(child_exited_line("exited 1"), "supervised command exited by itself: exited 1");
  EXPECT_EQ(awaiting_ack_line(12, narrated_at + 2500ms, narrated_at),
            "app stopped; waiting for a socket client to acknowledge the stop of term 12 (at most "
            "2500ms, until the kill deadline)");
  EXPECT_EQ(awaiting_ack_line(12, std::nullopt, narrated_at),
            "app stopped; waiting for a socket client to acknowledge the stop of term 12 (at most "
            "0ms, until the kill deadline)");
  EXPECT_EQ(acknowledged_line(12, 4321, 1000),
            "stop of term 12 acknowledged by pid 4321 (uid 1000)");
  const std::string missed =
      "no socket client acknowledged the stop of term 12 before the kill deadline: going on "
      "without it";
  EXPECT_EQ(ack_missed_line(12), missed);
  EXPECT_EQ(kill_line(true, 12), (log_line{loudness::warn, missed}));
  EXPECT_EQ(kill_line(false, 12),
            (log_line{loudness::error, "the app did not stop in time: sending SIGKILL"}));
}

TEST(narration, an_app_that_cannot_be_executed_is_said_once_per_reason_and_once_when_it_can) {
  struct row {
    bool ok;
    std::string why;
    std::optional<log_line> line;
  };
  const std::string missing = "child.command /opt/app/run: no such file";
  const std::string denied = "child.command /opt/app/run: permission denied";
  const std::vector<row> rows = {
      {true, "", std::nullopt},
      {false, missing,
       log_line{loudness::error,
                missing + ": not competing for the lease until it can be executed"}},
      {false, missing, std::nullopt},
      {false, denied,
       log_line{loudness::error,
                denied + ": not competing for the lease until it can be executed"}},
      {true, "",
       log_line{loudness::info, "the app can be executed again: competing for the lease"}},
      {true, "", std::nullopt},
  };
  narrator n;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(n.app_check(rows[i].ok, rows[i].why), rows[i].line) << "row " << i;
  }
}

TEST(narration, a_timer_far_past_its_due_time_says_the_daemon_did_not_run) {
  struct row {
    milliseconds late;
    milliseconds renew_interval;
    std::optional<std::string> line;
  };
  const std::vector<row> rows = {
      {99ms, 100ms, std::nullopt},  // at least 100 ms late
      {100ms, 100ms,
       "the wake timer fired 100ms late: the daemon did not run for that long (stopped or "
       "paused?)"},
      {1499ms, 3000ms, std::nullopt},  // and at least half the renew interval
      {1500ms, 3000ms,
       "the wake timer fired 1500ms late: the daemon did not run for that long (stopped or "
       "paused?)"},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(stall_line(timer_id::wake, rows[i].late, rows[i].renew_interval), rows[i].line)
        << "row " << i;
  }
  EXPECT_EQ(stall_line(timer_id::deadline, 2s, 200ms),
            "the deadline timer fired 2000ms late: the daemon did not run for that long (stopped "
            "or paused?)");
}

TEST(narration, timing_lines_count_in_microseconds_and_place_moments_on_the_monotonic_clock) {
  EXPECT_EQ(release_heard_line(narrated_at),
            "handover timing: heard the release at monotonic 100000000000 ns");
  EXPECT_EQ(takeover_line(1500us, 1700us, 2250us, narrated_at),
            "takeover timing: acquire answered 1500us, app start requested 1700us, start() "
            "returned 2250us after the acquire was sent (at monotonic 100000000000 ns)");
  EXPECT_EQ(first_renewal_line(200ms),
            "takeover timing: first renewal answered 200000us after the acquire was sent");
  EXPECT_EQ(release_timing_line(40us, 900us, narrated_at),
            "handover timing: release sent 40us and answered 900us after the app was reported "
            "stopped (at monotonic 100000000000 ns)");
}

}  // namespace
}  // namespace baton
