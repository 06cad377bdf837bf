// The term the etcd store holds, and its calls: renew (a keepalive of the
// term's lease, then a read that the lease key is still the term's), release
// (a revoke, which deletes the term's keys in the same step) and hand-over
// (a reservation on a lease of the window, put in the txn that deletes the
// lease key, then the term's lease revoked).
#include "etcd_store_impl.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace baton {

// A release: a revoke of the term's lease. etcd deletes the keys on it (the
// lease key and the holder key, only ever this term's) in the same step as
// the lease. A delete first and a revoke after would leave a moment in
// which a standby woken by the delete finds the lease alive and must count
// it as held (take()), and a handover would wait for its next try.
//
// A revoke answered in a later raft term than the term began in looks to a
// standby like a former raft leader's early revoke, which it waits out;
// the released key, put after it, tells it this end was a release, made
// after the app stopped (mark_released).
void etcd_store::impl::revoke(std::shared_ptr<release_handler> h, held_term t) {
  client->post("/v3/lease/revoke", lease_id_request(t.lease),
               [this, weak = shell.guard(), h, t](store_error e, json j) {
                 if (weak.expired()) return;
                 if (shell.closed()) return (*h)(store_shell::aborted(), release_answer{});
                 if (term && term->lease == t.lease) term.reset();
                 // Gone already: it expired, and another may hold the key.
                 if (e && e.detail.find("lease not found") != std::string::npos) {
                   return (*h)({}, release_answer::not_ours);
                 }
                 if (e) return (*h)(shell.note_failure(std::move(e)), release_answer{});
                 header hdr;
                 try {
                   hdr = read_header(j);
                 } catch (const std::exception& ex) {
                   return (*h)(shell.note_failure({etcd_errc::unexpected_reply,
                                                   "etcd " + where() + ": " + ex.what()}),
                               release_answer{});
                 }
                 seen(hdr);
                 if (t.raft_term == 0 || hdr.raft_term == 0 || hdr.raft_term > t.raft_term) {
                   return mark_released(h, t);
                 }
                 (*h)({}, release_answer::released);
               });
}

// Answered before the release is: a daemon that exits after its release
// would otherwise cut it off. Its failure leaves standbys waiting out the
// holder's deadline, which is safe, so the release stands.
void etcd_store::impl::mark_released(std::shared_ptr<release_handler> h, held_term t) {
  client->post(
      "/v3/kv/txn",
      txn_request({}, {{txn_op::kind::put, keys.released, std::to_string(t.lease), 0, {}}}),
      [this, weak = shell.guard(), h](store_error, json) {
        if (weak.expired()) return;
        if (shell.closed()) return (*h)(store_shell::aborted(), release_answer{});
        (*h)({}, release_answer::released);
      });
}

// A hand-over: a lease of the window (rounded up to whole seconds), then
// one txn that, only if the lease key is still this term's, deletes the
// lease and holder keys (watchers hear a release, as a revoke's deletes
// say it) and puts the reserved key on that lease. The term's lease is
// revoked after it, before the answer (a daemon that exits on the answer
// would cut the revoke off); the target need not wait for that revoke,
// since the reservation names the lease as released (take()).
void etcd_store::impl::hand_over(std::shared_ptr<release_handler> h, held_term t, std::string to,
                                 milliseconds window) {
  auto reserve_for = [this, h, t, to = std::move(to)](const json& j) {
    const auto g = read_grant(j);
    seen(g.hdr);
    if (!term || term->lease != t.lease) {
      forget("/v3/lease/revoke", lease_id_request(g.id));
      return (*h)({}, release_answer::not_ours);
    }
    reserve(h, t, reservation{to, options.identity.node_id, t.lease}, g.id);
  };
  request<release_answer>(h, "/v3/lease/grant", grant_request(lease_seconds(window)),
                          std::move(reserve_for));
}

// The hand-over's txn, with the reservation on the etcd lease `window`.
void etcd_store::impl::reserve(std::shared_ptr<release_handler> h, held_term t,
                               const reservation& r, std::int64_t window) {
  const std::vector<compare> ours = {{keys.lease, "MOD", t.revision}};
  std::vector<txn_op> ops = {
      {txn_op::kind::remove, keys.lease, {}, 0, {}},
      {txn_op::kind::remove, keys.holder, {}, 0, {}},
      {txn_op::kind::put, keys.reserved, reservation_value(r), window, {}},
  };
  // lease.failsafe peers: the term ends by a release, its record with it.
  if (failsafe_on()) ops.push_back({txn_op::kind::remove, keys.failsafe, {}, 0, {}});
  request<release_answer>(h, "/v3/kv/txn", txn_request(ours, ops),
                          [this, h, t, window](const json& j) {
                            const auto answer = read_txn(j);
                            seen(answer.hdr);
                            if (!answer.succeeded) {
                              forget("/v3/lease/revoke", lease_id_request(window));
                            }
                            end_handed_term(h, t, answer.succeeded);
                          });
}

// After the hand-over's txn: the term is over either way (the key was
// gone or another's when it failed), and its lease goes.
void etcd_store::impl::end_handed_term(std::shared_ptr<release_handler> h, held_term t,
                                       bool handed) {
  if (term && term->lease == t.lease) term.reset();
  const auto answer = handed ? release_answer::released : release_answer::not_ours;
  client->post("/v3/lease/revoke", lease_id_request(t.lease),
               [this, weak = shell.guard(), h, answer](store_error, json) {
                 if (weak.expired()) return;
                 if (shell.closed()) return (*h)(store_shell::aborted(), release_answer{});
                 (*h)({}, answer);
               });
}

// A renewal: a keepalive of the term's lease, then a read that the lease
// key is still the term's (an operator's delete, or a fence, leaves the
// lease alive), in a txn that registers this store when its registration
// is due and reads that registration back. With lease.failsafe peers
// (`list`), that txn writes the list into the record too, only if the lease
// key is the term's and the record's list number is below the list's (F1):
// a renewal that lands late leaves a newer list alone.
void etcd_store::impl::renew(std::shared_ptr<renew_handler> h, held_term t,
                             std::optional<failsafe_list> list) {
  auto still_ours = [this, t] { return term && term->lease == t.lease; };
  request<renew_answer>(
      h, "/v3/lease/keepalive", lease_id_request(t.lease),
      [this, h, t, still_ours, list = std::move(list)](const json& j) {
        const auto k = read_keepalive(j);
        seen(k.hdr);
        if (k.ttl_seconds <= 0 || !still_ours()) {
          if (still_ours()) term.reset();
          return (*h)({}, renew_answer::lost);
        }
        const auto sent = mono_clock::now();
        const auto own = keys.candidate(options.identity.node_id);
        std::vector<txn_op> reads = {{txn_op::kind::range, keys.lease, {}, 0, {}},
                                     {txn_op::kind::range, own, {}, 0, {}}};
        if (list) reads.push_back({txn_op::kind::range, keys.failsafe, {}, 0, {}});
        auto call = registering_txn(reads, sent);
        std::size_t first = call.first_read;
        if (list) {
          // The same operations in both branches; the success branch writes
          // the record before them.
          std::vector<txn_op> both(call.ops.begin(),
                                   call.ops.begin() + static_cast<std::ptrdiff_t>(first));
          auto written = both;
          written.push_back({txn_op::kind::put, keys.failsafe,
                             failsafe_record_value(list->seq, std::to_string(t.token), own_value,
                                                   options.identity.peer_address, list->peers),
                             0,
                             {}});
          const std::size_t shift = written.size() - both.size();
          for (const auto& r : reads) {
            both.push_back(r);
            written.push_back(r);
          }
          const std::vector<compare> guard = {
              {keys.lease, "MOD", t.revision},
              record_missing_at_renew ? compare{keys.failsafe, "CREATE", 0}
                                      : failsafe_seq_below(keys.failsafe, list->seq)};
          call.body = txn_request(guard, written, both);
          // Which branch ran is only known from the answer: the success
          // branch's reads come `shift` operations later.
          return request<renew_answer>(
              h, "/v3/kv/txn", call.body,
              [this, h, t, sent, first, shift](const json& j2) {
                auto answer = read_txn(j2);
                const auto at = first + (answer.succeeded ? shift : 0);
                const auto kvs = read_txn_range(j2, at);
                const auto record = read_txn_range(j2, at + 2);
                record_missing_at_renew = record.empty();
                seen(answer.hdr);
                answer.succeeded = true;  // the registration's put ran in either branch
                registered(answer, first > 0, sent, own_registration(read_txn_range(j2, at + 1)));
                renewed_if_ours(h, t, kvs);
              });
        }
        request<renew_answer>(h, "/v3/kv/txn", call.body,
                              [this, h, t, sent, first](const json& j2) {
                                const auto answer = read_txn(j2);
                                const auto kvs = read_txn_range(j2, first);
                                seen(answer.hdr);
                                registered(answer, first > 0, sent,
                                           own_registration(read_txn_range(j2, first + 1)));
                                renewed_if_ours(h, t, kvs);
                              });
      });
}

// A renewal's read of the lease key: renewed while it is the term's.
void etcd_store::impl::renewed_if_ours(std::shared_ptr<renew_handler> h, held_term t,
                                       const std::vector<key_value>& kvs) {
  const bool still_ours = term && term->lease == t.lease;
  const bool ours = kvs.size() == 1 && identity_of(kvs[0].value) == own_value &&
                    kvs[0].mod_revision == t.revision;
  if (!ours || !still_ours) {
    if (still_ours) {
      term.reset();
      forget("/v3/lease/revoke", lease_id_request(t.lease));
    }
    return (*h)({}, renew_answer::lost);
  }
  (*h)({}, renew_answer::renewed);
}

void etcd_store::async_renew(renew_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  if (!d.term) return d.answer_later(std::move(handler), renew_answer::lost);
  d.renew(std::make_shared<renew_handler>(std::move(handler)), *d.term, std::nullopt);
}

void etcd_store::async_release(release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  if (!d.term) return d.answer_later(std::move(handler), release_answer::not_ours);
  auto h = std::make_shared<release_handler>(std::move(handler));
  if (d.failsafe_on()) return d.clear_record(h, *d.term);
  d.revoke(h, *d.term);
}

void etcd_store::async_hand_over(const std::string& to_node, milliseconds window,
                                 release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  if (!d.term) return d.answer_later(std::move(handler), release_answer::not_ours);
  // No window, or nobody to reserve it for: a release.
  if (window <= milliseconds::zero() || to_node.empty()) {
    return d.revoke(std::make_shared<release_handler>(std::move(handler)), *d.term);
  }
  d.hand_over(std::make_shared<release_handler>(std::move(handler)), *d.term, to_node, window);
}

}  // namespace baton
