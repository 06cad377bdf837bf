// What the daemon tells its log about the election, as pure functions: the
// line of each transition and how loud it is, the store's recovery, the
// standby's "who leads" note, the store's resets and hold-backs, and the
// app's start and stop. Operators and tests grep these lines, so their text
// is fixed here and checked as tables (tests/unit/daemon/narration_test.cpp);
// the driver only writes them.
//
// Lines said "once per change" keep what was said last in a narrator, so
// that a store failing on every renewal, or a standby hearing the same
// leader again, writes one line and not one per attempt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "baton/election_machine.hpp"
#include "baton/lease_store.hpp"
#include "baton/time.hpp"

namespace baton {

/// How loud a line is; the driver maps it onto the logger's levels.
enum class loudness { debug, info, warn };

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
  std::optional<std::string> who_leads(state s, const std::string& self,
                                       const std::string& leader, std::uint64_t token);

  /// An acquire's answer that did not win: the warning a hold-back with a
  /// reason of its own deserves (the lease key vanished early), once per
  /// reason; nullopt otherwise (a busy answer is routine).
  std::optional<std::string> hold_back(const acquire_answer& r);

 private:
  std::string last_store_error_;  // "" while the store answers
  std::string standby_note_;      // the last "standing by" line
  std::string hold_back_said_;    // the last hold-back reason ("" = none since)
};

}  // namespace baton
