// See status_report.hpp. Field names are public (the socket protocol and
// `baton status --json`): add, never rename.
#include "status_report.hpp"

#include "baton/store_registry.hpp"

#include "app_messages.hpp"
#include "baton/health.hpp"

namespace baton {

nlohmann::json store_report(const store_status& s, time_point now) {
  nlohmann::json j{{"kind", s.kind},
                   {"endpoint", s.endpoint},
                   {"link", to_string(s.link)},
                   {"wakeups", to_string(s.wakeups)}};
  if (!s.last_error.empty()) {
    j["last_error"] = s.last_error;
    j["last_error_kind"] = s.last_error_kind;
    if (s.last_error_at) {
      j["last_error_ago_ms"] = std::chrono::duration_cast<milliseconds>(now - *s.last_error_at).count();
    }
  }
  if (!s.last_reset.empty()) j["last_reset"] = s.last_reset;
  if (!s.members.empty()) {
    auto& members = j["members"] = nlohmann::json::array();
    for (const auto& m : s.members) {
      nlohmann::json member{{"endpoint", m.endpoint}, {"link", to_string(m.link)}, {"role", m.role}};
      // Only a master can hold a copy of the lease: a sentinel or a seed
      // node that says "false" on the leader reads as a lease lost.
      if (m.role == "master") member["holds_lease"] = m.holds_lease;
      if (!m.last_error.empty()) member["last_error"] = m.last_error;
      if (!m.fence.empty()) member["fence"] = m.fence;
      members.push_back(std::move(member));
    }
  }
  return j;
}

nlohmann::json status_report(const status_inputs& in, time_point now) {
  const auto& machine = *in.machine;
  const auto liveness = assess_liveness(machine, now, in.hook_timeout);
  const auto readiness = assess_readiness(machine, now, in.hook_timeout, in.store_answers);
  nlohmann::json s{
      {"node_id", in.node_id},
      {"election", in.election},
      {"state", to_string(machine.current())},
      {"since_ms", std::chrono::duration_cast<milliseconds>(now - machine.since()).count()},
      {"is_leader", machine.leads(now)},
      {"token", machine.token()},
      {"store", store_report(in.store, now)},
      {"protocol", socket_protocol_version}};
  // The Redis-era names of the store's link state and last reset, kept for
  // the clients and scripts that read them.
  const store_kind* kind = find_store_kind(in.store.kind);
  const bool redis_era = kind != nullptr && kind->redis_era_status_names;
  if (redis_era) s["redis"] = to_string(in.store.link);
  if (machine.holds_lease() && machine.valid_until() > now) {
    s["valid_until_mono_ns"] = mono_ns(machine.valid_until());
    s["lease_remaining_ms"] = remaining_ms(machine.valid_until(), now);
    // since_ms restarts with every renewal (working <-> renewing): these do not.
    s["leading_for_ms"] = std::chrono::duration_cast<milliseconds>(now - machine.term_started()).count();
    s["last_renewal_ms_ago"] =
        std::chrono::duration_cast<milliseconds>(now - machine.last_renewal()).count();
  }
  const auto leader = machine.known_leader(in.node_id, now);
  s["leader"] = leader.empty() ? nlohmann::json(nullptr) : nlohmann::json(leader);
  // Where clients reach the leader's service, as its registration says.
  const auto address = leader_advertise(leader, in.node_id, in.advertise, in.candidates);
  s["leader_advertise"] = address.empty() ? nlohmann::json(nullptr) : nlohmann::json(address);
  s["standing"] = in.standing;
  s["advertise"] = in.advertise.empty() ? nlohmann::json(nullptr) : nlohmann::json(in.advertise);
  if (in.last_renew_latency) s["last_renew_latency_ms"] = in.last_renew_latency->count();
  if (!in.store.last_reset.empty() && redis_era) s["redis_reset"] = in.store.last_reset;
  if (in.awaiting_ack) s["awaiting_ack"] = *in.awaiting_ack;
  // child_pid stays the keeper, the process group leader scripts signal.
  if (in.keeper_pid > 0) s["child_pid"] = in.keeper_pid;
  if (in.keeper_pid > 0) s["keeper_pid"] = in.keeper_pid;
  if (in.command_pid > 0) s["command_pid"] = in.command_pid;
  s["transitions"] = in.transitions;
  // healthy/health: liveness, as /healthz; ready/readiness: as /readyz.
  s["healthy"] = liveness.healthy;
  s["health"] = liveness.reason;
  s["ready"] = readiness.healthy;
  s["readiness"] = readiness.reason;
  if (const auto& held = machine.store_held_back(); held.until > now) {
    s["held_back_remaining_ms"] = remaining_ms(held.until, now);
    s["held_back_why"] = held.why;
  }
  if (machine.cooling_down_after_resign(now)) {
    s["cooldown_remaining_ms"] = remaining_ms(machine.held_back_until(), now);
  }
  if (!machine.handing_over_to().empty()) s["switchover_to"] = machine.handing_over_to();
  if (const auto reserved = machine.reserved_for(now); !reserved.empty()) {
    s["reserved_for"] = reserved;
  }
  // The store's candidates, as this node last listed them (the leader with
  // every renewal, a standby when asked for its status).
  s["candidates"] = candidates_report(in.candidates, in.node_id);
  if (in.candidates.at) {
    s["candidates_age_ms"] =
        std::chrono::duration_cast<milliseconds>(now - *in.candidates.at).count();
  }
  if (!in.candidates.error.empty()) s["candidates_error"] = in.candidates.error;
  return s;
}

}  // namespace baton
