// The simulation behind stop_gate_safety_property_test.cpp: the election
// machine AND the stop gate together, wired as the daemon wires them
// (src/daemon/driver.cpp and app_reports.cpp), under random schedules.
//
// A small pure "simulated driver" plays driver::impl: it steps the machine,
// queues the events raised while carrying out actions (deliver()), and
// carries the actions out into models of
// - the store: commands in flight answered in order (one connection), with
//   random outcomes (success, busy, errors, lost renewals), as late as the
//   schedule makes them; it keeps the fencing-token counter;
// - the app controller: on_start/child that start, fail, exit by themselves,
//   stop on SIGTERM or only on SIGKILL (a stubborn app), and report
//   `stopped` asynchronously;
// - socket clients: observers that only subscribe, and one socket app that
//   works as examples/follow_lease.py does (works on `start` or a leading
//   status, follows `renewed`, stops by itself at its last deadline, winds
//   down by `kill_at` on `stop`, stops at once on `kill`, then acknowledges),
//   connecting and disconnecting at random, plus stray acknowledgements with
//   wrong tokens;
// - timers: the machine's four (the stop gate's among them, armed through
//   events::stop_gate_holds), fired in time order.
// Signals (SIGTERM, twice), resigns, SIGHUP reloads of stop_timeout, peer
// announcements and random time advances complete the schedule.
//
// The checker keeps its own records and never asks the machine for its
// valid_until: the bound of a term is (from the store's side) the SEND time
// of the last successful acquire/renew plus ttl - drift, drift computed from
// the configuration as docs/safety.md states it (ttl * drift_factor + 2 ms).
//
// Invariants:
//  1. The app never runs past the bound, and no deadline handed out (start,
//     renewed and status valid_until, keeper deadline, stop kill_at, kill
//     timer) lies beyond it; so the SIGKILL moment is never later.
//  2. A release is never sent while the app (hooks or child) has not been
//     reported stopped, nor, with require_ack, while a subscriber was told to
//     work in this term and neither an acknowledgement for this stop arrived
//     nor the stop's kill deadline was reached. (Optionally, client side: no
//     socket client told to work is still working by its own deadlines.)
//  3. Every stop delivers app_stopped and releases at most once; a started
//     term is stopped before the next starts (and before the next acquire);
//     tokens handed to the app strictly increase and are the store's.
//  4. After shutdown the process exits only after the app stopped.
//  5. (Liveness) After a shutdown, a fair environment sees the daemon exit.
//
// Declared here, defined by part: the schedule, the time and the simulated
// driver in stop_gate_simulation.cpp; the models of the socket clients, the
// store and the app controller in stop_gate_models.cpp; the checker and the
// runs over many seeds in stop_gate_checker.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "baton/election_machine.hpp"
#include "baton/stop_gate.hpp"
#include "machine_harness.hpp"

namespace baton::testing {

inline constexpr time_point never = time_point::max();

// How the simulated driver connects the app controller, the machine's kill
// and the gate. Only `daemon` is the real wiring; the others are deliberately
// broken, to show that the checker catches them.
enum class wiring {
  daemon,           // as src/daemon/driver.cpp and app_reports.cpp
  release_at_once,  // the app controller's `stopped` bypasses the gate
  forget_the_kill,  // kill_app is published but the app is not killed
  sent_at_reply,    // replies tagged with the time they arrived, not when sent
};

struct sim_options {
  bool require_ack = true;
  /// The socket app may lose its connection while it works; it then keeps to
  /// the last deadline it heard (examples/follow_lease.py).
  bool worker_leaves_while_working = true;
  /// SIGHUP reloads of stop_timeout and resign_cooldown at random moments.
  bool reloads = true;
  /// Invariant 2, client side: at a release with require_ack, no socket
  /// client that was told to work is still working by its own deadlines.
  bool check_clients_at_release = false;
  wiring wire = wiring::daemon;
  int steps = 200;
  bool trace = false;
};

struct violation {
  int invariant = 0;
  std::string what;
};

// What the runs went through, so a green result is known to mean something.
struct coverage {
  long runs = 0, steps = 0, terms = 0, stops = 0, releases = 0, kills = 0, acks_accepted = 0,
       acks_refused = 0, released_by_ack = 0, released_by_gate_timer = 0, released_by_kill = 0,
       released_by_app = 0, told_stops = 0, voluntary_renewals = 0, late_acquires = 0, exits = 0;

  void add(const coverage& o);
  std::string text() const;
};

// --- the models --------------------------------------------------------------

struct command {
  enum kind { acquire, renew, release } what;
  time_point sent;
};

// The app controller (baton/app_controller.hpp) as seen by the driver.
struct gate_app_model {
  enum class phase { down, starting, running, exited, failed } ph = phase::down;
  bool active = false;          // start() .. `stopped` delivered
  bool alive = false;           // a hook or the child runs
  bool stop_requested = false;  // stop() called; only `stopped` is reported from now on
  bool stubborn = false;        // ignores SIGTERM: only SIGKILL ends it
  bool stopped_posted = false;  // stop() while inactive: `stopped` is on its way
  std::uint64_t token = 0;
};

// A socket client. The worker is the socket app; observers only subscribe.
struct client_model {
  bool worker = false;
  bool connected = false;
  bool working = false;
  std::uint64_t token = 0;
  time_point deadline{};       // the last valid_until it heard
  time_point stop_by = never;  // the kill_at of a stop it heard while working
  std::uint64_t stopped_term = 0;
  std::optional<std::uint64_t> ack_owed;

  time_point end_of_work() const { return std::min(deadline, stop_by); }
  bool working_at(time_point t) const { return working && t < end_of_work(); }
  // Stops by itself once its deadline or the stop's kill_at has come.
  void settle(time_point now) {
    if (working && now >= end_of_work()) working = false;
  }
  void begin(std::uint64_t t, time_point valid_until) {
    working = true;
    token = t;
    deadline = valid_until;
    stop_by = never;
  }
};

// --- the simulated driver and the checker ------------------------------------

class simulation {
 public:
  simulation(std::uint64_t seed, sim_options opts);

  std::optional<violation> run();
  std::string setup() const;

  const std::vector<std::string>& trace() const { return trace_; }
  const coverage& covered() const { return cov_; }

 private:
  // --- random schedule (stop_gate_simulation.cpp) ----------------------------

  void random_step();
  client_model& random_client();
  milliseconds random_duration();
  void drain();
  bool done() const;

  // --- time (stop_gate_simulation.cpp) ---------------------------------------

  std::optional<time_point> next_timer() const;
  void advance(milliseconds d);
  void advance_to(time_point target);

  // --- the driver (driver::impl; stop_gate_simulation.cpp) -------------------

  void deliver(event e);
  void carry_out(const action& a);
  void carry_out_start(const actions::start_app& a);
  void carry_out_stop(const actions::stop_app& a);
  void carry_out_kill();
  void carry_out_extended(const actions::lease_extended& a);
  void app_reports_stopped();
  void gate_holds();
  void ask_gate();

  enum class passed_by { app_report, ack, gate_timer, kill };

  void deliver_stopped(passed_by by);
  void acknowledge(std::optional<std::uint64_t> token);
  void resign();
  void reload();
  void read_status(client_model& c, bool after_connect);

  // --- the socket (stop_gate_models.cpp) -------------------------------------

  std::size_t subscribers() const;
  void publish_start(std::uint64_t token, time_point valid_until);
  void publish_renewed(std::uint64_t token, time_point valid_until, bool stopping);
  void publish_stop(std::uint64_t token, time_point kill_at);
  void publish_kill();
  void toggle_connection(client_model& c);
  void worker_winds_down_or_acks();
  void send_ack(client_model& w);
  void stray_ack();

  // --- the store (stop_gate_models.cpp) --------------------------------------

  void store_reply();
  time_point tagged(time_point sent) const;

  // --- the app controller (stop_gate_models.cpp) -----------------------------

  void app_stop();
  void app_kill();
  bool app_can_progress() const;
  void app_progress(bool fair);

  // --- the checker (stop_gate_checker.cpp) -----------------------------------

  time_point bound(std::uint64_t token) const;
  void check_told(std::uint64_t token, time_point deadline, const char* what);
  void check_now();
  void check_release();
  void fail(int invariant, std::string what);
  void note(const std::string& line);

  seeded_choices choose_;
  sim_options opts_;
  lease_timing timing_;
  milliseconds validity_;
  bool worker_acks_ = true;

  // The driver's parts.
  election_machine machine_;
  stop_gate gate_;
  time_point origin_{};
  time_point now_{};
  std::map<timer_id, time_point> timers_;
  std::deque<event> pending_;
  bool stepping_ = false;
  bool exited_ = false;
  bool shutdown_sent_ = false;

  // The models.
  std::deque<command> in_flight_;
  std::uint64_t token_counter_ = 0;
  bool key_ours_ = false;
  gate_app_model app_;
  std::vector<client_model> clients_;

  // The checker's own records.
  std::map<std::uint64_t, time_point> bounds_;  // token -> last success sent + ttl - drift
  std::uint64_t store_token_ = 0;               // our last successful acquire's token
  std::uint64_t started_token_ = 0;             // the last start_app's token
  int releases_in_term_ = 0;
  bool term_started_ = false;
  bool term_stopped_ = false;
  bool told_in_term_ = false;
  bool stop_under_way_ = false;
  time_point kill_deadline_{};
  bool killed_in_stop_ = false;
  bool acked_in_stop_ = false;
  int stopped_deliveries_ = 0;

  std::optional<violation> violation_;
  std::vector<std::string> trace_;
  coverage cov_;
};

// --- running many seeds ------------------------------------------------------

struct outcome {
  std::uint64_t seed = 0;
  violation found;
  std::string report;  // setup and trace of the failing seed
};

// Runs `runs` seeds starting at `first`, alternating require_ack; returns the
// first violation, replayed with its trace.
std::optional<outcome> first_violation(sim_options opts, std::uint64_t first, int runs,
                                       coverage* total = nullptr);

std::string failure_text(const outcome& o);

}  // namespace baton::testing
