// The store of failsafe_model.hpp: the lease, the token counter, the record
// of the term and the registrations with their promises, each judged on the
// store's own clock. What it answers is what the store kinds answer
// (docs/safety.md, "Peer-confirmed leadership", F6 to F9).
#include <algorithm>

#include "failsafe_model.hpp"

namespace baton::testing {

using failsafe::term_id;

void model_store::wipe(us now) {
  lease.reset();
  record.reset();
  registry.clear();
  counter = highest + 1000;  // seeded from TIME: above every token it gave
  fence_until = clock(now) + ttl_us;
}

void model_store::enroll(const std::string& node, us now, std::optional<term_id> promised,
                         us promise_left) {
  auto& r = registry[node];
  r.until = clock(now) + 2 * ttl_us;
  r.promised = std::move(promised);
  r.promise_until = r.promised ? clock(now) + promise_left : 0;
}

std::vector<std::string> model_store::live_candidates(us now, const std::string& except) const {
  std::vector<std::string> out;
  for (const auto& [node, r] : registry) {
    if (node != except && r.until > clock(now)) out.push_back(node);
  }
  return out;
}

store_answer model_store::acquire(const std::string& node, int incarnation, std::uint64_t cleared,
                                  bool may_win, std::optional<term_id> promised, us promise_left,
                                  us now) {
  enroll(node, now, std::move(promised), promise_left);
  store_answer a{store_answer::registered};
  if (!may_win) return a;
  if (clock(now) < fence_until) {
    a.what = store_answer::held_back;
    a.remaining = fence_until - clock(now);
    return a;
  }
  if (lease_live(now)) {
    a.what = store_answer::held;
    a.remaining = lease->until - clock(now);
    return a;
  }
  // F6: the record's unreleased term, unless the caller cleared it.
  if (record && !record->released && record->term.token > cleared) {
    a.what = store_answer::hold;
    a.failsafe = {record->term, record->list};
    return a;
  }
  // F9: a promise another candidate registered, for a term not cleared.
  std::optional<term_id> promised_term;
  for (const auto& [other, r] : registry) {
    if (other == node || !r.promised || r.promise_until <= clock(now)) continue;
    if (r.promised->token <= cleared) continue;
    if (!promised_term || r.promised->token > promised_term->token) promised_term = r.promised;
  }
  if (promised_term) {
    a.what = store_answer::hold;
    a.failsafe.term = *promised_term;
    for (const auto& [other, r] : registry) {
      if (r.promised && *r.promised == *promised_term && r.promise_until > clock(now)) {
        a.failsafe.peers.push_back(other);
      }
    }
    return a;
  }
  const std::uint64_t token = ++counter;
  highest = std::max(highest, token);
  lease = store_lease{node, incarnation, token, clock(now) + ttl_us};
  record = store_record{{node, token}, incarnation, live_candidates(now, node), 0, false};
  a.what = store_answer::granted;
  a.token = token;
  a.registry = record->list;
  return a;
}

store_answer model_store::renew(const std::string& node, int incarnation, std::uint64_t token,
                                std::uint64_t seq, const std::vector<std::string>& list, us now) {
  enroll(node, now, std::nullopt, 0);
  if (!lease_live(now) || !ours(node, incarnation, token)) return {store_answer::lost};
  lease->until = clock(now) + ttl_us;
  if (record && record->term == term_id{node, token} && seq > record->list_seq) {
    record->list = list;
    record->list_seq = seq;
  }
  store_answer a{store_answer::renewed};
  a.registry = live_candidates(now, node);
  return a;
}

// F8: the same term back, only if nobody else holds the lease and the
// record is this term's, unreleased, or gone with the store's data.
store_answer model_store::resume(const std::string& node, int incarnation, std::uint64_t token,
                                 std::uint64_t seq, const std::vector<std::string>& list, us now) {
  enroll(node, now, std::nullopt, 0);
  if (lease_live(now) && !ours(node, incarnation, token)) return {store_answer::lost};
  if (record && (record->term != term_id{node, token} ||
                 record->holder_incarnation != incarnation || record->released)) {
    return {store_answer::lost};
  }
  lease = store_lease{node, incarnation, token, clock(now) + ttl_us};
  counter = std::max(counter, token);
  if (!record) record = store_record{{node, token}, incarnation, {}, 0, false};
  if (seq > record->list_seq) {
    record->list = list;
    record->list_seq = seq;
  }
  store_answer a{store_answer::resumed};
  a.registry = live_candidates(now, node);
  return a;
}

store_answer model_store::release(const std::string& node, int incarnation, std::uint64_t token,
                                  us now) {
  if (lease_live(now) && ours(node, incarnation, token)) {
    lease.reset();
    if (record && record->term == term_id{node, token}) record->released = true;
  }
  return {store_answer::released};
}

}  // namespace baton::testing
