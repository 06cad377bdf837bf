// The models of stop_gate_simulation.hpp that the simulated driver carries
// its actions out into: the socket clients (observers and the socket app,
// which works as examples/follow_lease.py does), the store (commands
// answered in order, with random outcomes) and the app controller (hooks and
// a child that start, fail, exit by themselves or only on SIGKILL).
#include <algorithm>

#include "stop_gate_simulation.hpp"

namespace baton::testing {

// --- the socket --------------------------------------------------------------

std::size_t simulation::subscribers() const {
  std::size_t n = 0;
  for (const auto& c : clients_) n += c.connected ? 1 : 0;
  return n;
}

void simulation::publish_start(std::uint64_t token, time_point valid_until) {
  for (auto& c : clients_) {
    if (!c.connected) continue;
    told_in_term_ = true;
    if (!c.worker) continue;
    c.settle(now_);
    c.begin(token, valid_until);
  }
}

void simulation::publish_renewed(std::uint64_t token, time_point valid_until, bool stopping) {
  for (auto& c : clients_) {
    if (!c.connected) continue;
    // Renewals of a voluntary stop tell no one to work (and a careful
    // client does not take them as a reason to, unlike follow_lease.py).
    if (stopping) continue;
    told_in_term_ = true;
    if (!c.worker) continue;
    c.settle(now_);
    if (c.working && c.token == token) {
      c.deadline = std::max(c.deadline, valid_until);
    } else if (!c.working && c.token == token && c.stopped_term != token && valid_until > now_) {
      c.begin(token, valid_until);  // it had stopped at its deadline; the daemon was late
    }
  }
}

void simulation::publish_stop(std::uint64_t token, time_point kill_at) {
  for (auto& c : clients_) {
    if (!c.connected || !c.worker) continue;
    c.settle(now_);
    c.stopped_term = token;
    c.ack_owed = token;
    if (c.working) c.stop_by = std::min(c.stop_by, kill_at);
  }
}

void simulation::publish_kill() {
  for (auto& c : clients_) {
    if (c.connected && c.worker) c.working = false;
  }
}

void simulation::toggle_connection(client_model& c) {
  if (c.connected) {
    c.settle(now_);
    if (c.worker && c.working && !opts_.worker_leaves_while_working) return;
    note(std::string(c.worker ? "socket app" : "observer") + " disconnects" +
         (c.working_at(now_) ? " while working until " + ms_after(origin_, c.end_of_work()) : ""));
    c.connected = false;
    return;
  }
  note(std::string(c.worker ? "socket app" : "observer") + " connects");
  c.connected = true;
  read_status(c, true);
}

void simulation::worker_winds_down_or_acks() {
  if (clients_.empty() || !clients_[0].worker) return;
  auto& w = clients_[0];
  w.settle(now_);
  if (w.working && w.stop_by != never) {
    note("socket app has wound down");
    w.working = false;
    if (choose_.chance(70)) send_ack(w);
    return;
  }
  if (!w.working && choose_.chance(60)) send_ack(w);
}

void simulation::send_ack(client_model& w) {
  if (!worker_acks_ || !w.connected || !w.ack_owed || w.working_at(now_)) return;
  std::optional<std::uint64_t> token = w.ack_owed;
  if (choose_.chance(25)) token.reset();  // "the stop under way"
  w.ack_owed.reset();
  note("socket app acknowledges");
  acknowledge(token);
}

// An acknowledgement with a token that is not this node's current term's.
void simulation::stray_ack() {
  if (subscribers() == 0) return;
  std::uint64_t token = choose_.chance(50) && started_token_ > 3
                            ? started_token_ - 1 - static_cast<std::uint64_t>(choose_.pick(3))
                            : token_counter_ + 1 + static_cast<std::uint64_t>(choose_.pick(3));
  if (token == started_token_) return;
  note("stray ack with token " + std::to_string(token));
  acknowledge(token);
}

// --- the store ---------------------------------------------------------------

void simulation::store_reply() {
  if (in_flight_.empty()) return;
  auto c = in_flight_.front();
  in_flight_.pop_front();
  int r = choose_.pick(100);
  switch (c.what) {
    case command::acquire:
      if (r < 60) {
        auto token = ++token_counter_;
        store_token_ = token;
        key_ours_ = true;
        bounds_[token] = c.sent + validity_;
        releases_in_term_ = 0;
        if (now_ >= c.sent + timing_.renew_deadline) ++cov_.late_acquires;
        deliver(events::acquired{tagged(c.sent), token});
      } else if (r < 85) {
        if (choose_.chance(30)) ++token_counter_;
        deliver(events::busy{tagged(c.sent), "other", choose_.between(0ms, timing_.ttl),
                             token_counter_, choose_.chance(50)});
      } else {
        deliver(events::acquire_failed{"timeout"});
      }
      return;
    case command::renew: {
      // A key can only be renewed while it still exists.
      bool possible = key_ours_ && c.sent < bound(store_token_);
      if (possible && r < 60) {
        bounds_[store_token_] = std::max(bounds_[store_token_], c.sent + validity_);
        deliver(events::renewed{tagged(c.sent)});
      } else if (r < 88) {
        deliver(events::renew_failed{"timeout"});
      } else {
        key_ours_ = false;
        deliver(events::lost{});
      }
      return;
    }
    case command::release:
      key_ours_ = false;
      deliver(events::release_done{r < 80 ? "" : "connection lost"});
      return;
  }
}

// daemon: replies carry the time their command was sent.
time_point simulation::tagged(time_point sent) const {
  return opts_.wire == wiring::sent_at_reply ? now_ : sent;
}

// --- the app controller ------------------------------------------------------

void simulation::app_stop() {
  if (!app_.active) {
    app_.stopped_posted = true;
    return;
  }
  app_.stop_requested = true;
}

void simulation::app_kill() {
  if (app_.alive) note("app killed (SIGKILL)");
  app_.alive = false;
}

bool simulation::app_can_progress() const {
  if (app_.stopped_posted) return true;
  if (!app_.active) return false;
  if (app_.stop_requested) return !app_.alive || !app_.stubborn;
  return app_.ph == gate_app_model::phase::starting;
}

void simulation::app_progress(bool fair) {
  if (app_.stopped_posted) {
    app_.stopped_posted = false;
    app_reports_stopped();
    return;
  }
  if (!app_.active) return;
  if (app_.stop_requested) {
    if (app_.alive) {
      if (!app_.stubborn) {
        note("app ends on SIGTERM");
        app_.alive = false;
      }
      return;
    }
    app_ = gate_app_model{};
    app_reports_stopped();
    return;
  }
  switch (app_.ph) {
    case gate_app_model::phase::starting:
      if (choose_.chance(85)) {
        app_.ph = gate_app_model::phase::running;
        deliver(events::app_started{});
      } else {
        app_.ph = gate_app_model::phase::failed;
        app_.alive = false;
        deliver(events::app_start_failed{"on_start exited with 1"});
      }
      return;
    case gate_app_model::phase::running:
      if (!fair && choose_.chance(25)) {
        app_.ph = gate_app_model::phase::exited;
        app_.alive = false;
        deliver(events::app_exited{1, "exit code 1"});
      }
      return;
    default:
      return;
  }
}

}  // namespace baton::testing
