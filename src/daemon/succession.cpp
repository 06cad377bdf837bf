// Succession (see succession.hpp): candidates, preemption, switchover and
// resign, carried out as events the driver steps.
#include "succession.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "baton/duration.hpp"

namespace baton {

succession_settings succession_settings_of(const config& cfg) {
  return {cfg.node_id,
          static_cast<int>(cfg.priority),
          cfg.lease.ttl,
          cfg.lease.renew_interval,
          cfg.lease.preempt_delay,
          cfg.lease.resign_cooldown};
}

std::optional<candidate_info> preemption_due(bool can_resign, bool handing_over,
                                             time_point term_started,
                                             const candidate_snapshot& known,
                                             const succession_settings& s, time_point now) {
  if (!can_resign || handing_over) return std::nullopt;
  const auto led_for = std::chrono::duration_cast<milliseconds>(now - term_started);
  const auto settle = std::max(s.preempt_delay, s.resign_cooldown);
  return preemption_target(known, s.self, s.priority, s.preempt_delay, led_for, settle, now);
}

switchover_question switchover_question_for(const switchover_request& r,
                                            const succession_settings& s, time_point now) {
  switchover_question q;
  q.to = r.to;
  q.self = s.self;
  q.own_priority = s.priority;
  q.now = now;
  // Listed with the last renewal: at most two renew intervals old while
  // renewals succeed.
  q.list_max_age = 2 * s.renew_interval + s.ttl / 10;
  // A standby tries again just after the lease could end (at most a ttl
  // after its attempt), plus its stagger and yield (under a sixth of a
  // ttl); a renew interval more for a loaded host and the store's clock.
  q.attempt_gap = s.ttl + s.ttl / 6 + s.renew_interval;
  q.preempt_delay = s.preempt_delay;
  q.force = r.force;
  return q;
}

succession::succession(const config& cfg, lease_store& store, leadership_view machine,
                       std::function<void(event)> post, std::function<void()> count_switchover)
    : cfg_(cfg),
      store_(store),
      machine_(machine),
      post_(std::move(post)),
      count_switchover_(std::move(count_switchover)) {}

// The leader lists the election's candidates with every renewal, so that a
// switchover can check its target at once: in the renewal itself where the
// store can (the Redis kinds, whose renewal reads the registry anyway: a
// thousand leaders on one Redis would otherwise double its scripts), else
// one call per renew interval, the leader's alone (a standby's store
// traffic does not change). A standby lists them only when its status is
// asked for and its list is older than a ttl; that status shows the list it
// had.
void succession::refresh_candidates() {
  if (candidates_in_flight_) return;
  candidates_in_flight_ = true;
  store_.async_candidates([this](store_error e, std::vector<candidate_info> list) {
    // After close() the store completes what was in flight as cancelled.
    if (e.code == std::errc::operation_canceled) return;
    candidates_in_flight_ = false;
    if (e) {
      candidates_.error = e.message();
      return;
    }
    listed(std::move(list));
  });
}

void succession::refresh_with_renewal() {
  if (!store_.lists_with_renewals()) refresh_candidates();
}

void succession::listed(std::vector<candidate_info> list) {
  candidates_.update(std::move(list), mono_clock::now());
  consider_preemption();
}

void succession::refresh_stale_candidates() {
  if (!candidates_.at || mono_clock::now() - *candidates_.at > cfg_.lease.ttl) {
    refresh_candidates();
  }
}

void succession::refresh_for_leader(const std::string& leader) {
  if (leader.empty() || leader == cfg_.node_id) return;
  const bool listed = std::any_of(candidates_.list.begin(), candidates_.list.end(),
                                  [&](const candidate_info& c) { return c.node == leader; });
  const auto now = mono_clock::now();
  if (listed || (leader_refresh_at_ && now - *leader_refresh_at_ < cfg_.lease.ttl / 10)) return;
  leader_refresh_at_ = now;
  refresh_candidates();
}

// A leader hands over to a live candidate of a higher priority, by the
// graceful path a switchover takes, once that candidate has been live for
// lease.preempt_delay.
void succession::consider_preemption() {
  const auto s = succession_settings_of(cfg_);
  const auto target =
      preemption_due(machine_.can_resign(), !machine_.handing_over_to().empty(),
                     machine_.term_started(), candidates_, s, mono_clock::now());
  if (!target) return;
  spdlog::info("preempted: {} (priority {}, a live candidate for {}) outranks this node "
               "(priority {}): stopping the app, releasing the lease reserved for {} for {}ms",
               target->node, target->priority, format_duration(target->live_for), s.priority,
               target->node, s.ttl.count());
  count_switchover_();
  post_(events::resign{target->node, s.ttl, true});
}

nlohmann::json succession::switchover(const nlohmann::json& request, const peer_info& peer) {
  const auto r = parse_switchover_request(request, cfg_.lease.ttl, 10 * cfg_.lease.ttl);
  if (!machine_.can_resign()) {
    throw std::runtime_error(std::string("not the leader (state ") +
                             to_string(machine_.current()) + "): ask the leader's daemon");
  }
  const auto verdict = vet_switchover(
      switchover_question_for(r, succession_settings_of(cfg_), mono_clock::now()), candidates_);
  if (verdict.decision == switchover_decision::refuse) {
    spdlog::warn("switchover to {} refused: {}", r.to, verdict.why);
    throw std::runtime_error("refused: " + verdict.why);
  }
  if (verdict.decision == switchover_decision::warn) {
    spdlog::warn("switchover to {} forced: {}", r.to, verdict.why);
  }
  const auto token = machine_.token();
  spdlog::info("switchover to {} requested by pid {} (uid {}): stopping the app, releasing the "
               "lease reserved for {} for {}ms, then staying out of the election for {}ms",
               r.to, peer.pid, peer.uid, r.to, r.window.count(),
               cfg_.lease.resign_cooldown.count());
  count_switchover_();
  post_(events::resign{r.to, r.window});
  nlohmann::json reply{{"node_id", cfg_.node_id},
                       {"to", r.to},
                       {"token", token},
                       {"window_ms", r.window.count()},
                       {"cooldown_ms", cfg_.lease.resign_cooldown.count()}};
  if (verdict.decision == switchover_decision::warn) reply["warning"] = verdict.why;
  return reply;
}

candidate_info succession::drain_successor() const {
  if (!machine_.can_resign()) {
    throw std::runtime_error(std::string("not the leader (state ") +
                             to_string(machine_.current()) + ")");
  }
  const auto s = succession_settings_of(cfg_);
  auto order = candidates_.list;
  const auto now = mono_clock::now();
  std::sort(order.begin(), order.end(), [&](const candidate_info& a, const candidate_info& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    const auto la = candidates_.live_for(a, now), lb = candidates_.live_for(b, now);
    if (la != lb) return la > lb;
    return a.node < b.node;
  });
  std::string why;
  for (const auto& c : order) {
    if (c.node == s.self) continue;
    auto q = switchover_question_for({c.node, s.ttl, false}, s, now);
    // This node, drained, never comes back: it outranks nobody.
    q.own_priority = std::numeric_limits<int>::min();
    const auto verdict = vet_switchover(q, candidates_);
    if (verdict.decision != switchover_decision::refuse) return c;
    // A list too old refuses every one alike: say it once.
    if (why.find(verdict.why) == std::string::npos) {
      why += (why.empty() ? "" : "; ") + verdict.why;
    }
  }
  if (why.empty()) {
    why = candidates_.at ? "no other candidate is listed"
                         : "the store's list of candidates is not known yet";
  }
  throw std::runtime_error("no candidate can take over (" + why + ")");
}

void succession::hand_over_for_drain(const candidate_info& to, const peer_info& peer) {
  spdlog::info("drain requested by pid {} (uid {}): stopping the app, releasing the lease "
               "reserved for {} for {}ms; this node takes no lease until `baton undrain`",
               peer.pid, peer.uid, to.node, cfg_.lease.ttl.count());
  count_switchover_();
  post_(events::resign{to.node, cfg_.lease.ttl});
}

nlohmann::json succession::resign(const peer_info& peer) {
  if (!machine_.can_resign()) {
    throw std::runtime_error(std::string("not the leader (state ") +
                             to_string(machine_.current()) + "): nothing to resign");
  }
  const auto token = machine_.token();
  spdlog::info("resign requested by pid {} (uid {}): stopping the app, releasing the lease, then "
               "staying out of the election for {}ms",
               peer.pid, peer.uid, cfg_.lease.resign_cooldown.count());
  post_(events::resign{});
  return {{"node_id", cfg_.node_id},
          {"token", token},
          {"cooldown_ms", cfg_.lease.resign_cooldown.count()}};
}

}  // namespace baton
