// The etcd store's registration among the candidates: put in a call's own
// txn when it is due (candidate_registry.hpp says when), read back by it;
// the candidates' list (async_candidates), whose lapsed registrations are
// deleted on the way; and the cool-down mark a switchover weighs.
#include "etcd_store_impl.hpp"

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace baton {
namespace {

// The most lapsed registrations one candidates call deletes (one txn; etcd
// refuses more than 128 operations in one).
constexpr std::size_t prune_at_most = 64;

}  // namespace

etcd_store::impl::registering_call etcd_store::impl::registering_txn(std::vector<txn_op> reads,
                                                                     time_point sent) const {
  std::vector<txn_op> ops;
  if (run.due(sent) || failsafe_put_due(sent)) {
    registration r{options.identity.priority, run.live_at(sent),
                   clock.seen_by(sent - 2 * options.identity.ttl)};
    r.card = options.identity.card;
    r.failsafe = failsafe_fields(sent);
    ops.push_back({txn_op::kind::put,
                   keys.candidate(options.identity.node_id),
                   registration_value(r),
                   0,
                   {}});
  }
  const std::size_t first_read = ops.size();
  for (auto& op : reads) ops.push_back(std::move(op));
  auto body = txn_request({}, ops);
  return {std::move(body), first_read, std::move(ops)};
}

// A call's txn answered: its put (if it had one) noted, and what its reads
// found at this store's registration key.
void etcd_store::impl::registered(const txn_answer& t, bool put, time_point sent,
                                  const std::optional<key_value>& own) {
  if (!t.succeeded) throw std::runtime_error("a txn without conditions did not succeed");
  if (put) {
    run.put(sent, t.hdr.revision);
    const auto f = failsafe_fields(sent);
    promise_registered = f && f->promise_token != 0;
  }
  run.found(own, t.hdr.revision);
}

std::optional<key_value> etcd_store::impl::own_registration(
    const std::vector<key_value>& kvs) const {
  const auto key = keys.candidate(options.identity.node_id);
  for (const auto& kv : kvs)
    if (kv.key == key) return kv;
  return std::nullopt;
}

// The registrations, judged (candidate_registry.hpp); the lapsed ones
// deleted, each only if unchanged, with nobody waiting for it.
void etcd_store::impl::list_candidates(std::shared_ptr<candidates_handler> h) {
  request<std::vector<candidate_info>>(
      h, "/v3/kv/range", range_request(keys.candidates, keys.state), [this, h](const json& j) {
        const auto hdr = read_header(j);
        const auto kvs = read_range(j);
        seen(hdr);
        auto judged = judge_candidates(kvs, keys.candidates, clock, mono_clock::now(),
                                       2 * options.identity.ttl);
        if (judged.lapsed.size() > prune_at_most) judged.lapsed.resize(prune_at_most);
        std::vector<compare> unchanged;
        std::vector<txn_op> deletes;
        for (const auto& kv : judged.lapsed) {
          unchanged.push_back({kv.key, "MOD", kv.mod_revision});
          deletes.push_back({txn_op::kind::remove, kv.key, {}, 0, {}});
        }
        if (!deletes.empty()) forget("/v3/kv/txn", txn_request(unchanged, deletes));
        (*h)({}, std::move(judged.live));
      });
}

void etcd_store::async_candidates(candidates_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.list_candidates(std::make_shared<candidates_handler>(std::move(handler)));
}

void etcd_store::register_cooldown(milliseconds cooldown) {
  auto& d = *impl_;
  if (d.shell.closed()) return;
  const auto now = mono_clock::now();
  // The mark carries the mode's fields as they are now: a promise told
  // again counts down from the mark's put, so it is never shortened.
  const auto put = cooling_mark(d.run, now, d.options.identity.priority,
                                d.clock.seen_by(now - 2 * d.options.identity.ttl), cooldown,
                                d.options.identity.card, d.failsafe_fields(now));
  if (!put) return;
  // Only over the registration it marks; whatever comes of it, the next
  // call puts a plain one, which ends the cool-down. Best effort, as the
  // registration is: nobody waits for the answer.
  const auto key = d.keys.candidate(d.options.identity.node_id);
  d.run.lost();
  d.forget("/v3/kv/txn", txn_request({{key, "MOD", put->over}},
                                     {{txn_op::kind::put, key, put->value, 0, {}}}));
}

void etcd_store::update_card(std::string card) {
  auto& d = *impl_;
  d.options.identity.card = std::move(card);
  // The next call puts the registration, with the new card.
  d.run.lost();
}

// A candidate that may not lead makes this call instead of its attempts, as
// often: one txn of the registration's put when one is due
// (registration_run) and a read of the lease key, whose holder and token it
// answers as an acquire's held answer names them. With lease.failsafe peers
// it does not register, as the Redis kinds do not: every listed candidate
// is a peer a leader asks, and one that may not lead answers none. It reads
// the record too, which knows a resumed term's token.
void etcd_store::async_look(look_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  const auto sent = mono_clock::now();
  std::vector<txn_op> reads = {{txn_op::kind::range, d.keys.lease, {}, 0, {}},
                               {txn_op::kind::range, d.keys.failsafe, {}, 0, {}}};
  auto call = d.failsafe_on() ? impl::registering_call{txn_request({}, reads), 0, reads}
                              : d.registering_txn(std::move(reads), sent);
  auto h = std::make_shared<look_handler>(std::move(handler));
  d.request<lease_holder>(h, "/v3/kv/txn", call.body,
                          [&d, h, sent, reads = call.first_read](const json& j) {
                            const auto t = read_txn(j);
                            const auto kvs = read_txn_range(j, reads);
                            const auto record = read_txn_range(j, reads + 1);
                            d.seen(t.hdr);
                            if (reads > 0 && t.succeeded) d.run.put(sent, t.hdr.revision);
                            lease_holder out;
                            if (kvs.size() == 1) {
                              out.node = holder_of(kvs[0].value);
                              out.token = d.token_of_lease(
                                  kvs[0], record.size() == 1 ? std::optional<key_value>(record[0])
                                                             : std::nullopt);
                            }
                            (*h)({}, std::move(out));
                          });
}

}  // namespace baton
