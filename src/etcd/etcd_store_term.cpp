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
  const std::vector<txn_op> ops = {
      {txn_op::kind::remove, keys.lease, {}, 0, {}},
      {txn_op::kind::remove, keys.holder, {}, 0, {}},
      {txn_op::kind::put, keys.reserved, reservation_value(r), window, {}},
  };
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

void etcd_store::async_renew(renew_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  if (!d.term) return d.answer_later(std::move(handler), renew_answer::lost);
  const auto term = *d.term;
  auto h = std::make_shared<renew_handler>(std::move(handler));
  auto still_ours = [&d, term] { return d.term && d.term->lease == term.lease; };
  d.request<renew_answer>(h, "/v3/lease/keepalive", lease_id_request(term.lease),
                          [&d, h, term, still_ours](const json& j) {
                            const auto k = read_keepalive(j);
                            d.seen(k.hdr);
                            if (k.ttl_seconds <= 0 || !still_ours()) {
                              if (still_ours()) d.term.reset();
                              return (*h)({}, renew_answer::lost);
                            }
                            // The lease lives; is the key still ours? An operator's delete, or a
                            // fence, leaves the lease alive. The read registers this store when
                            // its registration is due, and reads that registration back.
                            const auto sent = mono_clock::now();
                            const auto own = d.keys.candidate(d.options.identity.node_id);
                            auto call =
                                d.registering_txn({{txn_op::kind::range, d.keys.lease, {}, 0, {}},
                                                   {txn_op::kind::range, own, {}, 0, {}}},
                                                  sent);
                            d.request<renew_answer>(
                                h, "/v3/kv/txn", call.body,
                                [&d, h, term, still_ours, sent,
                                 reads = call.first_read](const json& j2) {
                                  const auto t = read_txn(j2);
                                  const auto kvs = read_txn_range(j2, reads);
                                  d.seen(t.hdr);
                                  d.registered(t, reads > 0, sent,
                                               d.own_registration(read_txn_range(j2, reads + 1)));
                                  const bool ours = kvs.size() == 1 &&
                                                    identity_of(kvs[0].value) == d.own_value &&
                                                    kvs[0].mod_revision == term.revision;
                                  if (!ours || !still_ours()) {
                                    if (still_ours()) {
                                      d.term.reset();
                                      d.forget("/v3/lease/revoke", lease_id_request(term.lease));
                                    }
                                    return (*h)({}, renew_answer::lost);
                                  }
                                  (*h)({}, renew_answer::renewed);
                                });
                          });
}

void etcd_store::async_release(release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  if (!d.term) return d.answer_later(std::move(handler), release_answer::not_ours);
  d.revoke(std::make_shared<release_handler>(std::move(handler)), *d.term);
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
