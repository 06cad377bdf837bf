// The checker of stop_gate_simulation.hpp, with its own records of the
// terms and never the machine's valid_until (the invariants are stated in
// the header), and the runs over many seeds, each failure replayed with its
// trace.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "stop_gate_simulation.hpp"

namespace baton::testing {
namespace {

std::optional<std::uint64_t> seed_from_environment() {
  const char* text = std::getenv("BATON_PROPERTY_SEED");
  if (!text || !*text) return std::nullopt;
  return std::strtoull(text, nullptr, 10);
}

}  // namespace

void coverage::add(const coverage& o) {
  long coverage::*fields[] = {&coverage::runs,
                              &coverage::steps,
                              &coverage::terms,
                              &coverage::stops,
                              &coverage::releases,
                              &coverage::kills,
                              &coverage::acks_accepted,
                              &coverage::acks_refused,
                              &coverage::released_by_ack,
                              &coverage::released_by_gate_timer,
                              &coverage::released_by_kill,
                              &coverage::released_by_app,
                              &coverage::told_stops,
                              &coverage::voluntary_renewals,
                              &coverage::late_acquires,
                              &coverage::exits};
  for (auto field : fields) this->*field += o.*field;
}

std::string coverage::text() const {
  std::ostringstream out;
  out << runs << " runs, " << steps << " steps, " << terms << " terms, " << stops << " stops ("
      << told_stops << " with a told subscriber, " << voluntary_renewals
      << " renewals during a stop), " << releases << " releases, " << kills << " kills, "
      << acks_accepted << " acks accepted / " << acks_refused
      << " refused; app_stopped passed by: " << released_by_app << " the app report, "
      << released_by_ack << " an ack, " << released_by_gate_timer << " the gate timer, "
      << released_by_kill << " the kill; " << late_acquires << " late acquire replies, " << exits
      << " exits";
  return out.str();
}

// --- the checker -------------------------------------------------------------

time_point simulation::bound(std::uint64_t token) const {
  auto it = bounds_.find(token);
  return it == bounds_.end() ? time_point::min() : it->second;
}

void simulation::check_told(std::uint64_t token, time_point deadline, const char* what) {
  if (deadline > bound(token)) {
    fail(1, std::string(what) + " " + ms_after(origin_, deadline) + " of token " +
                std::to_string(token) + " lies past the independent bound " +
                ms_after(origin_, bound(token)));
  }
}

// Invariant 1 at every moment something happens.
void simulation::check_now() {
  if (violation_) return;
  if (app_.alive && now_ > bound(app_.token)) {
    fail(1, "the app of token " + std::to_string(app_.token) + " still runs past the bound " +
                ms_after(origin_, bound(app_.token)));
  }
  for (const auto& c : clients_) {
    if (c.working_at(now_) && now_ > bound(c.token)) {
      fail(1, "a socket client works for token " + std::to_string(c.token) + " past the bound " +
                  ms_after(origin_, bound(c.token)));
    }
  }
}

// Invariants 2 and 3 when a release goes out.
void simulation::check_release() {
  ++cov_.releases;
  if (++releases_in_term_ > 1) fail(3, "a second release in one term");
  if (app_.active || app_.alive) fail(2, "release while the app has not been reported stopped");
  if (!opts_.require_ack || !stop_under_way_) return;
  if (told_in_term_ && !acked_in_stop_ && !killed_in_stop_ && now_ < kill_deadline_) {
    fail(2,
         "release while a subscriber told to work has not acknowledged, before the kill "
         "deadline " +
             ms_after(origin_, kill_deadline_));
  }
  if (opts_.check_clients_at_release) {
    for (const auto& c : clients_) {
      if (c.working_at(now_)) {
        fail(2, std::string("release while the socket app (") +
                    (c.connected ? "connected" : "disconnected") + ") still works for token " +
                    std::to_string(c.token) + " until " + ms_after(origin_, c.end_of_work()));
      }
    }
  }
}

void simulation::fail(int invariant, std::string what) {
  if (violation_) return;
  note("VIOLATION of invariant " + std::to_string(invariant) + ": " + what);
  violation_ = violation{invariant, "at " + ms_after(origin_, now_) + ": " + what};
}

void simulation::note(const std::string& line) {
  if (opts_.trace) trace_.push_back("[" + ms_after(origin_, now_) + "] " + line);
}

// --- running many seeds ------------------------------------------------------

std::optional<outcome> first_violation(sim_options opts, std::uint64_t first, int runs,
                                       coverage* total) {
  std::vector<std::uint64_t> seeds;
  if (auto only = seed_from_environment()) {
    seeds.push_back(*only);
  } else {
    // BATON_PROPERTY_RUNS=N: a longer soak than the default.
    if (const char* text = std::getenv("BATON_PROPERTY_RUNS"); text && *text) {
      runs = std::max(runs, std::atoi(text));
    }
    for (int i = 0; i < runs; ++i) seeds.push_back(first + static_cast<std::uint64_t>(i));
  }
  for (auto seed : seeds) {
    auto o = opts;
    o.require_ack = seed % 4 != 0;
    o.trace = seeds.size() == 1;
    simulation sim(seed, o);
    auto v = sim.run();
    if (total) total->add(sim.covered());
    if (!v && !o.trace) continue;
    if (!v) {
      for (const auto& line : sim.trace()) std::cout << line << "\n";
      continue;
    }
    // Replay the seed with its trace: the run is deterministic.
    o.trace = true;
    simulation replay(seed, o);
    auto again = replay.run();
    std::ostringstream report;
    report << "seed " << seed << " (BATON_PROPERTY_SEED=" << seed << " replays it)\n"
           << "setup: " << replay.setup() << "\n";
    for (const auto& line : replay.trace()) report << line << "\n";
    if (!again || again->what != v->what) report << "(the replay did not reproduce it!)\n";
    return outcome{seed, *v, report.str()};
  }
  return std::nullopt;
}

std::string failure_text(const outcome& o) {
  return "invariant " + std::to_string(o.found.invariant) + " violated: " + o.found.what + "\n" +
         o.report;
}

}  // namespace baton::testing
