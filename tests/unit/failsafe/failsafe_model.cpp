// The world of failsafe_model.hpp around the candidates: the event queue on
// the simulated real clock, each node's own clock, the delivery of store
// calls and peer messages (delayed, lost, duplicated, cut), the app and its
// keeper, and the faults planned at the start of a run.
#include <algorithm>
#include <cmath>

#include "baton/lease_drift.hpp"
#include "failsafe_model.hpp"

namespace baton::testing {

model::model(const model_config& cfg, std::uint64_t seed, bool tracing)
    : cfg_(cfg), rng_(seed), tracing_(tracing) {
  const std::size_t n = cfg.nodes + cfg.joiners;
  timing_ = {model_ttl, lease_drift(model_ttl, 0.01)};
  store_.rate = 1.0 + uniform(-cfg.rate_error, cfg.rate_error);
  nodes_.resize(n);
  store_link_.assign(n, true);
  peer_link_.assign(n, std::vector<bool>(n, true));
  for (std::size_t i = 0; i < n; ++i) {
    auto& node = nodes_[i];
    node.name = "n" + std::to_string(i);
    node.rate = 1.0 + uniform(-cfg.rate_error, cfg.rate_error);
    node.origin_ns = uniform(1e9, 1e12);
    const us start = i < cfg.nodes ? pick(0, 5'000) : pick(ttl_us, end_us - 5 * ttl_us);
    schedule(start, [this, i] { boot(i); });
    if (i >= cfg.nodes) joins_.push_back(start);
  }
  plan_faults();
}

void model::run() {
  std::size_t steps = 0;
  while (!events_.empty() && steps++ < max_events) {
    const event e = events_.top();
    events_.pop();
    if (e.at > end_us) break;
    now_ = e.at;
    auto action = std::move(actions_[e.seq]);
    action();
  }
  figures_.cut_short = steps > max_events;
  now_ = std::max(now_, end_us);
  for (std::size_t i = 0; i < nodes_.size(); ++i) stop_app(i, "end of the run");
}

std::string model::trace_text(us from, us to) const {
  std::string out;
  int lines = 0;
  for (const auto& [at, line] : trace_) {
    if (at < from || at > to) continue;
    if (++lines > 160) break;
    out += std::to_string(at) + " " + line + "\n";
  }
  return out;
}

us model::pick(us lo, us hi) {
  return std::uniform_int_distribution<us>(lo, hi)(rng_);
}
double model::uniform(double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng_);
}
bool model::chance(double p) {
  return std::bernoulli_distribution(p)(rng_);
}

void model::schedule(us at, std::function<void()> f) {
  actions_.push_back(std::move(f));
  events_.push({std::max(at, now_), seq_++});
}

// --- clocks ------------------------------------------------------------------

time_point model::local(std::size_t i) const {
  const auto& n = nodes_[i];
  const double ns = n.origin_ns + n.rate * static_cast<double>(now_) * 1000.0;
  return time_point{} + std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
}
// The real microsecond at which node i's clock shows `t`, rounded up.
us model::real_of(std::size_t i, time_point t) const {
  const auto& n = nodes_[i];
  const double ns = static_cast<double>(t.time_since_epoch().count());
  return static_cast<us>(std::ceil((ns - n.origin_ns) / n.rate / 1000.0));
}
// When to look at `t` on node i's clock: then, or just after now.
us model::real_at(std::size_t i, time_point t) const {
  const us at = real_of(i, t);
  return std::max(at, now_ + (at <= now_ ? 1 : 0));
}
us model::micros(mono_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

// --- delivery ----------------------------------------------------------------

us model::delay() {
  if (chance(0.05)) return pick(3'000, 40'000);  // a slow path, a retransmission
  return pick(50, 3'000);
}

// Runs `f` in node i's daemon at `at`: dropped if that process died,
// deferred while it is paused (its keeper is not: see arm_keeper).
void model::at_node(std::size_t i, us at, std::function<void()> f) {
  const std::uint64_t gen = nodes_[i].gen;
  schedule(at, [this, i, gen, f = std::move(f)]() mutable { run_at_node(i, gen, std::move(f)); });
}
void model::run_at_node(std::size_t i, std::uint64_t gen, std::function<void()> f) {
  auto& n = nodes_[i];
  if (!n.alive || n.gen != gen) return;
  if (now_ < n.paused_until) {
    schedule(n.paused_until,
             [this, i, gen, f = std::move(f)]() mutable { run_at_node(i, gen, std::move(f)); });
    return;
  }
  f();
}

// A store call from node i: `op` runs at the store if the request gets
// there, `answer` at the node if the reply gets back before the timeout;
// `failed` at the timeout otherwise (the op may still have run).
void model::call_store(std::size_t i, std::function<store_answer()> op,
                       std::function<void(const store_answer&)> answer,
                       std::function<void()> failed) {
  auto& n = nodes_[i];
  const std::uint64_t id = ++call_ids_;
  n.call = id;
  at_node(i, now_ + call_timeout_us, [this, i, id, failed] {
    if (nodes_[i].call != id) return;
    nodes_[i].call = 0;
    failed();
  });
  if (!store_link_[i] || chance(0.02)) return;
  schedule(now_ + delay(), [this, i, id, op = std::move(op), answer = std::move(answer)] {
    if (!store_.up || !store_link_[i]) return;
    const store_answer a = op();
    if (chance(0.02)) return;
    at_node(i, now_ + delay(), [this, i, id, a, answer] {
      if (nodes_[i].call != id || !store_link_[i]) return;
      nodes_[i].call = 0;
      answer(a);
    });
  });
}

// A message from node i to node j: `deliver` runs in j's daemon, maybe
// twice (a duplicate), or never.
void model::send_peer(std::size_t i, std::size_t j, std::function<void()> deliver) {
  if (!peer_link_[i][j] || chance(0.02)) return;
  const int copies = chance(0.02) ? 2 : 1;
  for (int c = 0; c < copies; ++c) {
    schedule(now_ + delay(), [this, i, j, deliver] {
      if (!peer_link_[i][j]) return;
      at_node(j, now_, deliver);
    });
  }
}

std::size_t model::index_of(const std::string& name) const {
  return static_cast<std::size_t>(std::stoul(name.substr(1)));
}

// --- the app and its keeper --------------------------------------------------

void model::start_app(std::size_t i) {
  auto& n = nodes_[i];
  n.app_running = true;
  n.app_from = now_;
  ++n.app_gen;
  n.keeper_deadline = n.deadline;
  trace([&] { return n.name + " starts its app, token " + std::to_string(n.term.token); });
  arm_keeper(i);
}
// The keeper kills the app at its deadline on the node's clock, paused
// daemon or not.
void model::arm_keeper(std::size_t i) {
  auto& n = nodes_[i];
  const std::uint64_t app_gen = n.app_gen;
  schedule(real_at(i, n.keeper_deadline), [this, i, app_gen] {
    auto& node = nodes_[i];
    if (!node.app_running || node.app_gen != app_gen) return;
    if (local(i) >= node.keeper_deadline) {
      stop_app(i, "the keeper's deadline");
    } else {
      arm_keeper(i);  // a rounding short of it: look again
    }
  });
}
// The daemon tells the keeper a later deadline: only while the app runs
// and its deadline has not passed (the keeper killed it then).
void model::extend_keeper(std::size_t i) {
  auto& n = nodes_[i];
  if (!n.app_running || local(i) >= n.keeper_deadline || n.deadline <= n.keeper_deadline) return;
  n.keeper_deadline = n.deadline;
  arm_keeper(i);
}
// How long the app has run past its store validity: on confirmations.
void model::note_on_confirmations(std::size_t i) {
  auto& n = nodes_[i];
  if (!n.app_running || local(i) <= n.store_valid) return;
  const us past = now_ - real_of(i, n.store_valid);
  figures_.longest_on_confirmations = std::max(figures_.longest_on_confirmations, past);
}

void model::stop_app(std::size_t i, const char* why) {
  auto& n = nodes_[i];
  note_on_confirmations(i);
  if (!n.app_running) return;
  n.app_running = false;
  apps_.push_back({i, n.app_from, now_});
  trace([&] { return n.name + " app stops: " + why; });
}

// --- faults ------------------------------------------------------------------

bool model::clear_of_quiet(us from, us to) const {
  return std::none_of(quiet_.begin(), quiet_.end(),
                      [&](const auto& q) { return from < q.second && q.first < to; });
}

// A fault over [from, from + length) that keeps out of the quiet ranges,
// or nullopt after a few tries.
std::optional<us> model::fault_start(us length) {
  for (int tries = 0; tries < 8; ++tries) {
    const us from = pick(0, end_us - length);
    if (clear_of_quiet(from, from + length)) return from;
  }
  return std::nullopt;
}

std::size_t model::leader_or_any() {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].leading && nodes_[i].alive) return i;
  }
  return static_cast<std::size_t>(pick(0, static_cast<us>(nodes_.size()) - 1));
}

void model::plan_faults() {
  // Store outages, some ending in a restart that lost everything.
  for (int k = pick(0, 2); k > 0; --k) {
    const us length = pick(ttl_us / 2, 8 * ttl_us);
    const us from = pick(0, end_us - length);
    const bool loses = chance(0.5);
    if (loses) {
      quiet_.push_back({from, from + length + 2 * ttl_us});
    }
    schedule(from, [this] {
      trace([] { return std::string("store down"); });
      store_.up = false;
    });
    schedule(from + length, [this, loses] {
      if (loses) {
        ++figures_.data_losses;
        store_.wipe(now_);
      }
      trace([loses] { return std::string(loses ? "store back, empty" : "store back"); });
      store_.up = true;
    });
  }
  // The leader (whoever leads then) cut from the store.
  for (int k = pick(0, 3); k > 0; --k) {
    const us length = pick(ttl_us / 2, 10 * ttl_us);
    const auto from = fault_start(length);
    if (!from) continue;
    schedule(*from, [this, length] {
      const std::size_t i = leader_or_any();
      trace([&] { return nodes_[i].name + " cut from the store"; });
      store_link_[i] = false;
      schedule(now_ + length, [this, i] {
        trace([&] { return nodes_[i].name + " reaches the store again"; });
        store_link_[i] = true;
      });
    });
  }
  // A link between two nodes cut (often one end the leader).
  for (int k = pick(0, 3); k > 0; --k) {
    const us length = pick(ttl_us / 2, 10 * ttl_us);
    const auto from = fault_start(length);
    if (!from) continue;
    schedule(*from, [this, length] {
      const std::size_t a =
          chance(0.6) ? leader_or_any()
                      : static_cast<std::size_t>(pick(0, static_cast<us>(nodes_.size()) - 1));
      std::size_t b = static_cast<std::size_t>(pick(0, static_cast<us>(nodes_.size()) - 2));
      if (b >= a) ++b;
      trace([&] { return "link " + nodes_[a].name + " - " + nodes_[b].name + " cut"; });
      peer_link_[a][b] = peer_link_[b][a] = false;
      schedule(now_ + length, [this, a, b] { peer_link_[a][b] = peer_link_[b][a] = true; });
    });
  }
  // Daemon pauses.
  for (int k = pick(0, 3); k > 0; --k) {
    const us length = pick(5'000, 2 * ttl_us);
    const auto from = fault_start(length);
    if (!from) continue;
    schedule(*from, [this, length] {
      const std::size_t i =
          chance(0.5) ? leader_or_any()
                      : static_cast<std::size_t>(pick(0, static_cast<us>(nodes_.size()) - 1));
      trace([&] { return nodes_[i].name + " paused"; });
      nodes_[i].paused_until = std::max(nodes_[i].paused_until, now_ + length);
    });
  }
  // A join, then the leader cut from the store: the renewal that first
  // lists the newcomer may land without its answer.
  for (const us joined : joins_) {
    if (!chance(0.5)) continue;
    const us from = joined + pick(30'000, 90'000);
    const us length = pick(ttl_us, 10 * ttl_us);
    if (from + length > end_us || !clear_of_quiet(from, from + length)) continue;
    schedule(from, [this, length] {
      const std::size_t i = leader_or_any();
      trace([&] { return nodes_[i].name + " cut from the store after a join"; });
      store_link_[i] = false;
      schedule(now_ + length, [this, i] { store_link_[i] = true; });
    });
  }
  // Crashes and restarts, often of a node that keeps a promise, often
  // back within that promise.
  for (int k = pick(0, 3); k > 0; --k) {
    const us length = chance(0.5) ? pick(1'000, ttl_us / 2) : pick(1'000, 3 * ttl_us);
    const auto from = fault_start(length);
    if (!from) continue;
    schedule(*from, [this, length] { crash(promise_keeper_or_any(), length); });
  }
}

std::size_t model::promise_keeper_or_any() {
  std::vector<std::size_t> keepers;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].alive && nodes_[i].peer && nodes_[i].peer->kept(local(i))) keepers.push_back(i);
  }
  if (!keepers.empty() && chance(0.7)) {
    return keepers[static_cast<std::size_t>(pick(0, static_cast<us>(keepers.size()) - 1))];
  }
  return static_cast<std::size_t>(pick(0, static_cast<us>(nodes_.size()) - 1));
}

}  // namespace baton::testing
