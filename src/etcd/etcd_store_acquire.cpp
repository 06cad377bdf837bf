// The etcd store's acquire: one txn that reads the election's keys and the
// registrations (registering this store when due), the pure decision of
// election_keys.hpp taken on what it found, and its step carried out: a
// term taken (a lease granted, then a txn conditional on the keys as read),
// a fence put after a restore, or an answer of held, held back or reserved
// with the time the lease concerned has left. A lease key gone while its
// holder's lease lives, or a lease that may have been revoked early, is
// waited out. Also the record created (async_create_record).
#include "etcd_store_impl.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace baton {
namespace {

// Tries of an acquire whose txn found the keys changed since its read.
constexpr int acquire_attempts = 3;
// How soon a candidate asks again about the last holder's lease when the
// lease key is gone but that lease lives (an operator's delete, or a holder
// of an older baton that released by a delete and then a revoke): short,
// since that revoke follows its delete at once.
constexpr milliseconds live_lease_recheck{250};

}  // namespace

// The read of the election's state and of the registrations, in a txn
// that first registers this store when its registration is due
// (candidate_registry.hpp): one call, as the read alone was. The
// registrations give a held answer its outranked_by.
void etcd_store::impl::acquire(acquire_ptr h, int attempt) {
  const auto sent = mono_clock::now();
  txn_op registrations{txn_op::kind::range, keys.candidates, {}, 0, keys.state};
  // Those this store already knows to have lapsed are left out.
  if (const auto lapsed = clock.seen_by(sent - 2 * options.identity.ttl); lapsed > 0)
    registrations.min_mod_revision = lapsed + 1;
  auto call =
      registering_txn({{txn_op::kind::range, keys.state, {}, 0, keys.end}, registrations}, sent);
  request<acquire_answer>(
      h, "/v3/kv/txn", call.body,
      [this, h, attempt, sent, reads = call.first_read, known = floor.revision_seen()](
          const json& j) {
        const auto t = read_txn(j);
        const auto view = read_view(t.hdr, read_txn_range(j, reads), keys);
        const auto kvs = read_txn_range(j, reads + 1);
        seen_txn(t.hdr, known);
        registered(t, reads > 0, sent, own_registration(kvs));
        auto judged = judge_candidates(kvs, keys.candidates, clock, mono_clock::now(),
                                       2 * options.identity.ttl);
        const auto counted = counting(h, std::move(judged.live));
        seen_record(view.record);
        last_record = view.failsafe ? read_failsafe_record(*view.failsafe) : std::nullopt;
        saw_holder(view.lease);
        saw_release_mark(view.released);
        saw_reservation(view.reserved);
        switch (decide_acquire(view, pending_fence.has_value(), own_value,
                               options.identity.node_id)) {
          case acquire_step::fence:
            return fence(counted, view, attempt);
          case acquire_step::held_back:
            return held_back(counted, *view.fence);
          case acquire_step::held:
            return held(counted, *view.lease, attempt, token_of_lease(*view.lease, view.failsafe));
          case acquire_step::reserved:
            return reserved(counted, *view.reserved);
          case acquire_step::take:
            return take(counted, view, attempt, judged.promises);
        }
      });
}

// `h`, with outranked_by filled in for an answer other than acquired, from
// the live registrations an attempt read. An answer already counted (by a
// later attempt of the same acquire, whose handler wraps this one) keeps
// its count.
etcd_store::impl::acquire_ptr etcd_store::impl::counting(acquire_ptr h,
                                                         std::vector<candidate_info> live) const {
  return std::make_shared<acquire_handler>(
      [h, live = std::move(live), self = options.identity.node_id,
       priority = options.identity.priority](store_error e, acquire_answer a) {
        if (!e && !a.acquired() && a.outranked_by < 0) {
          // A reservation's holder is the node that handed over: it holds
          // nothing now, as the memory store says.
          a.outranked_by =
              count_outranking(live, self, a.reserved_for.empty() ? a.holder : "", priority);
        }
        (*h)(std::move(e), std::move(a));
      });
}

// Free, but reserved for another node by a switchover: held, by the node
// that handed over, for what the reservation's etcd lease has left.
void etcd_store::impl::reserved(acquire_ptr h, const key_value& kv) {
  const auto r = reservation_of(kv.value);
  acquire_answer a;
  a.outcome = acquire_outcome::held;
  a.holder = r ? r->from : "";
  a.reserved_for = r ? r->to : "";
  if (kv.lease == 0) return (*h)({}, std::move(a));  // put by hand: no lease to ask about
  request<acquire_answer>(h, "/v3/lease/timetolive", time_to_live_request(kv.lease),
                          [this, h, a](const json& j) mutable {
                            const auto t = read_time_to_live(j);
                            seen(t.hdr);
                            a.remaining = reservation_left(t.ttl_seconds);
                            (*h)({}, std::move(a));
                          });
}

// Held: the holder, its token and what its lease has left. A lease found
// gone took its keys with it after the read (an expiry, a release, or this
// store's own revoke of it, etcd_store_tail.cpp, between the read and this
// question): read again rather than answer held by nobody, whose wait would
// outlast the wake-up this store has already ignored while acquiring.
void etcd_store::impl::held(acquire_ptr h, const key_value& kv, int attempt, std::uint64_t token) {
  acquire_answer a;
  a.outcome = acquire_outcome::held;
  a.token = token;
  a.holder = holder_of(kv.value);
  if (kv.lease == 0) return (*h)({}, std::move(a));  // put by hand: no lease to ask about
  const auto sent = mono_clock::now();
  request<acquire_answer>(h, "/v3/lease/timetolive", time_to_live_request(kv.lease),
                          [this, h, a, kv, sent, attempt](const json& j) mutable {
                            const auto t = read_time_to_live(j);
                            seen(t.hdr);
                            if (t.ttl_seconds < 0 && attempt + 1 < acquire_attempts) {
                              return acquire(h, attempt + 1);
                            }
                            a.remaining = remaining_of(t.ttl_seconds, options.identity.ttl);
                            // The answer counts in the follow of that lease
                            // to its end (etcd_store_tail.cpp).
                            follow_tail(kv, reading_of(t, sent));
                            (*h)({}, std::move(a));
                          });
}

void etcd_store::impl::held_back(acquire_ptr h, const key_value& fence_kv) {
  acquire_answer a;
  a.outcome = acquire_outcome::held_back;
  a.token = static_cast<std::uint64_t>(floor.highest_token());
  request<acquire_answer>(h, "/v3/lease/timetolive", time_to_live_request(fence_kv.lease),
                          [this, h, a](const json& j) mutable {
                            const auto t = read_time_to_live(j);
                            seen(t.hdr);
                            // A fence whose lease just ended is about to go.
                            a.remaining = remaining_of(std::max<std::int64_t>(t.ttl_seconds, 0),
                                                       options.identity.ttl);
                            (*h)({}, std::move(a));
                          });
}

// A lease of the ttl, checked: etcd raises a TTL below its minimum (1.5
// election timeouts) and a lease longer than the ttl breaks the timing
// the daemon was configured with.
void etcd_store::impl::grant(acquire_ptr h,
                             std::function<void(std::int64_t lease, const header&)> next) {
  request<acquire_answer>(
      h, "/v3/lease/grant", grant_request(seconds),
      [this, h, next = std::move(next)](const json& j) {
        const auto g = read_grant(j);
        seen(g.hdr);
        if (g.ttl_seconds != seconds) {
          forget("/v3/lease/revoke", lease_id_request(g.id));
          return (*h)(shell.note_failure({etcd_errc::ttl_mismatch,
                                          "etcd " + where() + " granted a lease of " +
                                              std::to_string(g.ttl_seconds) + " s where " +
                                              std::to_string(seconds) +
                                              " s were asked (the ttl rounded up to whole "
                                              "seconds): etcd's smallest lease is 1.5 "
                                              "election timeouts; raise the ttl"}),
                      acquire_answer{});
        }
        next(g.id, g.hdr);
      });
}

// Another store's lease key, read or watched: its lease is what may keep
// that store's app working even after the key is gone.
void etcd_store::impl::saw_holder(const std::optional<key_value>& kv) {
  if (kv && identity_of(kv->value) != own_value && kv->lease != 0) last_holder = kv;
}

// The released key: the lease its holder released, whose end is no early
// revoke (take()).
void etcd_store::impl::saw_release_mark(const std::optional<key_value>& kv) {
  if (const auto lease = kv ? released_lease_of(kv->value) : std::nullopt)
    released_lease = *lease;
}

// A reservation names the lease of the term it ended by a release.
void etcd_store::impl::saw_reservation(const std::optional<key_value>& kv) {
  const auto r = kv ? reservation_of(kv->value) : std::nullopt;
  if (r && r->lease != 0) released_lease = r->lease;
}

// The lease key is free. If it last belonged to another store whose etcd
// lease still lives, the key went before the lease: an operator's delete
// (that holder's app works until its next renewal tells it) or an older
// baton's release whose revoke is on its way. Taking it now could start a second app, so
// the election counts as held by that holder until its lease is gone.
// That holder is the holder key's (there only while its lease lives, so
// even a candidate started after the delete finds it), or the last one
// this store watched.
//
// With lease.failsafe peers, a free lease is first weighed against the
// record and the registered promises (hold_or_abstain): a grant waits for
// the term's clearance, and a caller that may not win only registers.
void etcd_store::impl::take(acquire_ptr h, const election_view& view, int attempt,
                            const std::vector<registered_promise>& promises) {
  if (asking && hold_or_abstain(h, view, promises)) return;
  if (view.lease) return take_free(h, view, attempt);
  const bool orphaned =
      view.holder && identity_of(view.holder->value) != own_value && view.holder->lease != 0;
  if (!orphaned && !last_holder) return take_free(h, view, attempt);
  const key_value old = orphaned ? *view.holder : *last_holder;
  // Its holder released it, its app stopped: a hand-over deletes the
  // keys in the txn that names the lease, before it revokes the lease.
  if (old.lease == released_lease) {
    early_end.reset();
    if (last_holder && last_holder->lease == old.lease) last_holder.reset();
    return take_free(h, view, attempt);
  }
  request<acquire_answer>(
      h, "/v3/lease/timetolive", time_to_live_request(old.lease),
      [this, h, view, attempt, old](const json& j) {
        const auto t = read_time_to_live(j);
        seen(t.hdr);
        if (t.ttl_seconds < 0) {
          if (old.lease != released_lease && may_have_ended_early(old.value, t.hdr.raft_term)) {
            const auto now = mono_clock::now();
            if (!early_end || early_end->lease != old.lease) {
              early_end = ended_lease{old.lease, now + options.identity.ttl};
            }
            if (now < early_end->until) {
              return wait_out_holder(h, old, early_end->until - now, t.hdr.raft_term);
            }
          }
          early_end.reset();
          if (last_holder && last_holder->lease == old.lease) last_holder.reset();
          return take_free(h, view, attempt);
        }
        acquire_answer a;
        a.outcome = acquire_outcome::held;
        a.token = static_cast<std::uint64_t>(floor.token_of(old.mod_revision));
        a.holder = holder_of(old.value);
        a.remaining =
            std::min(remaining_of(std::max<std::int64_t>(t.ttl_seconds, 0), options.identity.ttl),
                     live_lease_recheck);
        (*h)({}, std::move(a));
      });
}

// The last holder's lease is gone, but it may have been revoked early (see
// may_have_ended_early): that holder's app may work until its lease
// deadline, which ends no later than a ttl after this store found the lease
// gone (its last keepalive was sent before the revoke).
void etcd_store::impl::wait_out_holder(acquire_ptr h, const key_value& old,
                                       mono_clock::duration left, std::int64_t raft_term_now) {
  const auto stamped = stamped_term_of(old.value);
  acquire_answer a;
  a.outcome = acquire_outcome::held_back;
  a.token = static_cast<std::uint64_t>(floor.highest_token());
  a.holder = holder_of(old.value);
  a.remaining = std::chrono::ceil<milliseconds>(left);
  a.why = "the etcd lease of " + a.holder + "'s term ended " +
          (stamped && raft_term_now > 0
               ? "after a raft leader change (term " + std::to_string(*stamped) + ", now " +
                     std::to_string(raft_term_now) + ")"
               : "in a raft term its value does not say") +
          ": a former raft leader may have revoked it early (etcd-io/etcd#15247), so " +
          a.holder + "'s app may work until its lease deadline";
  (*h)({}, std::move(a));
}

void etcd_store::impl::take_free(acquire_ptr h, const election_view& view, int attempt) {
  grant(h, [this, h, view, attempt](std::int64_t lease, const header&) {
    // The raft term of the read that found the key free, which is no
    // later than the grant's: a candidate that finds this term's lease
    // gone in a later raft term waits out this holder (take()).
    const auto value = stamped_value(own_value, view.hdr.raft_term);
    // The reservation too: absent, or for this node, as read; a
    // reservation for this node ends with its take.
    const std::vector<compare> as_read = {
        {keys.fence, "CREATE", view.fence ? view.fence->create_revision : 0},
        {keys.lease, "MOD", view.lease ? view.lease->mod_revision : 0},
        {keys.holder, "MOD", view.holder ? view.holder->mod_revision : 0},
        {keys.record, "MOD", view.record ? view.record->mod_revision : 0},
        {keys.reserved, "MOD", view.reserved ? view.reserved->mod_revision : 0},
    };
    std::vector<txn_op> put = {{txn_op::kind::put, keys.lease, value, lease, {}},
                               {txn_op::kind::put, keys.holder, value, lease, {}}};
    if (view.reserved) put.push_back({txn_op::kind::remove, keys.reserved, {}, 0, {}});
    // lease.failsafe peers: the record of the new term, in the same step,
    // only if the record is as the hold was weighed on.
    auto compares = as_read;
    if (const auto record = grant_record()) {
      compares.push_back({keys.failsafe, "MOD", view.failsafe ? view.failsafe->mod_revision : 0});
      put.push_back(*record);
    }
    request<acquire_answer>(
        h, "/v3/kv/txn", txn_request(compares, put),
        [this, h, lease, attempt, view, raft_term = view.hdr.raft_term,
         known = floor.revision_seen()](const json& j) {
          const auto t = read_txn(j);
          seen_txn(t.hdr, known);
          if (!t.succeeded) {
            forget("/v3/lease/revoke", lease_id_request(lease));
            return retry(h, attempt);
          }
          // Written, but at a revision below one seen before: the data went
          // back since the read, and this term's token would not be above
          // an earlier term's. Its app must not start: fence instead.
          if (pending_fence) {
            forget("/v3/lease/revoke", lease_id_request(lease));
            return fence(h, view, attempt);
          }
          if (term && term->lease != lease) {
            forget("/v3/lease/revoke", lease_id_request(term->lease));
          }
          const auto token = static_cast<std::uint64_t>(floor.token_of(t.hdr.revision));
          if (asking) record_missing_at_renew = false;
          term = held_term{lease, t.hdr.revision, std::max<std::int64_t>(raft_term, 0), token};
          acquire_answer a;
          a.outcome = acquire_outcome::acquired;
          a.token = token;
          a.holder = options.identity.node_id;
          a.remaining = options.identity.ttl;
          (*h)({}, std::move(a));
        });
  });
}

void etcd_store::impl::retry(acquire_ptr h, int attempt) {
  if (attempt + 1 < acquire_attempts) return acquire(h, attempt + 1);
  (*h)(
      shell.note_failure({etcd_errc::contended,
                          "etcd " + where() + ": the keys under " + keys.dir + " changed under " +
                              std::to_string(acquire_attempts) + " acquires in a row"}),
      acquire_answer{});
}

// The reset's txn: the record's offset raised to the floor, the fence on a
// lease of one ttl, the lease key deleted; only if the record is as read.
// With lease.failsafe peers, a lease key whose term the failsafe record
// holds stays: a leader that ran on its peers' confirmations resumed it
// (F8), its token is the record's, and its app runs; the fence holds back
// only those who would start. The lease key is then compared as read too.
void etcd_store::impl::fence(acquire_ptr h, const election_view& view, int attempt) {
  grant(h, [this, h, view, attempt](std::int64_t lease, const header&) {
    const auto current = view.record ? parse_offset(view.record->value) : std::nullopt;
    const auto offset = floor.fence_offset(current);
    std::vector<compare> as_read = {
        {keys.record, "MOD", view.record ? view.record->mod_revision : 0}};
    std::vector<txn_op> ops = {
        {txn_op::kind::put, keys.record, std::to_string(offset), 0, {}},
        {txn_op::kind::put, keys.fence, own_value, lease, {}},
    };
    if (failsafe_on()) {
      as_read.push_back({keys.lease, "MOD", view.lease ? view.lease->mod_revision : 0});
      as_read.push_back({keys.failsafe, "MOD", view.failsafe ? view.failsafe->mod_revision : 0});
    }
    if (!failsafe_on() || !record_holds_lease(view)) {
      ops.push_back({txn_op::kind::remove, keys.lease, {}, 0, {}});
      ops.push_back({txn_op::kind::remove, keys.holder, {}, 0, {}});
    }
    request<acquire_answer>(h, "/v3/kv/txn", txn_request(as_read, ops),
                            [this, h, lease, offset, attempt](const json& j) {
                              const auto t = read_txn(j);
                              seen(t.hdr);
                              if (!t.succeeded) {
                                forget("/v3/lease/revoke", lease_id_request(lease));
                                return retry(h, attempt);
                              }
                              floor.fenced(offset, t.hdr.revision);
                              pending_fence.reset();
                              term.reset();
                              acquire_answer a;
                              a.outcome = acquire_outcome::held_back;
                              a.token = static_cast<std::uint64_t>(floor.highest_token());
                              a.remaining =
                                  std::min(options.identity.ttl, milliseconds(seconds * 1000));
                              (*h)({}, std::move(a));
                            });
  });
}

void etcd_store::async_acquire(acquire_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.asking.reset();
  d.acquire(std::make_shared<acquire_handler>(std::move(handler)), 0);
}

void etcd_store::async_create_record(record_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  auto h = std::make_shared<record_handler>(std::move(handler));
  const std::vector<compare> missing = {{d.keys.record, "CREATE", 0}};
  const std::vector<txn_op> put = {{txn_op::kind::put,
                                    d.keys.record,
                                    std::to_string(d.floor.fence_offset(std::nullopt)),
                                    0,
                                    {}}};
  d.request<record_answer>(h, "/v3/kv/txn", txn_request(missing, put), [&d, h](const json& j) {
    const auto t = read_txn(j);
    d.seen(t.hdr);
    (*h)({}, t.succeeded ? record_answer::created : record_answer::existed);
  });
}

}  // namespace baton
