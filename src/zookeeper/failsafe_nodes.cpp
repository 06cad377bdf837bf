#include "failsafe_nodes.hpp"

#include <algorithm>

namespace baton::zookeeper_detail {

std::optional<failsafe_hold_info> promise_hold(const std::vector<registration_seen>& others,
                                               const std::string& self, std::uint64_t cleared_token,
                                               std::int64_t server_now_ms) {
  std::optional<failsafe_hold_info> hold;
  for (const auto& r : others) {
    const auto p = promise_left(r.data, r.mtime_ms, server_now_ms);
    if (!p || p->token <= cleared_token || p->leader == self) continue;
    if (!hold) hold.emplace();
    if (p->token > hold->token) {
      hold->token = p->token;
      hold->leader = p->leader;
    }
    hold->peers.push_back({r.node_id, candidate_peer_of(r.data)});
  }
  return hold;
}

acquire_answer failsafe_hold_answer(failsafe_hold_info hold, std::uint64_t counter) {
  acquire_answer a;
  a.outcome = acquire_outcome::held_back;
  a.token = counter;
  a.why = "failsafe hold: " + hold.leader + "'s term " + std::to_string(hold.token) +
          " may still run on its peers' confirmations";
  a.failsafe_hold = std::move(hold);
  return a;
}

acquire_answer abstained_answer(std::uint64_t counter) {
  acquire_answer a;
  a.outcome = acquire_outcome::held_back;
  a.token = counter;
  a.why = "registered only: this node may not take the lease yet (lease.failsafe peers)";
  return a;
}

resume_step decide_resume(const node_seen& record, const node_seen& lease,
                          const resume_facts& facts) {
  using namespace resume_steps;
  write w;
  w.value = {facts.token, facts.node_id, facts.nonce};
  if (lease.exists) {
    const auto value = decode_lease(lease.data);
    if (!value) return bad_data{"the lease node holds data baton did not write"};
    if (value->nonce != facts.nonce || value->token != facts.token) {
      return lost{"the lease node holds " + value->node_id + "'s term " +
                  std::to_string(value->token)};
    }
    w.lease = lease.owner_session == facts.session_id ? lease_write::set : lease_write::replace;
    w.lease_version = lease.version;
  }
  failsafe_term term{facts.token, facts.list.seq, facts.node_id,
                     facts.nonce, facts.address,  facts.list.peers};
  if (!record.exists) {
    // The ensemble lost its data: the counter starts at the term's token,
    // so the next grant's is above it.
    w.record.counter = facts.token;
    w.record.failsafe = std::move(term);
    return w;
  }
  const auto rec = decode_record(record.data);
  if (!rec) return bad_data{"the record node holds data baton did not write"};
  if (rec->released == facts.token) {
    return lost{"the record says term " + std::to_string(facts.token) + " was released"};
  }
  if (rec->failsafe) {
    const auto& t = *rec->failsafe;
    if (t.node_id != facts.node_id || t.nonce != facts.nonce || t.token != facts.token) {
      return lost{"the record holds " + t.node_id + "'s term " + std::to_string(t.token)};
    }
    // A list already written with a higher number stays (F1).
    if (t.seq >= term.seq) {
      term.seq = t.seq;
      term.peers = t.peers;
    }
  } else if (rec->counter > facts.token) {
    return lost{"the record counted term " + std::to_string(rec->counter) + " since"};
  }
  w.record = *rec;
  w.record.counter = std::max(rec->counter, facts.token);
  // A reservation is for a free lease; this term holds it again.
  w.record.reserved_for.clear();
  w.record.reserved_by.clear();
  w.record.reserved_window = milliseconds(0);
  w.record.failsafe = std::move(term);
  w.record_exists = true;
  w.record_version = record.version;
  return w;
}

}  // namespace baton::zookeeper_detail
