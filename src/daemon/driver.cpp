// The driver (see driver.hpp): takes the next event (a timer, a store's
// answer or announcement, an app report, a socket command, a signal), steps
// the election machine, and carries out the actions it returns. Events raised
// while carrying out actions are queued and stepped in order, so the machine
// never re-enters itself.
//
// Decisions stay in the machine and the stop gate: what a stop or a signal
// means and whether a hold-back is a resign's cool-down are read off them.
// What is not the loop, the switch over the actions or the wiring is a room
// of its own beside it, each behind a narrow interface, handed what it reads
// and a way to post events:
//   store_side        the store calls, their answers and the store's events
//   app_reports       the app controller's reports and the socket's stop
//                     acknowledgements, through the stop gate
//   machine_timers    the machine's timers
//   succession        candidates, preemption, switchover, resign
//   narration         the words of the log (say.hpp writes them)
//   handover_timing   the moments the debug timing lines count from
//   standby_memory    the standby's page give-back
//   hangup_reload     SIGHUP
//   service_manager   systemd's READY, STATUS, STOPPING and watchdog
//   operator_views    the status, probes and metrics
//   listeners         opening the app socket and the HTTP endpoint
//   machine_settings  what the machine is made with
//   failsafe_side     lease.failsafe peers: rounds, promises, clearances
//   one_term_lines    `baton once`'s last word on its job
#include "driver.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <optional>

#include "app_messages.hpp"
#include "app_reports.hpp"
#include "failsafe_side.hpp"
#include "baton/app_controller.hpp"
#include "baton/app_socket.hpp"
#include "baton/election_machine.hpp"
#include "baton/health.hpp"
#include "baton/http_server.hpp"
#include "baton/logging.hpp"
#include "baton/metrics.hpp"
#include "baton/peer_port.hpp"
#include "baton/secret_file.hpp"
#include "baton/stop_gate.hpp"
#include "baton/store_registry.hpp"
#include "handover_timing.hpp"
#include "hangup_reload.hpp"
#include "listeners.hpp"
#include "machine_settings.hpp"
#include "machine_timers.hpp"
#include "narration.hpp"
#include "one_term_lines.hpp"
#include "operator_views.hpp"
#include "say.hpp"
#include "secret_environment.hpp"
#include "service_manager.hpp"
#include "standby_memory.hpp"
#include "store_side.hpp"
#include "drain_control.hpp"
#include "succession.hpp"

namespace baton {

namespace asio = boost::asio;

namespace {

// How long an exiting daemon holds its store connections open after its
// release was answered (see carry_out(exit_process)): well past a
// successor's takeover, and short beside any stop timeout.
constexpr milliseconds close_after_release{50};

}  // namespace

struct driver::impl {
  impl(asio::io_context& context, config c, lease_store& s, reload_source r)
      : io(context),
        cfg(std::move(c)),
        machine(lease_timing_of(cfg), random_seed()),
        store(s),
        stats(cfg.election, cfg.node_id),
        gate(cfg.socket.require_ack),
        reports(
            gate, stats, timing, [this] { return app.can_execute(); },
            [this](event e) { deliver(std::move(e)); }),
        app(io, cfg.hooks, cfg.child, reports.listener()),
        socket(io, cfg.socket, [this] { return status_for_client(); }),
        signals(io, SIGTERM, SIGINT),
        hangups(
            io, std::move(r), [this]() -> const config& { return cfg; },
            [this](const config& next) { apply_reload(next); }) {}

  asio::io_context& io;
  config cfg;
  election_machine machine;
  lease_store& store;
  metrics stats;
  stop_gate gate;
  narrator narration;      // the lines said once per change
  handover_timing timing;  // for the debug-level timing lines
  app_reports reports;     // the app's reports and the socket's acknowledgements
  app_controller app;
  app_socket socket;
  asio::signal_set signals;
  hangup_reload hangups;
  // READY, STATUS, STOPPING and the watchdog, which notifies while live.
  service_manager systemd{
      io, [this] { return assess_liveness(machine, mono_clock::now(), cfg.hooks.timeout); },
      [this] { return service_status_line(machine, cfg.node_id); }};
  std::unique_ptr<http_server> http;
  std::string known_leader;  // for baton_leader_changes_total
  machine_timers timers{io, cfg, stats, [this](event e) { deliver(std::move(e)); }};

  std::deque<event> pending;
  bool stepping = false;
  std::optional<int> exit_code;
  std::uint64_t event_seq = 0;
  // Candidates, preemption, switchover and resign.
  succession succession_policy{cfg, store, leadership_view(machine),
                               [this](event e) { deliver(std::move(e)); },
                               [this] { stats.count_switchover(); }};
  // Drain and never_lead: whether this node may take the lease.
  drain_control standing{cfg, store, succession_policy, [this](event e) { deliver(std::move(e)); }};
  // The status, probes and metrics, and the records they keep.
  operator_views views{cfg, machine, store, gate, app, socket, succession_policy, stats};
  // The store calls, their answers and the store's events.
  store_side store_calls{cfg, store, views, narration, timing, store_hooks()};
  // Holds the store open for a moment after a release when the daemon exits
  // right then (see carry_out(exit_process)).
  asio::steady_timer exit_timer{io};
  // A standby gives back the pages its start-up used.
  standby_memory standby_pages{io, cfg.lease.ttl, [this] { return standing_by(); },
                               [this](milliseconds w) { return timers.due_within(w); }};

  // lease.failsafe peers (failsafe_side.hpp); all unset while it is off.
  std::unique_ptr<failsafe_side> failsafe;
  std::unique_ptr<peer_port> peer_listener;
  peer_client peer_link{io};
  asio::steady_timer round_timer{io};

  store_side::hooks store_hooks() {
    store_side::hooks h;
    h.post = [this](event e) { deliver(std::move(e)); };
    h.won = [this] { succession_policy.refresh_candidates(); };
    h.term_announced = [this] {
      systemd.tell_status();
      note_leader();
    };
    h.candidates = [this]() -> const candidate_snapshot& { return succession_policy.candidates(); };
    h.listed = [this](std::vector<candidate_info> list) {
      succession_policy.listed(std::move(list));
    };
    return h;
  }

  // lease.failsafe peers: the rules' room, the peer port and its client.
  // False, after saying why, when the mode cannot run.
  bool start_failsafe() {
    if (cfg.lease.failsafe != failsafe_mode::peers) return true;
    failsafe_calls* calls = store.failsafe();
    if (calls == nullptr) {
      spdlog::critical("lease.failsafe peers: the {} store does not carry it out",
                       store.status().label);
      return false;
    }
    std::string secret;
    try {
      secret = read_secret_file(cfg.lease.failsafe_secret_file);
    } catch (const std::runtime_error& e) {
      spdlog::critical("cannot read lease.failsafe_secret_file {}: {}",
                       cfg.lease.failsafe_secret_file, e.what());
      return false;
    }
    failsafe_side::hooks h;
    h.post = [this](event e) { deliver(std::move(e)); };
    h.arm_round = [this](time_point at) {
      round_timer.expires_at(at);
      round_timer.async_wait([this](const boost::system::error_code& ec) {
        if (!ec && failsafe) failsafe->on_round_due(mono_clock::now());
      });
    };
    h.send = [this](const std::string& address, std::string line, milliseconds timeout,
                    peer_client::handler done) {
      peer_link.post(address, std::move(line), timeout, std::move(done));
    };
    // Before the port opens: nothing this process says can come earlier.
    failsafe = std::make_unique<failsafe_side>(cfg, std::move(secret), machine, std::move(h),
                                               mono_clock::now());
    peer_listener = std::make_unique<peer_port>(
        io, cfg.lease.failsafe_listen,
        [this](std::string_view body) { return failsafe->on_request(body, mono_clock::now()); });
    std::error_code ec;
    peer_listener->open(ec);
    if (ec) {
      spdlog::critical("cannot serve lease.failsafe_listen: {}", peer_listener->last_error());
      return false;
    }
    store_calls.use_failsafe(*failsafe, *calls);
    views.show_failsafe(
        [this](time_point now) {
          failsafe->set_port_refusals(peer_listener->refusals());
          return failsafe->report(now);
        },
        [this](time_point now) {
          failsafe->set_port_refusals(peer_listener->refusals());
          return failsafe->gauges(now);
        });
    const auto endpoint = peer_listener->local_endpoint();
    spdlog::info("peer port on {}:{} (lease.failsafe peers; published as {})",
                 endpoint.address().to_string(), endpoint.port(),
                 store.identity().peer_address);
    return true;
  }

  bool start(bool handle_signals) {
    for (const auto& name : scrub_secret_environment(store_kind_of(cfg).client_secret_variables)) {
      spdlog::info("{}", scrubbed_variable_line(name));
    }
    const bool opened =
        open_listeners(io, cfg, socket, http,
                       {[this](const nlohmann::json& request, const peer_info& peer) {
                          return reports.acknowledge(request, peer);
                        },
                        [this](const nlohmann::json&, const peer_info& peer) {
                          return succession_policy.resign(peer);
                        },
                        [this](const nlohmann::json& request, const peer_info& peer) {
                          return succession_policy.switchover(request, peer);
                        },
                        [this](const nlohmann::json&, const peer_info& peer) {
                          return standing.drain(machine.can_resign(), peer);
                        },
                        [this](const nlohmann::json&, const peer_info& peer) {
                          return standing.undrain(peer);
                        },
                        route_sources{[this] {
                                        refresh_for_leader();
                                        return views.probe();
                                      },
                                      [this] {
                                        succession_policy.refresh_stale_candidates();
                                        refresh_for_leader();
                                        return views.status();
                                      },
                                      [this] { return views.metrics_text(); }}});
    if (!opened) return false;
    if (!start_failsafe()) return false;
    views.show_standing([this] { return std::string(to_string(standing.standing())); });
    if (!standing.load()) return false;
    spdlog::info("{}", starting_line(BATON_VERSION, cfg, store.status().endpoint));
    // `baton once` has no socket unless asked: no advice to open one.
    if (!cfg.once.enabled) say_socket_path(cfg);
    if (handle_signals) {
      wait_for_signal();
      hangups.listen();
    }
    store_calls.watch();
    deliver(events::start{});
    // READY=1 only from inside the loop: systemd then knows the daemon runs.
    asio::post(io, [this] { systemd.ready(); });
    return true;
  }

  // SIGHUP: what may change while baton runs (hangup_reload.hpp).
  void apply_reload(const config& next) {
    cfg = next;
    set_log_level(cfg.log.level);
    app.set_hooks(cfg.hooks);
    machine.set_stop_timing(cfg.child.stop_timeout, cfg.lease.resign_cooldown);
  }

  void wait_for_signal() {
    signals.async_wait([this](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      shutdown(signo == SIGTERM ? "SIGTERM" : "SIGINT");
      wait_for_signal();
    });
  }

  void shutdown(const std::string& name) {
    spdlog::info("{}", signal_line(name, machine.shutdown_outcome()));
    deliver(events::shutdown{name});
  }

  // --- stepping --------------------------------------------------------------

  void deliver(event e) {
    pending.push_back(std::move(e));
    if (stepping) return;
    stepping = true;
    while (!pending.empty()) {
      auto next = std::move(pending.front());
      pending.pop_front();
      auto now = mono_clock::now();
      auto result = machine.step(next, now);
      if (result.change) on_transition(*result.change, now);
      for (auto& a : result.actions) std::visit([&](auto& act) { carry_out(act, now); }, a);
    }
    stepping = false;
  }

  event_header header(time_point now) { return {++event_seq, now, cfg.node_id, cfg.election}; }

  void on_transition(const transition& t, time_point now) {
    views.on_transition(t);
    const auto said = narration.on_transition(t);
    if (said.store_answers_again) spdlog::info("{}", store_answers_again_line(store.status()));
    const auto level = level_of(said.level);
    if (spdlog::should_log(level)) spdlog::log(level, "{}", state_line(t));
    set_log_context({cfg.election, cfg.node_id, to_string(t.to), machine.term_token()});
    socket.publish(state_event(header(now), t, machine.token()));
    stats.on_transition(to_string(t.from), to_string(t.to));
    stats.set_state(to_string(t.to));
    systemd.tell_status();
    note_leader();
    if ((t.to == state::idle || t.to == state::acquiring) && !app.active()) {
      // A standby parks the next term's keeper (child.park). Posted, so that
      // an acquire this step sends goes out first.
      asio::post(io, [this] {
        if (!app.active()) app.prepare(context(reason::acquired));
      });
    }
  }

  void note_leader() {
    const auto now = mono_clock::now();
    auto leader = machine.known_leader(cfg.node_id, now);
    stats.set_leader(machine.leads(now));
    say_who_leads(leader);
    if (leader.empty() || leader == known_leader) return;
    known_leader = leader;
    stats.on_leader_change();
  }

  // A standby says once per change who leads.
  void say_who_leads(const std::string& leader) {
    auto line = narration.who_leads(machine.current(), cfg.node_id, leader, machine.token());
    if (!line) return;
    spdlog::info("{}", *line);
    if (!leader.empty()) standby_pages.give_back_soon();
  }

  // A standby that knows who leads, its app not active.
  bool standing_by() const {
    const auto s = machine.current();
    return !app.active() && (s == state::idle || s == state::acquiring) &&
           !machine.known_leader(cfg.node_id, mono_clock::now()).empty();
  }

  // --- actions ---------------------------------------------------------------

  void carry_out(const actions::acquire&, time_point) { store_calls.acquire(); }

  void carry_out(const actions::look&, time_point) { store_calls.look(); }

  void carry_out(const actions::renew&, time_point) {
    succession_policy.refresh_with_renewal();
    store_calls.renew();
  }

  void carry_out(const actions::release& a, time_point) { store_calls.release(a); }

  // Whether there is anything to start: a supervised command or a hook.
  bool has_app() const {
    return !cfg.child.command.empty() || !cfg.hooks.on_start.empty() || !cfg.hooks.on_stop.empty();
  }

  app_context context(reason why) const {
    return {cfg.node_id, cfg.election, to_string(why), cfg.lease.ttl, machine.term_token()};
  }

  void carry_out(const actions::start_app& a, time_point now) {
    // Measured before anything below runs; logged after the app started, so
    // the debug line itself is not part of what it measures.
    const auto start_requested = mono_clock::now();
    spdlog::info("{}", start_line(a.token, has_app()));
    gate.on_term(a.token);
    socket.publish(start_event(header(now), a));
    gate.on_published(socket.subscriber_count(), a.valid_until);
    // The keeper kills the command at this deadline unless a renewal moves it,
    // so a crashed or frozen daemon cannot leave its app working.
    app.set_deadline(a.valid_until);
    auto term = context(a.why);
    term.acquire_sent = timing.acquire_sent();
    app.start(term);
    if (spdlog::should_log(spdlog::level::debug)) {
      if (auto line = timing.app_start(start_requested, mono_clock::now())) {
        spdlog::debug("{}", *line);
      }
    }
  }

  void carry_out(const actions::stop_app& a, time_point now) {
    spdlog::info("{}", stop_line(a, has_app(), now));
    socket.publish(stop_event(header(now), a, gate.ack_required()));
    gate.on_stop(a.kill_at, socket.subscriber_count(), now);
    app.stop(context(a.why));
  }

  void carry_out(const actions::kill_app&, time_point now) {
    say(kill_line(gate.waiting_for_ack_only(), machine.term_token()));
    socket.publish(kill_event(header(now), machine.term_token()));
    app.kill();
    reports.killed(now);
  }

  void carry_out(const actions::ask_stop_gate&, time_point) {
    reports.ask_gate(mono_clock::now(), machine.term_token());
  }

  void carry_out(const actions::stop_deadline& a, time_point) { reports.kill_deadline(a.kill_at); }

  void carry_out(const actions::arm_timer& a, time_point) { timers.arm(a.id, a.at); }

  void carry_out(const actions::cancel_timer& a, time_point) { timers.cancel(a.id); }

  void carry_out(const actions::check_app&, time_point) {
    std::string why;
    const bool ok = app.can_execute(&why);
    // Said once per change, not on every look.
    if (auto line = narration.app_check(ok, why)) say(*line);
    deliver(events::app_checked{ok, why});
  }

  void carry_out(const actions::lease_extended& a, time_point now) {
    app.set_deadline(a.valid_until);
    socket.publish(renewed_event(header(now), a, machine.term_token()));
    gate.on_published(socket.subscriber_count(), a.valid_until);
  }

  void carry_out(const actions::exit_process& a, time_point) {
    exit_code = a.code;
    if (auto line = one_term_line(machine, a.code, mono_clock::now())) say(*line);
    spdlog::info("{}", exit_line(a.code));
    systemd.stopping();
    signals.cancel();
    hangups.cancel();
    if (http) http->close();
    if (peer_listener) peer_listener->close();
    peer_link.close();
    round_timer.cancel();
    timers.cancel_all();
    standby_pages.cancel();
    socket.close();
    // A successor starts its app within a few milliseconds of our release.
    // Closing our store connections meanwhile has the server end them: for
    // PostgreSQL two server processes of about 2 ms of CPU each, which on a
    // 2-core host delayed the successor's acquire or app start by as much
    // (handover gap 5-6 ms median against 3.3-3.7 held open, bench). So a
    // release just answered keeps them open a moment longer; the lease is
    // free, nothing is sent on them, and the daemon's work is over.
    const auto now = mono_clock::now();
    const auto released_at = store_calls.released_at();
    if (released_at != time_point{} && now < released_at + close_after_release) {
      exit_timer.expires_at(released_at + close_after_release);
      exit_timer.async_wait([this](boost::system::error_code) { close_store_and_stop(); });
      return;
    }
    close_store_and_stop();
  }

  void close_store_and_stop() {
    store.close();
    io.stop();
  }

  // --- status ----------------------------------------------------------------

  // The list the status and /leader read the leader's advertise address in.
  void refresh_for_leader() {
    succession_policy.refresh_for_leader(machine.known_leader(cfg.node_id, mono_clock::now()));
  }

  // A client that read "is_leader": true may work on that, just as one that
  // heard the start event.
  nlohmann::json status_for_client() {
    succession_policy.refresh_stale_candidates();
    refresh_for_leader();
    auto s = views.status();
    gate.on_status_read(s.value("is_leader", false), machine.valid_until());
    return s;
  }
};

driver::driver(asio::io_context& io, config cfg, lease_store& store, reload_source reload)
    : impl_(std::make_unique<impl>(io, std::move(cfg), store, std::move(reload))) {}
driver::~driver() = default;

bool driver::start(bool handle_signals) {
  return impl_->start(handle_signals);
}
void driver::shutdown(const std::string& why) {
  impl_->shutdown(why);
}
void driver::startup_work_done() {
  impl_->standby_pages.startup_work_done();
}
std::optional<int> driver::exit_code() const {
  return impl_->exit_code;
}
nlohmann::json driver::status() const {
  return impl_->views.status();
}
const election_machine& driver::machine() const {
  return impl_->machine;
}

}  // namespace baton
