// The simulation of stop_gate_simulation.hpp, its driving half: a run's
// setup, the random schedule, time and the timers, and the simulated driver
// (driver::impl), which steps the machine and carries its actions out.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <variant>

#include "stop_gate_simulation.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

// ttl - drift as docs/safety.md states it, not as the machine computes it.
milliseconds independent_validity(const lease_timing& t) {
  // Rounded up to whole ms, allowing for binary fractions (10000 * 0.07 is 700).
  auto drift_ms = std::ceil(static_cast<double>(t.ttl.count()) * t.drift_factor - 1e-6);
  return t.ttl - milliseconds(static_cast<milliseconds::rep>(drift_ms)) - 2ms;
}

// Random but valid lease timing: renew_interval < renew_deadline < ttl - drift.
lease_timing random_timing(seeded_choices& choose) {
  lease_timing t;
  switch (choose.pick(4)) {
    case 0:
      t.ttl = 500ms;
      break;
    case 1:
      t.ttl = 2s;
      break;
    case 2:
      t.ttl = 10s;
      break;
    default:
      t.ttl = choose.between(300ms, 20s);
      break;
  }
  static constexpr double drift_factors[] = {0.0, 0.01, 0.05};
  t.drift_factor = drift_factors[choose.pick(3)];
  auto validity = independent_validity(t);
  t.renew_deadline = choose.between(validity * 3 / 10, validity * 9 / 10);
  t.renew_interval = choose.between(std::max(1ms, t.renew_deadline / 5), t.renew_deadline * 4 / 5);
  t.retry_interval = choose.between(20ms, t.ttl);
  t.stop_timeout = choose.chance(50) ? choose.between(1ms, validity / 4)
                                     : choose.between(validity / 4, t.ttl * 2);
  t.resign_cooldown = choose.between(0ms, t.ttl * 2);
  t.exit_when_app_exits = choose.chance(10);
  return t;
}

}  // namespace

simulation::simulation(std::uint64_t seed, sim_options opts)
    : choose_(seed ^ 0x5eed5eed5eedULL),
      opts_(opts),
      timing_(random_timing(choose_)),
      validity_(independent_validity(timing_)),
      machine_(timing_, seed),
      gate_(opts.require_ack) {
  now_ = origin_ = time_point{} + 1000s;
  token_counter_ = 100 + static_cast<std::uint64_t>(choose_.pick(1000));
  if (choose_.chance(80)) clients_.push_back(client_model{true});
  int observers = choose_.pick(4);
  for (int i = 0; i < observers; ++i) clients_.push_back(client_model{false});
  for (auto& c : clients_) c.connected = choose_.chance(60);
  worker_acks_ = choose_.chance(80);
}

std::optional<violation> simulation::run() {
  note("setup: " + setup());
  deliver(events::start{});
  cov_.runs = 1;
  for (int step = 0; step < opts_.steps && !done(); ++step) {
    ++cov_.steps;
    random_step();
    check_now();
  }
  if (!done()) drain();
  return violation_;
}

std::string simulation::setup() const {
  std::ostringstream out;
  out << "ttl=" << timing_.ttl.count() << "ms drift_factor=" << timing_.drift_factor
      << " renew_interval=" << timing_.renew_interval.count()
      << "ms renew_deadline=" << timing_.renew_deadline.count()
      << "ms retry_interval=" << timing_.retry_interval.count()
      << "ms stop_timeout=" << timing_.stop_timeout.count()
      << "ms resign_cooldown=" << timing_.resign_cooldown.count()
      << "ms exit_when_app_exits=" << timing_.exit_when_app_exits
      << " validity=" << validity_.count() << "ms require_ack=" << opts_.require_ack
      << " clients=" << clients_.size() << " worker=" << (!clients_.empty() && clients_[0].worker)
      << " worker_acks=" << worker_acks_;
  return out.str();
}

// --- random schedule ---------------------------------------------------------

void simulation::random_step() {
  int r = choose_.pick(1000);
  if (r < 250) {
    advance(random_duration());
  } else if (r < 500) {
    store_reply();
  } else if (r < 650) {
    app_progress(false);
  } else if (r < 710) {
    if (!clients_.empty()) toggle_connection(random_client());
  } else if (r < 810) {
    worker_winds_down_or_acks();
  } else if (r < 830) {
    stray_ack();
  } else if (r < 835) {
    note("SIGTERM");
    shutdown_sent_ = true;
    deliver(events::shutdown{"SIGTERM"});
  } else if (r < 865) {
    resign();
  } else if (r < 890) {
    note("release announced by a peer");
    deliver(events::peer_released{});
  } else if (r < 915) {
    auto token = choose_.chance(50) ? ++token_counter_ : token_counter_;
    deliver(events::peer_acquired{"other", token});
  } else if (r < 930) {
    if (opts_.reloads) reload();
  } else if (r < 970) {
    if (!clients_.empty()) {
      auto& c = random_client();
      if (c.connected) read_status(c, false);
    }
  }
}

client_model& simulation::random_client() {
  return clients_[static_cast<std::size_t>(choose_.pick(static_cast<int>(clients_.size())))];
}

milliseconds simulation::random_duration() {
  int r = choose_.pick(100);
  if (r < 40) return choose_.between(0ms, 20ms);
  if (r < 80) return choose_.between(0ms, timing_.renew_interval / 2);
  if (r < 97) return choose_.between(0ms, timing_.ttl);
  return choose_.between(0ms, timing_.ttl * 2);
}

// After the random steps: SIGTERM, then a fair environment (every command
// answered, the app stops on SIGTERM unless stubborn, time passes) must
// see the daemon exit.
void simulation::drain() {
  note("drain");
  if (!shutdown_sent_) {
    shutdown_sent_ = true;
    deliver(events::shutdown{"SIGTERM"});
  }
  for (int i = 0; i < 10000 && !done(); ++i) {
    if (!in_flight_.empty()) {
      store_reply();
    } else if (app_can_progress()) {
      app_progress(true);
    } else if (auto t = next_timer()) {
      advance_to(*t);
    } else {
      fail(5, "after SIGTERM nothing is left to happen, yet the daemon has not exited");
    }
    check_now();
  }
  if (!done()) fail(5, "the daemon did not exit within 10000 steps after SIGTERM");
}

bool simulation::done() const {
  return exited_ || violation_.has_value();
}

// --- time --------------------------------------------------------------------

std::optional<time_point> simulation::next_timer() const {
  std::optional<time_point> next;
  for (const auto& [id, at] : timers_) {
    if (!next || at < *next) next = at;
  }
  return next;
}

void simulation::advance(milliseconds d) {
  advance_to(now_ + d);
}

// Fire due timers in time order (ties in random order), checking the
// invariants at every moment something happens.
void simulation::advance_to(time_point target) {
  for (int fired = 0; fired < 100000 && !done(); ++fired) {
    auto next = next_timer();
    if (!next || *next > target) break;
    now_ = std::max(now_, *next);
    check_now();
    if (done()) return;
    std::vector<int> due;  // the machine's timers, the gate's (3) among them
    for (const auto& [id, at] : timers_) {
      if (at == *next) due.push_back(static_cast<int>(id));
    }
    int which = due[static_cast<std::size_t>(choose_.pick(static_cast<int>(due.size())))];
    auto id = static_cast<timer_id>(which);
    timers_.erase(id);
    deliver(events::timer{id});
  }
  if (!done()) now_ = std::max(now_, target);
  check_now();
}

// --- the driver (driver::impl) -----------------------------------------------

void simulation::deliver(event e) {
  pending_.push_back(std::move(e));
  if (stepping_) return;
  stepping_ = true;
  while (!pending_.empty() && !exited_) {
    auto next = std::move(pending_.front());
    pending_.pop_front();
    note("event " + describe(next, origin_));
    auto result = machine_.step(next, now_);
    if (result.change) {
      note(std::string("  state ") + to_string(result.change->from) + " -> " +
           to_string(result.change->to) + " (" + to_string(result.change->why) + ")");
    }
    for (const auto& a : result.actions) {
      note("  action " + describe(a, origin_));
      carry_out(a);
    }
  }
  stepping_ = false;
}

void simulation::carry_out(const action& a) {
  if (std::holds_alternative<actions::acquire>(a)) {
    if (app_.active || app_.alive) {
      fail(3, "acquire sent while the last term's app has not stopped");
    }
    in_flight_.push_back({command::acquire, now_});
  } else if (std::holds_alternative<actions::renew>(a)) {
    in_flight_.push_back({command::renew, now_});
  } else if (std::holds_alternative<actions::release>(a)) {
    check_release();
    in_flight_.push_back({command::release, now_});
  } else if (auto* start = std::get_if<actions::start_app>(&a)) {
    carry_out_start(*start);
  } else if (auto* stop = std::get_if<actions::stop_app>(&a)) {
    carry_out_stop(*stop);
  } else if (std::holds_alternative<actions::kill_app>(a)) {
    carry_out_kill();
  } else if (auto* arm = std::get_if<actions::arm_timer>(&a)) {
    if (arm->id == timer_id::kill) {
      if (arm->at > bound(started_token_)) {
        fail(1, "kill timer armed at " + ms_after(origin_, arm->at) + ", past the bound " +
                    ms_after(origin_, bound(started_token_)));
      }
      kill_deadline_ = arm->at;
    }
    timers_[arm->id] = arm->at;
  } else if (auto* due = std::get_if<actions::stop_deadline>(&a)) {
    // daemon: carry_out(stop_deadline)
    gate_.on_kill_at(due->kill_at);
    gate_holds();
  } else if (std::holds_alternative<actions::ask_stop_gate>(a)) {
    ask_gate();
  } else if (auto* cancel = std::get_if<actions::cancel_timer>(&a)) {
    timers_.erase(cancel->id);
  } else if (auto* extended = std::get_if<actions::lease_extended>(&a)) {
    carry_out_extended(*extended);
  } else if (std::holds_alternative<actions::exit_process>(a)) {
    if (app_.active || app_.alive) fail(4, "the process exits before the app has stopped");
    if (!shutdown_sent_ && !timing_.exit_when_app_exits) fail(4, "exit without SIGTERM");
    ++cov_.exits;
    exited_ = true;
    timers_.clear();
  }
}

void simulation::carry_out_start(const actions::start_app& a) {
  // Invariant 3: one term after the other, tokens from the store, increasing.
  if (term_started_ && !term_stopped_) fail(3, "a term starts before the last one was stopped");
  if (a.token != store_token_) {
    fail(3, "start_app token " + std::to_string(a.token) + " is not the store's " +
                std::to_string(store_token_));
  }
  if (a.token <= started_token_) {
    fail(3, "start_app token " + std::to_string(a.token) + " does not exceed the last one " +
                std::to_string(started_token_));
  }
  check_told(a.token, a.valid_until, "start valid_until");
  ++cov_.terms;
  started_token_ = a.token;
  term_started_ = true;
  term_stopped_ = false;
  told_in_term_ = false;
  stop_under_way_ = false;
  stopped_deliveries_ = 0;
  // daemon: carry_out(start_app)
  gate_.on_term(a.token);
  publish_start(a.token, a.valid_until);
  gate_.on_published(subscribers(), a.valid_until);
  // app.set_deadline(a.valid_until): the keeper's deadline, checked above.
  if (app_.active) {
    fail(3, "start_app while the app is still active");
    return;  // app_controller ignores it
  }
  app_ = gate_app_model{};
  app_.active = true;
  app_.alive = true;
  app_.ph = gate_app_model::phase::starting;
  app_.stubborn = choose_.chance(15);
  app_.token = a.token;
}

void simulation::carry_out_stop(const actions::stop_app& a) {
  if (!term_started_ || term_stopped_) fail(3, "stop_app without a started, unstopped term");
  if (a.token != started_token_) {
    fail(3, "stop_app token " + std::to_string(a.token) + " is not the term's " +
                std::to_string(started_token_));
  }
  check_told(a.token, a.kill_at, "stop kill_at");
  ++cov_.stops;
  if (told_in_term_) ++cov_.told_stops;
  term_stopped_ = true;
  stop_under_way_ = true;
  kill_deadline_ = a.kill_at;
  killed_in_stop_ = false;
  acked_in_stop_ = false;
  stopped_deliveries_ = 0;
  // daemon: carry_out(stop_app)
  publish_stop(a.token, a.kill_at);
  gate_.on_stop(a.kill_at, subscribers(), now_);
  app_stop();
}

void simulation::carry_out_kill() {
  ++cov_.kills;
  if (stop_under_way_) killed_in_stop_ = true;
  // daemon: carry_out(kill_app)
  publish_kill();
  if (opts_.wire != wiring::forget_the_kill) app_kill();
  if (gate_.on_kill(now_)) {
    deliver_stopped(passed_by::kill);
  } else {
    gate_holds();
  }
}

void simulation::carry_out_extended(const actions::lease_extended& a) {
  // Emitted for a new term just before its start_app: the store's token is
  // the one to judge by.
  if (machine_.term_token() != store_token_) {
    fail(3, "renewed event with token " + std::to_string(machine_.term_token()) +
                " while the store's term is " + std::to_string(store_token_));
  }
  check_told(store_token_, a.valid_until, "renewed valid_until");
  if (a.stopping) ++cov_.voluntary_renewals;
  // app.set_deadline(a.valid_until): the keeper's deadline, checked above.
  publish_renewed(machine_.term_token(), a.valid_until, a.stopping);
  gate_.on_published(subscribers(), a.valid_until);
}

// The app controller's `stopped` (daemon: app_listener().stopped).
void simulation::app_reports_stopped() {
  note("app controller: stopped");
  if (gate_.on_app_stopped(now_) || opts_.wire == wiring::release_at_once) {
    deliver_stopped(passed_by::app_report);
    return;
  }
  gate_holds();
}

// daemon: the gate holds the release back; the machine arms its timer.
void simulation::gate_holds() {
  deliver(events::stop_gate_holds{gate_.wake_at()});
}

// daemon: carry_out(ask_stop_gate), when the machine's gate timer fired.
void simulation::ask_gate() {
  if (gate_.on_timer(now_)) {
    deliver_stopped(passed_by::gate_timer);
  } else {
    gate_holds();
  }
}

void simulation::deliver_stopped(passed_by by) {
  static constexpr const char* names[] = {"the app controller", "an acknowledgement",
                                          "the gate timer", "the kill"};
  const char* from = names[static_cast<int>(by)];
  note(std::string("gate passes app_stopped (") + from + ")");
  switch (by) {
    case passed_by::app_report:
      ++cov_.released_by_app;
      break;
    case passed_by::ack:
      ++cov_.released_by_ack;
      break;
    case passed_by::gate_timer:
      ++cov_.released_by_gate_timer;
      break;
    case passed_by::kill:
      ++cov_.released_by_kill;
      break;
  }
  if (stop_under_way_ && ++stopped_deliveries_ > 1) {
    fail(3, std::string("app_stopped delivered twice in one stop (the second from ") + from + ")");
  }
  deliver(events::app_stopped{});
}

// daemon: acknowledge() ({"cmd":"stopped"}).
void simulation::acknowledge(std::optional<std::uint64_t> token) {
  auto r = gate_.on_ack(token, now_);
  note("ack token=" + (token ? std::to_string(*token) : std::string("none")) + ": " +
       (r.error.empty() ? std::string("accepted") : r.error) + (r.release ? ", release" : ""));
  if (!r.error.empty()) {
    ++cov_.acks_refused;
    return;
  }
  ++cov_.acks_accepted;
  bool right = stop_under_way_ && (!token || *token == started_token_);
  if (!right) fail(2, "the gate accepted an acknowledgement that is not for the stop under way");
  acked_in_stop_ = true;
  if (r.release) {
    deliver_stopped(passed_by::ack);
  }
}

void simulation::resign() {
  // daemon: resign(): refused unless the machine can resign.
  if (!machine_.can_resign()) return;
  note("baton resign");
  deliver(events::resign{});
}

void simulation::reload() {
  auto stop_timeout = choose_.between(1ms, timing_.ttl * 2);
  auto cooldown = choose_.between(0ms, timing_.ttl * 2);
  note("SIGHUP: stop_timeout=" + std::to_string(stop_timeout.count()) +
       "ms resign_cooldown=" + std::to_string(cooldown.count()) + "ms");
  machine_.set_stop_timing(stop_timeout, cooldown);
}

// daemon: status_for_client(); the socket app begins on a leading status
// right after connecting.
void simulation::read_status(client_model& c, bool after_connect) {
  bool leading = machine_.holds_lease() && machine_.valid_until() > now_ &&
                 (machine_.current() == state::working || machine_.current() == state::renewing);
  // daemon: status_for_client()
  gate_.on_status_read(leading, machine_.valid_until());
  if (!leading) return;
  told_in_term_ = true;
  auto token = machine_.token();
  auto valid_until = machine_.valid_until();
  note(std::string(c.worker ? "socket app" : "observer") + " reads status: leading, token " +
       std::to_string(token) + ", valid_until " + ms_after(origin_, valid_until));
  if (token != started_token_) fail(3, "status names a token that is not the term's");
  check_told(token, valid_until, "status valid_until");
  c.settle(now_);
  if (c.worker && after_connect && !c.working) c.begin(token, valid_until);
}

}  // namespace baton::testing
