// The election as a pure state machine: step(event, now) returns the next
// state and the actions to carry out. It performs no I/O, reads no clock and
// draws no system randomness (jitter comes from a seeded generator in its own
// state), so every path is unit-tested by feeding events with a fake clock.
//
// States: idle (standby, waiting to try), acquiring (acquire in flight),
// working (leader, app running or starting), renewing (leader, renewal in
// flight), pausing (the app is being stopped), releasing (release in flight),
// stopped (terminal, after shutdown).
//
// Safety rules it enforces:
// - Validity is counted from when the successful command was sent:
//   valid_until = sent + ttl - drift.
// - Renewal failures are retried until renew_deadline after the last success;
//   then the app is told to stop, and killed at valid_until at the latest.
// - The lease is released only after the app has stopped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "baton/lease_drift.hpp"
#include "baton/one_term.hpp"
#include "baton/time.hpp"

namespace baton {

enum class state { idle, acquiring, working, renewing, pausing, releasing, stopped };

/// Why a transition happened; also what the app is told (BATON_REASON).
enum class reason {
  started,            ///< the daemon started
  retry,              ///< a standby's timer came due
  acquired,           ///< this node took the lease
  busy,               ///< another node holds the lease
  store_error,        ///< a store call failed (connection, timeout, error reply);
                      ///< "store-error" (was "redis-error")
  renewing,           ///< a renewal came due
  renewed,            ///< a renewal succeeded
  renew_failed,       ///< a renewal failed; retrying before the deadline
  lost,               ///< the lease is no longer ours
  store_unreachable,  ///< no successful renewal within renew_deadline: the store did not
                      ///< answer ("store-unreachable", was "redis-unreachable")
  store_refused,      ///< no successful renewal within renew_deadline, the last attempt
                      ///< refused (authentication, ACL): the store answered, but not yes
  shutdown,           ///< SIGTERM or SIGINT
  child_exited,       ///< the supervised command exited by itself
  start_failed,       ///< on_start failed or the command could not start
  app_stopped,        ///< the app finished stopping
  released,           ///< our release completed
  peer_released,      ///< another node announced it released the lease
  release_failed,     ///< our release failed: the lease expires by itself
  late_reply,         ///< the acquire reply came after the lease would be due for renewal
  resigned,           ///< `baton resign`: step down and stay out for the cool-down
  lease_expired,      ///< the lease ran out before the daemon could act: it did not run
                      ///< (stopped, paused, starved) past the renew deadline
  switchover,         ///< `baton switchover --to NODE`: step down, the lease reserved
                      ///< for NODE, and stay out for the cool-down
  preempted,          ///< as switchover, to a live candidate of a higher priority
};

/// Lease timing, validated by the config loader:
/// renew_interval < renew_deadline < ttl - drift.
struct lease_timing {
  milliseconds ttl{10000};
  milliseconds renew_interval{3333};
  milliseconds renew_deadline{6666};
  milliseconds retry_interval{1000};
  /// SIGTERM-to-SIGKILL time of a voluntary stop; capped by the lease validity.
  milliseconds stop_timeout{10000};
  double drift_factor = default_drift_factor;
  /// Exit (with the child's status) instead of competing again when the
  /// supervised command exits by itself.
  bool exit_when_app_exits = false;
  /// After a resign, how long this node makes no acquire attempt, so that
  /// another node takes over.
  milliseconds resign_cooldown{10000};
  /// `baton once` (baton/one_term.hpp): the first term that starts the app
  /// is the last. When it ends, however it ends, the lease is released as
  /// after any stop and the process exits (the command's status, or a code
  /// of one_term_exit) instead of competing again. Before that term the node
  /// competes for at most `one_term_wait` from its start, then exits without
  /// running the app (0 = one attempt). The back-off after a failing app,
  /// the resign cool-down and child.on_exit play no part.
  bool one_term = false;
  milliseconds one_term_wait{0};

  /// What clock-rate drift may cost: lease_drift(ttl, drift_factor).
  milliseconds drift() const;
  /// ttl - drift: how long after sending a successful command the lease is ours.
  milliseconds validity() const;
};

/// The machine's timers. `gate` is the stop gate's (baton/stop_gate.hpp):
/// armed when the gate holds a stop's release back (events::stop_gate_holds)
/// and cancelled when app_stopped ends the stop.
enum class timer_id { wake, deadline, kill, gate };

namespace events {
struct start {};
struct timer {
  timer_id id;
};
struct acquired {
  time_point sent;  ///< when the acquire command was sent
  std::uint64_t token = 0;
};
struct busy {
  time_point sent;
  std::string holder;
  milliseconds holder_ttl{-1};  ///< negative when unknown
  std::uint64_t token = 0;
  bool watching_releases = false;  ///< a release announcement would wake us
  /// The store holds every acquisition back after a reset (lost data, a
  /// failover); `holder` is then a node whose lease predates the reset, or "".
  bool held_back = false;
  /// When the store can tell to the microsecond (Redis): the time from its
  /// answer until the holder's lease is free. Negative when unknown; then
  /// `holder_ttl` (whole milliseconds, rounded down by the store) is used.
  std::chrono::microseconds free_in{-1};
  /// Held back for another reason than a reset, in words (the lease key
  /// vanished before its expiry); "" = a reset.
  std::string held_back_why;
  /// Candidates the store sees listening for this election, the holder
  /// included; negative when the store cannot tell (acquire_answer).
  int contenders = -1;
  /// The free lease is reserved for this node by a switchover until
  /// `holder_ttl` has passed; "" = no reservation.
  std::string reserved_for;
  /// Live candidates, the holder aside, of a higher priority than this
  /// node's (acquire_answer::outranked_by); negative when unknown.
  int outranked_by = -1;
  /// A large election's back runner (acquire_answer::back_runner): it
  /// tries one step after an expiry or a release, behind the front runners.
  bool back_runner = false;
};
struct acquire_failed {
  std::string error;
  /// lease.failsafe peers: this node keeps a promise (docs/safety.md, F9).
  /// Its registration, which carries the promise, must reach a store that
  /// came back empty within retry_interval: it retries at that pace, not
  /// with the error back-off.
  bool keeps_promise = false;
};
struct renewed {
  time_point sent;
};
struct lost {};
struct renew_failed {
  std::string error;
  /// The store refused the call (authentication, permission) rather than
  /// failing to answer: said as the reason if the deadline passes.
  bool refused = false;
};
struct release_done {
  std::string error;  ///< "" when the release succeeded
};
struct app_started {};
struct app_start_failed {
  std::string detail;
  /// The command or a hook cannot be executed at all (missing, not
  /// executable): competing again is pointless until it can.
  bool cannot_execute = false;
};
/// The answer to actions::check_app.
struct app_checked {
  bool executable = false;
  std::string detail;  ///< why not, when not
};
struct app_exited {
  int exit_code = 0;  ///< shell-style: code, or 128 + signal
  std::string detail;
};
struct app_stopped {};
struct shutdown {
  std::string signal;
};
struct peer_released {};
/// The operator asked this node to step down (`baton resign`), or to hand
/// over to node `to` (`baton switchover`): the lease is then released
/// reserved for `to` for `window`. Only a leader (working or renewing) acts
/// on it; see can_resign().
struct resign {
  std::string to;  ///< "" = a plain resign
  milliseconds window{0};
  /// The leader hands over because `to` has a higher priority (said as
  /// reason::preempted), not because an operator asked.
  bool preempted = false;
};
/// A new term was announced on the events channel (any node's, ours too).
struct peer_acquired {
  std::string holder;
  std::uint64_t token = 0;
};
/// The stop gate holds the release of the stop under way back (the app is
/// down or going, an acknowledgement is missing): look at it again at
/// `look_again_at` (the gate's wake_at(); nullopt = it waits for nothing
/// timed, so no look is due). Sent by the driver after each of the gate's
/// inputs that did not let app_stopped through; the machine arms or cancels
/// timer_id::gate while pausing.
struct stop_gate_holds {
  std::optional<time_point> look_again_at;
};
/// lease.failsafe peers: a round of confirmations counted (every peer the
/// leader lists confirmed the request it sent at `sent`), so its app may run
/// until `valid_until` (failsafe::confirmation_rounds::deadline()). As a
/// renewal sent at `sent` would, it moves the lease's validity and the renew
/// deadline (`sent + renew_deadline`); refused once the validity the machine
/// holds has passed: a term over is over for good.
struct confirmed {
  time_point sent;
  time_point valid_until;
};
/// Whether this node may take the lease from now on (`baton drain` and
/// `undrain`; never_lead: false from the start). A node that may not makes
/// no attempts: it registers as a standby (actions::look) at
/// every wake-up instead. Allowed again while idle, it tries at once. A
/// leader that may no longer lead is stepped down by the daemon (a
/// switchover to its successor), not by this event.
struct standing {
  bool may_lead = true;
};
}  // namespace events

using event =
    std::variant<events::start, events::timer, events::acquired, events::busy,
                 events::acquire_failed, events::renewed, events::lost, events::renew_failed,
                 events::release_done, events::app_started, events::app_start_failed,
                 events::app_exited, events::app_stopped, events::shutdown, events::peer_released,
                 events::resign, events::peer_acquired, events::app_checked,
                 events::stop_gate_holds, events::confirmed, events::standing>;

namespace actions {
struct acquire {};
struct renew {};
/// Give the lease back; to `hand_over_to` alone for `window` when set (a
/// switchover: lease_store::async_hand_over). A `cooldown` above 0 follows
/// it (a resign, a switchover, a preemption): registered with the store
/// (lease_store::register_cooldown) so that no leader hands over to this
/// node meanwhile.
struct release {
  std::string hand_over_to;
  milliseconds window{0};
  milliseconds cooldown{0};
};
struct start_app {
  reason why;
  std::uint64_t token;
  time_point valid_until;
};
struct stop_app {
  reason why;
  time_point kill_at;   ///< SIGKILL at this moment if still running
  std::uint64_t token;  ///< the fencing token of the term being stopped
  /// This node chose to stop (a signal, a resign, the app's own failure) and
  /// keeps renewing the lease until the app is down; false when the lease is
  /// lost or may lapse, and the app must be gone by its validity.
  bool voluntary = false;
  /// A voluntary stop whose child.stop_timeout was cut short by the lease's
  /// validity: kill_at is valid_until, not now + stop_timeout.
  bool capped_by_lease = false;
  /// The child.stop_timeout this stop was given (fixed when it began).
  milliseconds stop_timeout{};
};
struct kill_app {};
/// The stop under way must be over by `kill_at` (the kill timer is armed for
/// it): the stop gate counts a missing acknowledgement from then. Emitted with
/// every arm_timer of timer_id::kill, the first stop's and every move.
struct stop_deadline {
  time_point kill_at;
};
/// The stop gate's timer fired: ask the gate (stop_gate::on_timer) whether
/// the release may go now, and answer with events::app_stopped if so, else
/// with events::stop_gate_holds.
struct ask_stop_gate {};
/// Find out whether the command and hooks can be executed now (answered by
/// events::app_checked). Asked instead of an acquire while they could not.
struct check_app {};
/// Register this node without an attempt and look who holds the lease
/// (lease_store::async_look; the holder comes back as events::peer_acquired):
/// what a node that may not lead does instead of acquiring.
struct look {};
struct arm_timer {
  timer_id id;
  time_point at;
};
struct cancel_timer {
  timer_id id;
};
/// The leader's lease was extended; apps may hold this deadline themselves.
struct lease_extended {
  time_point valid_until;
  /// True while the app is being stopped: the lease is kept only so that no
  /// one else starts before it has; it is not a reason to keep working.
  bool stopping = false;
};
struct exit_process {
  int code;
};
}  // namespace actions

using action =
    std::variant<actions::acquire, actions::renew, actions::release, actions::start_app,
                 actions::stop_app, actions::kill_app, actions::arm_timer, actions::cancel_timer,
                 actions::lease_extended, actions::exit_process, actions::check_app,
                 actions::stop_deadline, actions::ask_stop_gate, actions::look>;

struct transition {
  state from;
  state to;
  reason why;
  std::string detail;  ///< error text or holder, for the log line
};

struct step_result {
  std::vector<action> actions;
  std::optional<transition> change;
};

class election_machine {
 public:
  /// `seed` drives the jitter; a fixed seed makes a run reproducible.
  election_machine(lease_timing timing, std::uint64_t seed);

  /// Feed one event observed at `now`; returns what to do.
  step_result step(const event& e, time_point now);

  state current() const { return state_; }
  time_point since() const { return since_; }
  const lease_timing& timing() const { return timing_; }
  /// SIGHUP reload: new stop_timeout and resign_cooldown, used from the next
  /// stop on (a stop under way keeps its kill deadline). The lease timing
  /// itself never changes at runtime: all candidates must agree on it.
  void set_stop_timing(milliseconds stop_timeout, milliseconds resign_cooldown) {
    timing_.stop_timeout = stop_timeout;
    timing_.resign_cooldown = resign_cooldown;
  }

  /// True while this node believes the lease key is its own.
  bool holds_lease() const { return holding_; }
  /// True while this node acts as the leader: it holds the lease and its
  /// app works (working or renewing), whether or not the lease is still
  /// valid. A node that believes this past its renew deadline is wedged.
  bool believes_leading() const {
    return holding_ && (state_ == state::working || state_ == state::renewing);
  }
  /// The one definition of "this node leads at `now`": it believes it leads
  /// and the lease is still valid. What /leader, is_leader and metrics say.
  bool leads(time_point now) const { return believes_leading() && valid_until_ > now; }
  /// The leader as this node knows it at `now`: `self` while it holds a
  /// valid lease (even while stopping its app), else the holder its last
  /// attempt or an announcement named ("" = unknown).
  std::string known_leader(const std::string& self, time_point now) const {
    if (holding_ && valid_until_ > now) return self;
    return holder_;
  }
  /// End of our lease's validity (meaningful while holds_lease()).
  time_point valid_until() const { return valid_until_; }
  /// While pausing: when the app is (or was) SIGKILLed if it has not stopped
  /// by then (renewals during a voluntary stop may move it, never past the
  /// stop's stop_timeout). Meaningless in the other states.
  time_point kill_deadline() const { return kill_at_; }
  /// The stop under way, or the last one, sent SIGKILL (kill_app): the app
  /// outlived its kill deadline, or a second signal asked for the kill.
  bool stop_killed() const { return killed_; }
  /// When the last successful acquire or renew was sent, or the last
  /// counted round of confirmations (events::confirmed).
  time_point last_renewal() const { return last_ok_; }
  /// When this node's current or latest term began (the acquire succeeded);
  /// renewals do not move it.
  time_point term_started() const { return term_started_; }
  /// Our fencing token while leading; the observed holder's otherwise.
  std::uint64_t token() const { return holding_ ? token_ : holder_token_; }
  /// Fencing token of this node's current or most recent term (0 before any):
  /// what its app was told, even after the lease was lost.
  std::uint64_t term_token() const { return token_; }
  /// Node id of the holder seen by the last failed acquire ("" = unknown/none).
  const std::string& observed_holder() const { return holder_; }
  /// True while this node stays out of the election because its command or
  /// a hook cannot be executed.
  bool app_blocked() const { return app_blocked_; }
  /// True while this node stays out of the election after a resign (its
  /// cool-down runs until held_back_until()); false once the cool-down is
  /// over, or when the hold-back has another cause.
  /// A switchover's reservation as this standby's last attempt met it: the
  /// node the lease waits for ("" = none, or over by `now`).
  std::string reserved_for(time_point now) const {
    return reserved_until_ > now ? reserved_for_ : std::string();
  }
  /// While stepping down for a switchover or a preemption: the node it
  /// hands over to ("" = none).
  const std::string& handing_over_to() const { return hand_over_to_; }
  bool cooling_down_after_resign(time_point now) const {
    return resign_cooldown_ && backoff_until_ > now;
  }
  /// What a shutdown signal received now leads to, for its log line: the
  /// machine's own answer, so that the line never predicts wrongly.
  const char* shutdown_outcome() const;
  /// A one-term daemon (lease_timing::one_term): how it ended, once it has
  /// (actions::exit_process); none before, and always for a daemon that
  /// competes on.
  one_term_end one_term_ending() const { return one_term_end_; }
  /// Whether this node may take the lease (events::standing).
  bool may_lead() const { return may_lead_; }
  /// True when a resign event would make this node step down now.
  bool can_resign() const {
    return (state_ == state::working || state_ == state::renewing) && holding_;
  }
  /// No acquire attempt before this moment (a resign's cool-down, or the
  /// back-off after a failing app); in the past when none applies.
  time_point held_back_until() const { return backoff_until_; }
  /// While the store holds acquisitions back (after a reset, or a lease
  /// key that vanished early): until when, as its last answer said, and why.
  /// `until` is in the past when it does not.
  struct store_hold_back {
    time_point until{};
    std::string why;
  };
  const store_hold_back& store_held_back() const { return store_hold_back_; }

 private:
  enum class app_phase { down, starting, running, stopping };

  struct step_context;
  void on(const events::start&, step_context&);
  void on(const events::standing&, step_context&);
  void stand_by(step_context&);
  void on(const events::timer&, step_context&);
  void on(const events::acquired&, step_context&);
  void on(const events::busy&, step_context&);
  void on(const events::acquire_failed&, step_context&);
  void on(const events::renewed&, step_context&);
  void on(const events::lost&, step_context&);
  void on(const events::renew_failed&, step_context&);
  void on(const events::release_done&, step_context&);
  void on(const events::app_started&, step_context&);
  void on(const events::app_start_failed&, step_context&);
  void on(const events::app_exited&, step_context&);
  void on(const events::app_stopped&, step_context&);
  void on(const events::shutdown&, step_context&);
  void on(const events::peer_released&, step_context&);
  void on(const events::resign&, step_context&);
  void on(const events::peer_acquired&, step_context&);
  void on(const events::app_checked&, step_context&);
  void on(const events::stop_gate_holds&, step_context&);
  void on(const events::confirmed&, step_context&);

  void go(step_context& ctx, state next, reason why, std::string detail = {});
  void begin_stop(step_context& ctx, reason why, bool voluntary);
  reason deadline_reason(const step_context& ctx) const;
  void arm_kill(step_context& ctx, time_point at);
  void record_success(step_context& ctx, time_point sent);
  void wait_then_retry(step_context& ctx, mono_clock::duration delay);
  // The term ends by a resign, a switchover or a preemption: a cool-down
  // follows.
  bool stepped_down() const {
    return stop_reason_ == reason::resigned || stop_reason_ == reason::switchover ||
           stop_reason_ == reason::preempted;
  }
  /// How widely standbys spread an attempt at an expiry or after a release:
  /// 0-300 us, wider with the number of candidates the store last reported.
  std::chrono::microseconds herd_window() const;
  std::chrono::microseconds herd_stagger();
  /// How much later than the others a standby tries after an expiry or a
  /// release: one step (ttl / 40, 10 to 250 ms) per live candidate of a
  /// higher priority, at most three, so that the highest priority takes the
  /// lease; and one step more for a large election's back runner, so that
  /// its front runners try alone.
  mono_clock::duration yield_delay() const;
  void finish_term(step_context& ctx, const std::string& detail = {},
                   reason released_why = reason::released);
  milliseconds jittered(milliseconds base, double spread);
  /// One term only: ends the process with `code` for `how`, said as a
  /// transition to stopped for `why` with `detail`.
  void end_one_term(step_context& ctx, one_term_end how, int code, reason why, std::string detail);
  /// One term only, at the end of an attempt or a term: exits when the
  /// term ran or the wait is over (true), else false (compete on).
  bool one_term_over(step_context& ctx, const std::string& detail, reason released_why);
  /// One term only: `delay` cut to what is left of the wait (at least 0).
  mono_clock::duration within_wait(mono_clock::duration delay, time_point now) const;
  milliseconds error_backoff() const;
  milliseconds failure_backoff() const;
  milliseconds renew_retry_delay() const;

  lease_timing timing_;
  std::uint64_t rng_;
  // Candidates the store last said listen for this election; -1 = unknown.
  int contenders_ = -1;
  // Live candidates of a higher priority, the holder aside, as the store
  // last said (0 when it cannot tell).
  int outranked_by_ = 0;
  // The store last counted this node among a large election's back runners.
  bool back_runner_ = false;
  // A release announced while this node's own attempt was in flight: the
  // attempt's busy answer may predate it, so it must not wait for the
  // released lease's old expiry.
  bool release_heard_while_acquiring_ = false;

  state state_ = state::idle;
  time_point since_{};

  // The lease as this node believes it.
  bool holding_ = false;
  time_point valid_until_{};
  time_point last_ok_{};
  std::uint64_t token_ = 0;
  time_point term_started_{};
  bool renew_in_flight_ = false;
  bool last_renew_refused_ = false;

  // The app and how it is being stopped.
  app_phase app_ = app_phase::down;
  time_point app_started_at_{};
  // Why the app is being stopped, while it is; none between stops.
  std::optional<reason> stop_reason_;
  // A switchover's target and reservation window, while it steps down.
  std::string hand_over_to_;
  milliseconds hand_over_window_{0};
  bool voluntary_stop_ = false;
  time_point stop_started_{};
  milliseconds stop_timeout_of_stop_{};  // stop_timeout when this stop began
  time_point kill_at_{};
  bool killed_ = false;

  // Shutdown and exit.
  bool shutdown_requested_ = false;
  std::optional<int> exit_code_;

  // The app could not be executed: no acquire until check_app says it can.
  bool app_blocked_ = false;
  bool may_lead_ = true;

  // Back-off: Redis errors while acquiring, and apps that fail or exit.
  unsigned acquire_errors_ = 0;
  unsigned app_failures_ = 0;
  time_point backoff_until_{};
  // The back-off is a resign's cool-down (set when the resigned term ends).
  bool resign_cooldown_ = false;

  // A switchover's reservation as the last attempt met it.
  std::string reserved_for_;
  time_point reserved_until_{};

  // One term only (lease_timing::one_term): when the wait for the lease
  // runs out, whether the app was started in a term, the code a signal
  // means, and how it all ended.
  time_point give_up_at_{};
  bool term_ran_ = false;
  int signal_code_ = 0;
  one_term_end one_term_end_ = one_term_end::none;

  // The leader as seen by a standby.
  std::string holder_;
  std::uint64_t holder_token_ = 0;
  store_hold_back store_hold_back_;
};

const char* to_string(state s);
const char* to_string(reason r);
const char* to_string(timer_id t);

}  // namespace baton
