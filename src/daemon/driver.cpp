// The driver (see driver.hpp): takes the next event (timer, store reply, app
// report, signal, store event), steps the election machine, and carries out
// the actions it returns. Events raised while carrying out actions are queued
// and stepped in order, so the machine never re-enters itself.
//
// Replies are tagged with the time their command was SENT, since the machine
// counts a lease's validity from then.
//
// The app controller's "stopped" reaches the machine through the stop gate
// (stop_gate.hpp), which, with socket.require_ack, also waits for a socket
// client's acknowledgement ({"cmd":"stopped"}, see ack_command.hpp) or the
// stop's kill deadline, which the machine tells it (actions::stop_deadline).
//
// Decisions stay in the machine and the gate: what a stop or a signal means
// and whether a hold-back is a resign's cool-down are read off them, and
// wake-up trust is the store's latest wakeups event. Succession (candidates,
// preemption, switchover, resign: succession.hpp), the words of the log
// (narration.hpp) and the standby's page give-back (standby_memory.hpp) are
// rooms of their own; the driver only hands them what they ask for.
//
// Around the loop sit the operator's views: the HTTP endpoint (/healthz,
// /livez, /readyz, /leader, /standby, /status, /metrics), the metrics
// registry, systemd's notifications (READY, STATUS on every transition,
// WATCHDOG from the loop itself while the daemon is live, so a stalled loop or
// a wedged leader is restarted) and SIGHUP reloads.
#include "driver.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>

#include "ack_command.hpp"
#include "app_messages.hpp"
#include "baton/app_controller.hpp"
#include "baton/app_socket.hpp"
#include "baton/duration.hpp"
#include "baton/election_machine.hpp"
#include "baton/health.hpp"
#include "baton/http_server.hpp"
#include "baton/logging.hpp"
#include "baton/metrics.hpp"
#include "baton/stop_gate.hpp"
#include "baton/store_registry.hpp"
#include "hangup_reload.hpp"
#include "listeners.hpp"
#include "narration.hpp"
#include "operator_views.hpp"
#include "secret_environment.hpp"
#include "service_manager.hpp"
#include "standby_memory.hpp"
#include "succession.hpp"

namespace baton {

namespace asio = boost::asio;

namespace {

// How long an exiting daemon holds its store connections open after its
// release was answered (see carry_out(exit_process)): well past a
// successor's takeover, and short beside any stop timeout.
constexpr milliseconds close_after_release{50};

lease_timing timing_of(const config& cfg) {
  lease_timing t;
  t.ttl = cfg.lease.ttl;
  t.renew_interval = cfg.lease.renew_interval;
  t.renew_deadline = cfg.lease.renew_deadline;
  t.retry_interval = cfg.lease.retry_interval;
  t.drift_factor = cfg.lease.drift_factor;
  t.stop_timeout = cfg.child.stop_timeout;
  t.exit_when_app_exits = cfg.child.on_exit == child_exit_policy::exit;
  t.resign_cooldown = cfg.lease.resign_cooldown;
  return t;
}

spdlog::level::level_enum level_of(loudness l) {
  switch (l) {
    case loudness::debug: return spdlog::level::debug;
    case loudness::info: return spdlog::level::info;
    case loudness::warn: return spdlog::level::warn;
  }
  return spdlog::level::info;
}

// After close() the store completes what was in flight as cancelled.
bool cancelled(const store_error& e) { return e.code == std::errc::operation_canceled; }

std::uint64_t random_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

struct driver::impl {
  impl(asio::io_context& context, config c, lease_store& s, reload_source r)
      : io(context),
        cfg(std::move(c)),
        machine(timing_of(cfg), random_seed()),
        store(s),
        app(io, cfg.hooks, cfg.child, app_listener()),
        socket(io, cfg.socket, [this] { return status_for_client(); }),
        signals(io, SIGTERM, SIGINT),
        hangups(io, std::move(r), [this]() -> const config& { return cfg; },
                [this](const config& next) { apply_reload(next); }),
        stats(cfg.election, cfg.node_id),
        timers{asio::steady_timer(io), asio::steady_timer(io), asio::steady_timer(io),
               asio::steady_timer(io)},
        gate(cfg.socket.require_ack) {}

  asio::io_context& io;
  config cfg;
  election_machine machine;
  lease_store& store;
  app_controller app;
  app_socket socket;
  asio::signal_set signals;
  hangup_reload hangups;
  metrics stats;
  // READY, STATUS, STOPPING and the watchdog, which notifies while live.
  service_manager systemd{
      io, [this] { return assess_liveness(machine, mono_clock::now(), cfg.hooks.timeout); },
      [this] { return service_status_line(machine, cfg.node_id); }};
  std::unique_ptr<http_server> http;
  std::string known_leader;  // for baton_leader_changes_total
  narrator narration;  // the lines said once per change
  std::string app_check_note;  // why the app cannot be executed ("" = it can)
  // The store's latest word on whether its announcements reach this node
  // (store_events::wakeups): a standby waits for one only while they do.
  bool wakeups_trusted = false;
  std::array<asio::steady_timer, 4> timers;  // by timer_id
  std::array<std::uint64_t, 4> timer_generation{};
  stop_gate gate;

  std::deque<event> pending;
  bool stepping = false;
  std::optional<int> exit_code;
  std::uint64_t event_seq = 0;
  // The steps of the latest won acquire, for the debug-level timing lines
  // that show an operator where takeover time goes.
  struct {
    time_point acquire_sent{};
    time_point answered{};
    bool first_renewal_pending = false;
  } takeover;
  // Candidates, preemption, switchover and resign.
  succession succession_policy{cfg, store, leadership_view(machine),
                               [this](event e) { deliver(std::move(e)); },
                               [this] { stats.count_switchover(); }};
  // The status, probes and metrics, and the records they keep.
  operator_views views{cfg, machine, store, gate, app, socket, succession_policy, stats};
  // When the app was last reported stopped: the handover timing line counts
  // the release from there.
  time_point handover_app_stopped{};
  // When the store last answered that our release freed the lease, and the
  // timer that holds the store open for a moment after it when the daemon
  // exits right then (see carry_out(exit_process)).
  time_point released_at{};
  asio::steady_timer exit_timer{io};
  // A standby gives back the pages its start-up used.
  standby_memory standby_pages{io, cfg.lease.ttl, [this] { return standing_by(); },
                               [this](milliseconds w) { return machine_timer_due_within(w); }};

  app_controller::listener app_listener() {
    app_controller::listener l;
    l.started = [this] { deliver(events::app_started{}); };
    l.start_failed = [this](std::string detail) {
      spdlog::error("app failed to start: {}", detail);
      // A command or hook that cannot be executed at all stops this node from
      // competing until it can (the machine asks with check_app).
      const bool cannot_execute = !app.can_execute();
      deliver(events::app_start_failed{std::move(detail), cannot_execute});
    };
    l.child_exited = [this](exit_status s) {
      spdlog::warn("supervised command exited by itself: {}", s.describe());
      deliver(events::app_exited{s.as_exit_code(), s.describe()});
    };
    l.hook_finished = [this](const std::string& hook, milliseconds duration, bool ok) {
      stats.observe_hook(hook, std::chrono::duration<double>(duration).count(), ok);
    };
    l.stopped = [this] {
      auto now = mono_clock::now();
      handover_app_stopped = now;
      if (gate.on_app_stopped(now)) {
        // The app controller has logged "app: stopped" already.
        deliver(events::app_stopped{});
        return;
      }
      spdlog::info("app stopped; waiting for a socket client to acknowledge the stop of term {} "
                   "(at most {}ms, until the kill deadline)",
                   gate.token(), gate.wake_at() ? remaining_ms(*gate.wake_at(), now) : 0);
      gate_holds();
    };
    return l;
  }

  bool start(bool handle_signals) {
    for (const auto& name :
         scrub_secret_environment(store_kind_of(cfg).client_secret_variables)) {
      spdlog::info("{} removed from the environment of hooks and the child: it holds a store's "
                   "secret",
                   name);
    }
    const bool opened = open_listeners(
        io, cfg, socket, http,
        {[this](const nlohmann::json& request, const peer_info& peer) {
           return acknowledge(request, peer);
         },
         [this](const nlohmann::json&, const peer_info& peer) {
           return succession_policy.resign(peer);
         },
         [this](const nlohmann::json& request, const peer_info& peer) {
           return succession_policy.switchover(request, peer);
         },
         route_sources{[this] { return views.probe(); },
                       [this] {
                         succession_policy.refresh_stale_candidates();
                         return views.status();
                       },
                       [this] { return views.metrics_text(); }}});
    if (!opened) return false;
    spdlog::info("baton {} starting: node {} in election {} on {} (ttl {}ms, renew every {}ms, "
                 "deadline {}ms)",
                 BATON_VERSION, cfg.node_id, cfg.election, store.status().endpoint,
                 cfg.lease.ttl.count(), cfg.lease.renew_interval.count(),
                 cfg.lease.renew_deadline.count());
    say_socket_path(cfg);
    if (handle_signals) {
      wait_for_signal();
      hangups.listen();
    }
    store.watch([this](const store_event& e) { std::visit([this](const auto& ev) { on_store(ev); }, e); });
    deliver(events::start{});
    // READY=1 only from inside the loop: systemd then knows the daemon runs.
    asio::post(io, [this] { systemd.ready(); });
    return true;
  }

  // --- store events ------------------------------------------------------------

  void on_store(const store_events::released&) {
    // Beside the old leader's "app reported stopped" line, this splits a
    // handover into the release's announcement and the new leader's part.
    if (spdlog::should_log(spdlog::level::debug)) {
      spdlog::debug("handover timing: heard the release at monotonic {} ns",
                    mono_ns(mono_clock::now()));
    }
    deliver(events::peer_released{});
  }

  void on_store(const store_events::acquired& e) {
    deliver(events::peer_acquired{e.holder, e.token});
    // No transition follows an announcement, so say here who leads now.
    systemd.tell_status();
    note_leader();
  }

  void on_store(const store_events::reset& e) {
    spdlog::warn("{}", reset_line(e, store.status().label, cfg.election, cfg.lease.ttl));
  }

  void on_store(const store_events::wakeups& e) {
    wakeups_trusted = e.trusted;
    if (!e.why.empty()) {
      spdlog::warn("store announcements do not reach this node: {}; until they do, a standby "
                   "tries again when the holder's lease ends rather than at its release",
                   e.why);
      return;
    }
    spdlog::debug("store announcements {}", e.trusted ? "reach this node" : "do not reach this node");
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
    spdlog::info("received {}: {}", name, machine.shutdown_outcome());
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

  event_header header(time_point now) {
    return {++event_seq, now, cfg.node_id, cfg.election};
  }

  void on_transition(const transition& t, time_point now) {
    views.on_transition(t);
    const auto said = narration.on_transition(t);
    if (said.store_answers_again) {
      const auto s = store.status();
      spdlog::info("{} answers again at {}", s.label, s.endpoint);
    }
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

  // Whether one of the machine's timers fires within `window` from now.
  bool machine_timer_due_within(milliseconds window) const {
    const auto now = asio::steady_timer::clock_type::now();
    for (const auto& t : timers) {
      if (t.expiry() > now && t.expiry() <= now + window) return true;
    }
    return false;
  }

  // --- actions ---------------------------------------------------------------

  void carry_out(const actions::acquire&, time_point) {
    auto sent = mono_clock::now();
    store.async_acquire([this, sent](store_error e, acquire_answer r) {
      if (cancelled(e)) return;
      views.observe_command("acquire", sent, e);
      if (e) {
        deliver(events::acquire_failed{e.message()});
      } else if (r.acquired()) {
        takeover.acquire_sent = sent;
        takeover.answered = mono_clock::now();
        takeover.first_renewal_pending = true;
        deliver(events::acquired{sent, r.token});
        succession_policy.refresh_candidates();
      } else {
        if (auto line = narration.hold_back(r)) spdlog::warn("{}", *line);
        if (r.reserved_for == cfg.node_id) {
          // The store's contract says this node's acquire takes its own
          // reservation: say so, the window will pass without a leader.
          spdlog::warn("the store refused the lease reserved for this node (holder '{}', {}ms "
                       "left); trying again when the reservation ends",
                       r.holder, r.remaining.count());
        }
        deliver(events::busy{sent, r.holder, r.remaining, r.token, wakeups_trusted,
                             r.outcome == acquire_outcome::held_back, r.free_in, r.why,
                             r.contenders, r.reserved_for, r.outranked_by, r.back_runner});
      }
    });
  }

  void carry_out(const actions::renew&, time_point) {
    auto sent = mono_clock::now();
    succession_policy.refresh_candidates();
    store.async_renew([this, sent](store_error e, renew_answer r) {
      if (cancelled(e)) return;
      views.observe_command("renew", sent, e);
      if (e) {
        deliver(events::renew_failed{
            e.message(), e.code == store_errc::auth || e.code == store_errc::refused});
        return;
      }
      views.on_renew_answered(
          std::chrono::duration_cast<milliseconds>(mono_clock::now() - sent));
      if (r == renew_answer::renewed) {
        if (takeover.first_renewal_pending) {
          takeover.first_renewal_pending = false;
          spdlog::debug("takeover timing: first renewal answered {} after the acquire was sent",
                        microseconds_text(mono_clock::now() - takeover.acquire_sent));
        }
        deliver(events::renewed{sent});
      } else {
        // A store made of several servers says which ones (e.detail).
        spdlog::error("lease lost: {}", e.detail.empty()
                                            ? "the key no longer holds this node's value"
                                            : e.detail);
        deliver(events::lost{});
      }
    });
  }

  void carry_out(const actions::release& a, time_point) {
    auto sent = mono_clock::now();
    lease_store::release_handler done = [this, sent, to = a.hand_over_to](store_error e,
                                                                          release_answer r) {
      if (cancelled(e)) return;
      views.observe_command("release", sent, e);
      if (e) {
        spdlog::warn("release failed ({}); the lease will expire by itself", e.message());
        deliver(events::release_done{e.message()});
        return;
      }
      if (r == release_answer::not_ours) spdlog::info("release: the lease was no longer ours");
      if (r == release_answer::released) released_at = mono_clock::now();
      if (r == release_answer::released && !to.empty()) {
        spdlog::info("switchover: the lease is released, reserved for {}", to);
      }
      if (handover_app_stopped != time_point{} && spdlog::should_log(spdlog::level::debug)) {
        spdlog::debug("handover timing: release sent {} and answered {} after the app was "
                      "reported stopped (at monotonic {} ns)",
                      microseconds_text(sent - handover_app_stopped),
                      microseconds_text(mono_clock::now() - handover_app_stopped),
                      mono_ns(handover_app_stopped));
      }
      deliver(events::release_done{});
    };
    // The cool-down that follows is registered after the release, on the
    // same connection, so the leader that comes next can see it.
    if (a.cooldown > milliseconds(0)) {
      done = [this, done = std::move(done), cooldown = a.cooldown](store_error e,
                                                                    release_answer r) {
        if (!cancelled(e)) store.register_cooldown(cooldown);
        done(std::move(e), r);
      };
    }
    if (a.hand_over_to.empty()) {
      store.async_release(std::move(done));
    } else {
      store.async_hand_over(a.hand_over_to, a.window, std::move(done));
    }
  }

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
    term.acquire_sent = takeover.acquire_sent;
    app.start(term);
    if (takeover.acquire_sent != time_point{} && spdlog::should_log(spdlog::level::debug)) {
      spdlog::debug("takeover timing: acquire answered {}, app start requested {}, start() "
                    "returned {} after the acquire was sent",
                    microseconds_text(takeover.answered - takeover.acquire_sent),
                    microseconds_text(start_requested - takeover.acquire_sent),
                    microseconds_text(mono_clock::now() - takeover.acquire_sent));
    }
  }

  void carry_out(const actions::stop_app& a, time_point now) {
    spdlog::info("{}", stop_line(a, has_app(), now));
    socket.publish(stop_event(header(now), a, gate.ack_required()));
    gate.on_stop(a.kill_at, socket.subscriber_count(), now);
    app.stop(context(a.why));
  }

  void carry_out(const actions::kill_app&, time_point now) {
    if (gate.waiting_for_ack_only()) {
      spdlog::warn("no socket client acknowledged the stop of term {} before the kill deadline: "
                   "going on without it",
                   machine.term_token());
    } else {
      spdlog::error("the app did not stop in time: sending SIGKILL");
    }
    socket.publish(kill_event(header(now), machine.term_token()));
    app.kill();
    if (gate.on_kill(now)) {
      deliver(events::app_stopped{});
    } else {
      // A client that missed the stop may work until the deadline it was
      // given: the gate says when that is over (if it waits at all).
      gate_holds();
    }
  }

  // --- stop acknowledgements -------------------------------------------------

  // Errors are thrown: the socket sends them back as {"type":"error"}.
  nlohmann::json acknowledge(const nlohmann::json& request, const peer_info& peer) {
    auto token = ack_token(request);
    auto now = mono_clock::now();
    auto result = gate.on_ack(token, now);
    if (!result.error.empty()) throw std::runtime_error(result.error);
    spdlog::info("stop of term {} acknowledged by pid {} (uid {})", gate.token(), peer.pid,
                 peer.uid);
    if (result.release) deliver(events::app_stopped{});
    return {{"type", "acknowledged"}, {"token", gate.token()}};
  }

  // The gate holds the release back: the machine arms its gate timer for
  // when the gate wants another look, or cancels it when the gate waits for
  // nothing (wake_at() is then empty).
  void gate_holds() { deliver(events::stop_gate_holds{gate.wake_at()}); }

  void carry_out(const actions::ask_stop_gate&, time_point) {
    if (gate.on_timer(mono_clock::now())) {
      spdlog::warn("no socket client acknowledged the stop of term {} before the kill "
                   "deadline: going on without it",
                   machine.term_token());
      deliver(events::app_stopped{});
    } else {
      gate_holds();
    }
  }

  void carry_out(const actions::stop_deadline& a, time_point) {
    gate.on_kill_at(a.kill_at);
    gate_holds();
  }

  void carry_out(const actions::arm_timer& a, time_point) {
    auto index = static_cast<std::size_t>(a.id);
    auto generation = ++timer_generation[index];
    auto& timer = timers[index];
    timer.expires_at(a.at);
    // The generation check drops a completion that was already queued when the
    // timer was re-armed or cancelled; asio cannot take those back.
    timer.async_wait([this, id = a.id, index, generation,
                      due = a.at](const boost::system::error_code& ec) {
      if (ec || timer_generation[index] != generation) return;
      // The gate's timer waits for a socket client, not for the daemon's
      // own work: it is neither measured nor a sign of a stall.
      if (id != timer_id::gate) {
        stats.observe_timer_delay(
            std::chrono::duration<double>(mono_clock::now() - due).count());
        warn_if_stalled(id, due);
      }
      deliver(events::timer{id});
    });
  }

  // A timer that fires far past its due time means this process did not run
  // (SIGSTOP, a VM pause, swapping): the reason the machine then gives, such as
  // store-unreachable, would otherwise hide that.
  void warn_if_stalled(timer_id id, time_point due) {
    auto late = std::chrono::duration_cast<milliseconds>(mono_clock::now() - due);
    if (late < std::max(milliseconds(100), cfg.lease.renew_interval / 2)) return;
    spdlog::warn("the {} timer fired {}ms late: the daemon did not run for that long (stopped or "
                 "paused?)",
                 to_string(id), late.count());
  }

  void carry_out(const actions::check_app&, time_point) {
    std::string why;
    const bool ok = app.can_execute(&why);
    // Said once per change, not on every look.
    if (!ok && why != app_check_note) {
      spdlog::error("{}: not competing for the lease until it can be executed", why);
    } else if (ok && !app_check_note.empty()) {
      spdlog::info("the app can be executed again: competing for the lease");
    }
    app_check_note = ok ? std::string() : why;
    deliver(events::app_checked{ok, why});
  }

  void carry_out(const actions::cancel_timer& a, time_point) {
    auto index = static_cast<std::size_t>(a.id);
    ++timer_generation[index];
    timers[index].cancel();
  }

  void carry_out(const actions::lease_extended& a, time_point now) {
    app.set_deadline(a.valid_until);
    socket.publish(renewed_event(header(now), a, machine.term_token()));
    gate.on_published(socket.subscriber_count(), a.valid_until);
  }

  void carry_out(const actions::exit_process& a, time_point) {
    exit_code = a.code;
    spdlog::info("exiting with code {}", a.code);
    systemd.stopping();
    signals.cancel();
    hangups.cancel();
    if (http) http->close();
    for (auto& t : timers) t.cancel();
    ++timer_generation[static_cast<std::size_t>(timer_id::gate)];
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

  // A client that read "is_leader": true may work on that, just as one that
  // heard the start event.
  nlohmann::json status_for_client() {
    succession_policy.refresh_stale_candidates();
    auto s = views.status();
    gate.on_status_read(s.value("is_leader", false), machine.valid_until());
    return s;
  }
};

driver::driver(asio::io_context& io, config cfg, lease_store& store, reload_source reload)
    : impl_(std::make_unique<impl>(io, std::move(cfg), store, std::move(reload))) {}
driver::~driver() = default;

bool driver::start(bool handle_signals) { return impl_->start(handle_signals); }
void driver::shutdown(const std::string& why) { impl_->shutdown(why); }
void driver::startup_work_done() {
  impl_->standby_pages.startup_work_done();
}
std::optional<int> driver::exit_code() const { return impl_->exit_code; }
nlohmann::json driver::status() const { return impl_->views.status(); }
const election_machine& driver::machine() const { return impl_->machine; }

}  // namespace baton
