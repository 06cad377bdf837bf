// The campaign's fault schedule: a pure function of (store kind, seed,
// duration, ttl, candidates) that draws faults at random times from the
// classes the kind can meet. Replaying a seed replays the same list; the
// runner (campaign_run.hpp) resolves each fault's target (the node that leads
// at that moment, a standby, the store's master...) when it injects it.
//
// A schedule also has a text form, one fault a line, so that a shrunk
// schedule can be kept, read back and run again (`--replay FILE`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton::campaign {

/// What a fault does. Daemon-level classes apply to every kind; store and
/// member classes only where the kind has such a thing (classes_of()).
enum class fault_class {
  daemon_kill,          ///< SIGKILL the daemon alone; it starts again after `hold`
  daemon_freeze,        ///< SIGSTOP the daemon alone for `hold`
  host_freeze,          ///< SIGSTOP daemon, keeper and app for `hold`, thawed in a drawn order
  host_kill,            ///< SIGKILL daemon, keeper and app; the daemon starts again after `hold`
  sighup,               ///< SIGHUP the daemon (a reload with nothing changed)
  switchover,           ///< `baton switchover --to` a live standby
  resign,               ///< `baton resign` on the leader
  leave,                ///< SIGTERM a candidate (a clean stop); it starts again after `hold`
  join,                 ///< a new candidate joins for `hold`, then leaves with SIGTERM
  store_kill,           ///< SIGKILL the store (or its master); back after `hold` with its data
  store_restart_empty,  ///< SIGKILL the store; back after `hold` with no data
  store_restore_old,    ///< the store restarted from a backup taken at the campaign's start
  store_freeze,         ///< SIGSTOP the store (or its master) for `hold`
  member_kill,          ///< SIGKILL one member that is not the one serving the lease
  member_freeze,        ///< SIGSTOP such a member for `hold`
  partition,            ///< a candidate's link to the store goes silent for `hold` (half-open)
  slow_link,            ///< a candidate's link to the store delays each way for `hold`
  /// The store host's wall clock steps by clock_step_ms() (forward, or back
  /// first), and steps back to the true time after `hold`
  store_clock_jump,
};

/// Who a fault hits; resolved by the runner at injection time.
enum class fault_target {
  leader,    ///< the candidate whose app works now
  standby,   ///< a live candidate that does not lead (chosen by `pick`)
  newcomer,  ///< a candidate that is not running yet (join)
  store,     ///< the store, or the member that serves the lease
  member,    ///< another member of the store (chosen by `pick`)
};

struct fault {
  /// When, in ms from the campaign's start (the first app working).
  std::int64_t at_ms = 0;
  fault_class what = fault_class::sighup;
  fault_target target = fault_target::leader;
  /// How long the fault lasts, ms (0 for the instant ones).
  std::int64_t hold_ms = 0;
  /// A drawn number that picks among several possible targets, and the
  /// thaw order of a host freeze (odd: the app first). For a clock jump it
  /// is the step itself: twice its length in ms, plus 1 when the clock
  /// steps back first (clock_step_ms()), so a hand-written schedule can
  /// name the step it wants.
  std::uint32_t pick = 0;

  friend bool operator==(const fault&, const fault&) = default;
};

struct schedule_params {
  std::string kind;
  std::uint64_t seed = 0;
  std::int64_t duration_ms = 60'000;
  std::int64_t ttl_ms = 1'500;
  int candidates = 3;
  /// Servers of the store: 1, or 3 or 5 for an ensemble of zookeeper or
  /// etcd (whose faults are then the ensemble leader's and its followers').
  int members = 1;
};

/// A store-clock-jump's first step, ms: forward when positive. The second
/// step, at the fault's end, is its opposite (the clock returns to the true
/// time), so a step back first ends with a step forward.
std::int64_t clock_step_ms(const fault& f);

/// The pick that encodes a first step of `step_ms` (see fault::pick).
std::uint32_t clock_jump_pick(std::int64_t step_ms);

/// Whether clock jump `f` may end the leader's lease on the store (so the
/// leadership may move: a forcing fault): one of its two steps is forward
/// by two thirds of the ttl or more, more than is left of a lease renewed
/// a third of the ttl in.
bool clock_jump_may_end_a_lease(const fault& f, std::int64_t ttl_ms);

/// The store kinds the campaign knows.
const std::vector<std::string>& campaign_kinds();

/// The classes a kind can meet with `members` servers, in enum order; empty
/// for an unknown kind or a member count the kind cannot have.
std::vector<fault_class> classes_of(std::string_view kind, int members = 1);

/// The schedule of `p`: faults in time order, every `at_ms` in
/// [0, duration_ms). Throws std::invalid_argument for an unknown kind or
/// member count, a duration or ttl that is not positive, or fewer than 2
/// candidates.
std::vector<fault> make_schedule(const schedule_params& p);

std::string to_string(fault_class c);
std::string to_string(fault_target t);
std::optional<fault_class> parse_fault_class(std::string_view name);
std::optional<fault_target> parse_fault_target(std::string_view name);

/// One line: `<at_ms> <class> <target> <hold_ms> <pick>`.
std::string to_line(const fault& f);

/// The text form: a `# ...` header naming `p`, then one line per fault.
std::string to_text(const schedule_params& p, const std::vector<fault>& faults);

/// A schedule read back from its text form. `#` lines and blank lines are
/// skipped; a header's `kind=`, `seed=`, `duration_ms=`, `ttl_ms=`,
/// `candidates=` and `members=` fill `params` when given. Throws std::invalid_argument
/// naming the line that is wrong.
std::vector<fault> parse_schedule(std::string_view text, schedule_params* params = nullptr);

}  // namespace baton::campaign
