// A model of peer-confirmed leadership (docs/safety.md, "Peer-confirmed
// leadership") for failsafe_property_test.cpp: a store and three to five
// candidates under random faults, the candidates running the real rules
// (peer_list, confirmation_rounds, peer_promises, clearance). A discrete-event
// simulation on a simulated real clock: no threads, no sleeps, bounded steps.
//
// The world: each node's monotonic clock runs at its own rate (within the
// bound the drift allowance covers, or beyond it in a second mode), from its
// own origin. The store keeps the lease, the token counter, the record (the
// term, its list and list number, released or not) and the registrations
// (with the promise each carries), judges expiries on its own clock, and may
// be down for everyone (an outage) or restart empty (the record lost, every
// acquisition held back one ttl from its return). Messages between a node
// and the store or another node are delayed (sometimes long), lost or, among
// nodes, duplicated; links to the store and between nodes are cut and
// healed; daemons pause (their keeper runs on), crash (their keeper kills
// the app at once) and restart with nothing remembered; candidates join
// during the run.
//
// A node leads as the daemon would: its app starts on a grant it may take,
// runs until the keeper's deadline on the node's clock, which renewals and
// counted rounds of confirmations move; a renewal that finds the lease gone
// tries to resume the term; a voluntary release comes after the app stopped.
//
// Declared here, defined by part: the store in failsafe_model_store.cpp; the
// world around the candidates (events, clocks, delivery, the app's keeper,
// faults) in failsafe_model.cpp; a candidate's daemon (its life, the standby,
// the leader) in failsafe_model_candidates.cpp; many seeds and the overlaps
// of their apps in failsafe_model_checker.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "baton/failsafe_leader.hpp"
#include "baton/failsafe_peer.hpp"
#include "baton/failsafe_taker.hpp"

namespace baton::testing {

using us = std::int64_t;  // simulated real microseconds

inline constexpr milliseconds model_ttl{100};
inline constexpr us ttl_us = 100'000;
inline constexpr us renew_interval_us = 33'000;  // ttl / 3
inline constexpr us renew_retry_us = 8'000;      // a failed renewal, again after renew_interval / 4
inline constexpr us call_timeout_us = 10'000;    // a store call or a peer request
inline constexpr us standby_retry_us = 20'000;   // a standby's next attempt, at the latest
inline constexpr us end_us = 4'000'000;          // 40 ttls
inline constexpr std::size_t max_events = 600'000;

struct model_config {
  std::size_t nodes = 3;    // started at 0
  std::size_t joiners = 1;  // started during the run
  /// Each clock's rate (the store's too) is 1 ± up to this. The drift
  /// allowance, 3 % of the ttl here, covers two clocks 1 % off in opposite
  /// directions; 15 % is far beyond it.
  double rate_error = 0.01;
};

// --- the store ---------------------------------------------------------------

struct registration {
  us until = 0;  // store clock
  std::optional<failsafe::term_id> promised;
  us promise_until = 0;  // store clock
};

struct store_record {
  failsafe::term_id term;
  int holder_incarnation = 0;
  std::vector<std::string> list;
  std::uint64_t list_seq = 0;
  bool released = false;
};

struct store_lease {
  std::string node;
  int incarnation = 0;
  std::uint64_t token = 0;
  us until = 0;  // store clock
};

struct store_answer {
  enum kind { granted, held, held_back, hold, registered, renewed, resumed, lost, released } what;
  std::uint64_t token = 0;
  us remaining = 0;  // held, held_back: store-clock µs
  failsafe::failsafe_hold failsafe;
  std::vector<std::string> registry;  // granted, renewed, resumed: the live candidates
};

struct model_store {
  double rate = 1.0;
  bool up = true;
  std::optional<store_lease> lease;
  std::uint64_t counter = 1000;
  std::uint64_t highest = 1000;  // every token ever handed out: a reseed goes above
  std::optional<store_record> record;
  us fence_until = 0;
  std::map<std::string, registration> registry;

  us clock(us now) const { return static_cast<us>(static_cast<double>(now) * rate); }
  bool lease_live(us now) const { return lease && lease->until > clock(now); }
  bool ours(const std::string& node, int incarnation, std::uint64_t token) const {
    return lease && lease->node == node && lease->incarnation == incarnation &&
           lease->token == token;
  }

  void wipe(us now);
  void enroll(const std::string& node, us now, std::optional<failsafe::term_id> promised,
              us promise_left);
  std::vector<std::string> live_candidates(us now, const std::string& except) const;
  store_answer acquire(const std::string& node, int incarnation, std::uint64_t cleared,
                       bool may_win, std::optional<failsafe::term_id> promised, us promise_left,
                       us now);
  store_answer renew(const std::string& node, int incarnation, std::uint64_t token,
                     std::uint64_t seq, const std::vector<std::string>& list, us now);
  store_answer resume(const std::string& node, int incarnation, std::uint64_t token,
                      std::uint64_t seq, const std::vector<std::string>& list, us now);
  store_answer release(const std::string& node, int incarnation, std::uint64_t token, us now);
};

// --- the candidates ----------------------------------------------------------

struct app_interval {
  std::size_t node;
  us from;
  us until;
};

struct model_node {
  std::string name;
  double rate = 1.0;
  double origin_ns = 0;  // its clock at real 0
  bool alive = false;
  int incarnation = 0;
  std::uint64_t gen = 0;  // bumped by a crash: pending events of the old process die
  us paused_until = 0;
  std::unique_ptr<failsafe::peer_promises> peer;
  std::uint64_t cleared_token = 0;
  std::optional<failsafe::clearance> clear;
  std::uint64_t call = 0;  // the store call in flight (0: none)
  // Leading.
  bool leading = false;
  failsafe::term_id term;
  time_point deadline{};     // the keeper's: max of the store's validity and counted rounds
  time_point store_valid{};  // the store's part of it
  std::optional<failsafe::peer_list> list;
  std::optional<failsafe::confirmation_rounds> rounds;
  std::uint64_t seq = 0;
  std::vector<std::string> registry_view;
  std::optional<time_point> last_round;
  std::uint64_t nonce = 0;
  // The app.
  bool app_running = false;
  us app_from = 0;
  std::uint64_t app_gen = 0;
  time_point keeper_deadline{};
};

// What a run did, beside its intervals: the figures that show the rules
// were exercised, not only never broken.
struct model_figures {
  std::size_t grants = 0;
  std::size_t counted_rounds = 0;  // rounds that moved a deadline
  std::size_t beyond_store = 0;    // counted rounds whose deadline passed the store's validity
  std::size_t resumes = 0;
  std::size_t holds = 0;    // acquires refused with a failsafe hold
  std::size_t cleared = 0;  // clearances that ended in a take
  std::size_t data_losses = 0;
  us longest_on_confirmations = 0;  // an app's longest stretch past its store validity
  bool cut_short = false;           // the run reached max_events before its end
};

class model {
 public:
  model(const model_config& cfg, std::uint64_t seed, bool tracing = false);

  void run();

  const std::vector<app_interval>& apps() const { return apps_; }
  const model_figures& figures() const { return figures_; }
  std::string trace_text(us from, us to) const;

 private:
  struct event {
    us at;
    std::uint64_t seq;
    bool operator>(const event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  // --- events and chance (failsafe_model.cpp) --------------------------------

  us pick(us lo, us hi);
  double uniform(double lo, double hi);
  bool chance(double p);

  void schedule(us at, std::function<void()> f);
  template <class Line>
  void trace(Line&& line) {
    if (tracing_) trace_.emplace_back(now_, line());
  }

  // --- clocks (failsafe_model.cpp) -------------------------------------------

  time_point local(std::size_t i) const;
  us real_of(std::size_t i, time_point t) const;
  us real_at(std::size_t i, time_point t) const;
  static us micros(mono_clock::duration d);

  // --- delivery (failsafe_model.cpp) -----------------------------------------

  us delay();
  void at_node(std::size_t i, us at, std::function<void()> f);
  void run_at_node(std::size_t i, std::uint64_t gen, std::function<void()> f);
  void call_store(std::size_t i, std::function<store_answer()> op,
                  std::function<void(const store_answer&)> answer, std::function<void()> failed);
  void send_peer(std::size_t i, std::size_t j, std::function<void()> deliver);
  std::size_t index_of(const std::string& name) const;

  // --- the app and its keeper (failsafe_model.cpp) ---------------------------

  void start_app(std::size_t i);
  void arm_keeper(std::size_t i);
  void extend_keeper(std::size_t i);
  void note_on_confirmations(std::size_t i);
  void stop_app(std::size_t i, const char* why);

  // --- a node's life (failsafe_model_candidates.cpp) -------------------------

  void boot(std::size_t i);
  void crash(std::size_t i, us down_for);
  void term_over(std::size_t i, const char* why);

  // --- the standby (failsafe_model_candidates.cpp) ---------------------------

  void try_acquire(std::size_t i);
  void send_acquire(std::size_t i, bool may_win);
  void acquire_answered(std::size_t i, time_point sent, bool may_win, const store_answer& a);
  void give_back(std::size_t i, std::uint64_t token);
  void ask_to_clear(std::size_t i, const std::vector<std::string>& whom);

  // --- the leader (failsafe_model_candidates.cpp) ----------------------------

  void arm_deadline(std::size_t i);
  void moved_deadline(std::size_t i, time_point until);
  void renew_tick(std::size_t i, const failsafe::term_id& term);
  void send_renewal(std::size_t i, bool resume);
  void renewal_answered(std::size_t i, time_point sent, std::uint64_t seq,
                        const failsafe::term_id& term, bool resume, const store_answer& a);
  void renewal_failed(std::size_t i, const failsafe::term_id& term);
  void ask_to_confirm(std::size_t i, const failsafe::confirm_request& r);
  void resign(std::size_t i, std::uint64_t token);

  // --- faults (failsafe_model.cpp) -------------------------------------------

  // The ranges no fault may touch: from a restart that loses data until two
  // ttls after the store is back (window W1 is argued, not tested).
  std::vector<std::pair<us, us>> quiet_;
  std::vector<us> joins_;  // when the joiners start

  bool clear_of_quiet(us from, us to) const;
  std::optional<us> fault_start(us length);
  std::size_t leader_or_any();
  void plan_faults();
  std::size_t promise_keeper_or_any();

  // --- the run's state -------------------------------------------------------

  model_config cfg_;
  std::mt19937_64 rng_;
  bool tracing_;
  failsafe::timing timing_;
  us now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t call_ids_ = 0;
  std::priority_queue<event, std::vector<event>, std::greater<>> events_;
  std::vector<std::function<void()>> actions_;
  model_store store_;
  std::vector<model_node> nodes_;
  std::vector<bool> store_link_;
  std::vector<std::vector<bool>> peer_link_;
  std::vector<app_interval> apps_;
  model_figures figures_;
  std::vector<std::pair<us, std::string>> trace_;
};

// --- many seeds (failsafe_model_checker.cpp) ---------------------------------

std::string describe(const model_config& cfg);

struct model_findings {
  model_figures sum;
  std::size_t overlaps = 0;
  us longest_overlap = 0;
  std::size_t cut_short = 0;  // runs that reached max_events
  std::string first;          // the first overlap, with its trace
};

// Runs seeds 1 to `seeds` and looks for two apps running at once; the first
// overlap comes with the trace of its seed's replay.
model_findings check_model(const model_config& cfg, std::uint64_t seeds);

std::string figures_text(const model_findings& f);

}  // namespace baton::testing
