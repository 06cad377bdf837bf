// What the daemon tells its log, as pure functions: the line of each
// transition and how loud it is, start-up and exit, the store's answers,
// events and recovery, the standby's "who leads" note, the store's resets and
// hold-backs, the app's start, stop, kill and acknowledgements, a stalled
// timer, and the debug-level timing lines of a handover. Operators and tests
// grep these lines, so their text is fixed here and checked as tables
// (tests/unit/daemon/narration_test.cpp); the driver and its rooms only write
// them (say.hpp).
//
// Lines said "once per change" keep what was said last in a narrator, so
// that a store failing on every renewal, or a standby hearing the same
// leader again, writes one line and not one per attempt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "baton/config.hpp"
#include "baton/election_machine.hpp"
#include "baton/lease_store.hpp"
#include "baton/time.hpp"

namespace baton {

/// How loud a line is; say.hpp maps it onto the logger's levels.
enum class loudness { debug, info, warn, error };

/// A line whose loudness depends on what it says.
struct log_line {
  loudness level = loudness::info;
  std::string text;
  bool operator==(const log_line&) const = default;
};

/// The transition's line without its level: "state A -> B (why)", or
/// "state A -> B (why: detail)".
std::string state_line(const transition& t);

/// A reset the store reported (store_events::reset), in one warning for the
/// operator. `label` names the store ("Redis"), `ttl` is lease.ttl.
std::string reset_line(const store_events::reset& e, const std::string& label,
                       const std::string& election, milliseconds ttl);

/// The leader's first line of a term: "leading with token N: ..." with what
/// it starts (`has_app`: a command or a hook).
std::string start_line(std::uint64_t token, bool has_app);

/// The first line of a stop (actions::stop_app) at `now`: the SIGKILL
/// deadline when there is an app to stop, else "stepping down".
std::string stop_line(const actions::stop_app& a, bool has_app, time_point now);

// --- start-up and exit ---------------------------------------------------

/// The daemon's first line: `version`, node, election, the store's
/// `endpoint` and the lease's timing.
std::string starting_line(std::string_view version, const config& cfg, const std::string& endpoint);

/// A variable removed from the environment of hooks and the child because
/// the store's client library would read a secret from it.
std::string scrubbed_variable_line(const std::string& name);

/// A SIGTERM or SIGINT (`signal`) and what it does now
/// (election_machine::shutdown_outcome()).
std::string signal_line(const std::string& signal, const std::string& outcome);

/// The daemon's last line.
std::string exit_line(int code);

// --- the store -------------------------------------------------------------

/// The store answers again after errors (transition_verdict's
/// store_answers_again): "<label> answers again at <endpoint>".
std::string store_answers_again_line(const store_status& s);

/// The store's word on whether its announcements reach this node: a
/// warning with the reason when they do not, else a debug line.
log_line wakeups_line(const store_events::wakeups& e);

/// An acquire that did not win because the store kept this node's own
/// reservation from it (`r.reserved_for` is `self`): the warning; nullopt
/// for any other answer.
std::optional<std::string> own_reservation_line(const acquire_answer& r, const std::string& self);

/// A renewal answered "not ours"; `detail` names the servers of a store made
/// of several ("" = the key no longer holds this node's value).
std::string lease_lost_line(const std::string& detail);

/// A release's answer (`e` set when it failed; `hand_over_to` the
/// switchover's target, "" = none): the line it calls for, nullopt when a
/// plain release succeeded.
std::optional<log_line> release_line(const store_error& e, release_answer r,
                                     const std::string& hand_over_to);

// --- the app and its stop ------------------------------------------------

/// The app controller's start failed (`detail` says which part and why).
std::string start_failed_line(const std::string& detail);

/// The supervised command exited by itself (`status`: exit_status::describe()).
std::string child_exited_line(const std::string& status);

/// The app stopped, and the stop gate waits for a socket client's
/// acknowledgement of term `token` until `wake_at` (nullopt = no deadline).
std::string awaiting_ack_line(std::uint64_t token, std::optional<time_point> wake_at,
                              time_point now);

/// A socket client (process `pid`, user `uid`) acknowledged the stop of
/// term `token`.
std::string acknowledged_line(std::uint64_t token, long pid, unsigned long uid);

/// The kill deadline passed with no acknowledgement of term `token`.
std::string ack_missed_line(std::uint64_t token);

/// The kill deadline of term `token`: a warning when the app has stopped and
/// only an acknowledgement was missing, else the SIGKILL's error.
log_line kill_line(bool waiting_for_ack_only, std::uint64_t token);

// --- timers and timing -----------------------------------------------------

/// Timer `id` fired `late` past its due time: the warning when that means the
/// process did not run (at least 100 ms and half the renew interval), else
/// nullopt.
std::optional<std::string> stall_line(timer_id id, milliseconds late, milliseconds renew_interval);

/// The debug-level timing lines (handover_timing.hpp). A release
/// announcement was heard at `now`:
std::string release_heard_line(time_point now);
/// The new leader's start, each step counted from when its won acquire was
/// sent (at `sent`):
std::string takeover_line(mono_clock::duration answered, mono_clock::duration start_requested,
                          mono_clock::duration start_returned, time_point sent);
/// Its first renewal's answer, from the same moment:
std::string first_renewal_line(mono_clock::duration answered);
/// The old leader's release, counted from when its app was reported
/// stopped (at `app_stopped`):
std::string release_timing_line(mono_clock::duration sent, mono_clock::duration answered,
                                time_point app_stopped);

/// Keeps what was said last, for the lines said once per change.
class narrator {
 public:
  /// How loud the line of `t` is, and whether the store's recovery is to
  /// be said before it ("<label> answers again at <endpoint>"). Transitions
  /// of every renewal or standby retry are routine (debug); a store error is
  /// a warning the first time and debug while it repeats word for word.
  struct transition_verdict {
    loudness level = loudness::info;
    bool store_answers_again = false;
  };
  transition_verdict on_transition(const transition& t);

  /// A standby's note on who leads (`leader`, "" = unknown; `token` as the
  /// machine knows it, 0 = unknown) in state `s`: the line to say, once per
  /// change; nullopt when there is nothing new, or this node is no standby
  /// (it leads, or is neither idle nor acquiring).
  std::optional<std::string> who_leads(state s, const std::string& self, const std::string& leader,
                                       std::uint64_t token);

  /// An acquire's answer that did not win: the warning a hold-back with a
  /// reason of its own deserves (the lease key vanished early), once per
  /// reason; nullopt otherwise (a busy answer is routine).
  std::optional<std::string> hold_back(const acquire_answer& r);

  /// What actions::check_app found (`ok`, or `why` the app cannot be
  /// executed): an error when it cannot for a new reason, an info line when
  /// it can again, nullopt while nothing changed.
  std::optional<log_line> app_check(bool ok, const std::string& why);

 private:
  std::string last_store_error_;  // "" while the store answers
  std::string standby_note_;      // the last "standing by" line
  std::string hold_back_said_;    // the last hold-back reason ("" = none since)
  std::string app_check_note_;    // why the app cannot be executed ("" = it can)
};

}  // namespace baton
