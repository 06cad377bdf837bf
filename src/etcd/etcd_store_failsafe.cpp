// lease.failsafe peers on the etcd store (docs/safety.md, "Peer-confirmed
// leadership"; the record's form in failsafe_record.hpp): what a
// registration says of the mode, the failsafe hold a free lease answers,
// the record a grant writes, the release that deletes it, and the resume
// of a term after etcd was away or lost its data. The renewal's write of
// the list is in etcd_store_term.cpp, the grant's in the acquire's txn
// (etcd_store_acquire.cpp). The store answers; the daemon decides.
#include "etcd_store_impl.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace baton {
namespace {

// Tries of a resume whose txn found the keys changed since its read.
constexpr int resume_attempts = 3;

}  // namespace

std::optional<registration_failsafe> etcd_store::impl::failsafe_fields(time_point at) const {
  if (!failsafe_on()) return std::nullopt;
  registration_failsafe f;
  f.address = options.identity.peer_address;
  if (promise && promise->token != 0) {
    const auto left = promise->remaining - std::chrono::floor<milliseconds>(at - promise_at);
    if (left > milliseconds(0)) {
      f.promise_token = promise->token;
      f.promise_leader = promise->leader;
      f.promise_left = left;
    }
  }
  return f;
}

bool etcd_store::impl::failsafe_put_due(time_point at) const {
  const auto f = failsafe_fields(at);
  return f && (f->promise_token != 0 || promise_registered);
}

std::uint64_t etcd_store::impl::token_of_lease(const key_value& lease,
                                               const std::optional<key_value>& record) const {
  if (record) {
    const auto r = read_failsafe_record(*record);
    if (r && r->value == identity_of(lease.value)) return r->token;
  }
  return static_cast<std::uint64_t>(floor.token_of(lease.mod_revision));
}

bool etcd_store::impl::record_holds_lease(const election_view& view) const {
  if (!view.lease || !view.failsafe) return false;
  const auto r = read_failsafe_record(*view.failsafe);
  return r && r->value == identity_of(view.lease->value);
}

// F6, F9 and F7, for a free lease (or this store's own): the record's
// unreleased term of another value, or another candidate's live promise,
// above the token the caller cleared holds the grant back; a caller that
// may not win only registered (its read's txn did).
bool etcd_store::impl::hold_or_abstain(acquire_ptr h, const election_view& view,
                                       const std::vector<registered_promise>& promises) {
  acquire_answer a;
  a.outcome = acquire_outcome::held_back;
  a.token = static_cast<std::uint64_t>(floor.highest_token());
  if (!view.lease) {
    const auto record = view.failsafe ? read_failsafe_record(*view.failsafe) : std::nullopt;
    if (view.failsafe && !record) {
      // When in doubt, no grant: a record baton cannot read may hold a term.
      a.remaining = options.identity.ttl;
      a.why = "the record " + keys.failsafe + " holds \"" + view.failsafe->value +
              "\", not a term of lease.failsafe peers: no grant until an operator removes it";
      (*h)({}, std::move(a));
      return true;
    }
    if (auto hold = failsafe_hold_of(record, promises, own_value, options.identity.node_id,
                                     asking->cleared_token)) {
      a.why = failsafe_hold_why(*hold);
      a.failsafe_hold = std::move(hold);
      (*h)({}, std::move(a));
      return true;
    }
  }
  if (!asking->may_win) {
    a.why = failsafe_abstained_why;
    (*h)({}, std::move(a));
    return true;
  }
  return false;
}

std::optional<txn_op> etcd_store::impl::grant_record() const {
  if (!asking || !failsafe_on()) return std::nullopt;
  // The token is the offset plus this txn's revision, which etcd says in
  // its answer: the record names the offset, and its own revision the rest.
  return txn_op{txn_op::kind::put,
                keys.failsafe,
                failsafe_record_value(asking->list.seq, "+" + std::to_string(floor.offset()),
                                      own_value, options.identity.peer_address, asking->list.peers),
                0,
                {}};
}

// A release with the mode: the record deleted while the lease key is still
// the term's (so it names this term), then the revoke. Between the two the
// lease key stands, so nobody takes meanwhile; a delete that fails leaves
// the term for a taker to clear (one round trip), which is safe.
void etcd_store::impl::clear_record(std::shared_ptr<release_handler> h, held_term t) {
  client->post("/v3/kv/txn",
               txn_request({{keys.lease, "MOD", t.revision}},
                           {{txn_op::kind::remove, keys.failsafe, {}, 0, {}}}),
               [this, weak = shell.guard(), h, t](store_error, json) {
                 if (weak.expired()) return;
                 if (shell.closed()) return (*h)(store_shell::aborted(), release_answer{});
                 revoke(h, t);
               });
}

// F8: a read of the election's keys (registering this store when due);
// lost when another store's lease key stands, or the record holds another
// term than this store's `token`; else a lease of the ttl and the write.
void etcd_store::impl::resume(std::shared_ptr<renew_handler> h, std::uint64_t token,
                              failsafe_list list, int attempt) {
  const auto sent = mono_clock::now();
  const auto own = keys.candidate(options.identity.node_id);
  auto call = registering_txn(
      {{txn_op::kind::range, keys.state, {}, 0, keys.end}, {txn_op::kind::range, own, {}, 0, {}}},
      sent);
  request<renew_answer>(
      h, "/v3/kv/txn", call.body,
      [this, h, token, list = std::move(list), attempt, sent, reads = call.first_read,
       known = floor.revision_seen()](const json& j) mutable {
        const auto t = read_txn(j);
        const auto view = read_view(t.hdr, read_txn_range(j, reads), keys);
        seen_txn(t.hdr, known);
        registered(t, reads > 0, sent, own_registration(read_txn_range(j, reads + 1)));
        seen_record(view.record);
        if (view.lease && identity_of(view.lease->value) != own_value) {
          return (*h)({}, renew_answer::lost);
        }
        if (view.failsafe) {
          const auto r = read_failsafe_record(*view.failsafe);
          if (!r || r->value != own_value || r->token != token) {
            return (*h)({}, renew_answer::lost);
          }
        }
        request<renew_answer>(
            h, "/v3/lease/grant", grant_request(seconds),
            [this, h, token, list = std::move(list), attempt, view](const json& g_json) mutable {
              const auto g = read_grant(g_json);
              seen(g.hdr);
              if (g.ttl_seconds != seconds) {
                forget("/v3/lease/revoke", lease_id_request(g.id));
                return (*h)(shell.note_failure({etcd_errc::ttl_mismatch,
                                                "etcd " + where() + " granted a lease of " +
                                                    std::to_string(g.ttl_seconds) + " s where " +
                                                    std::to_string(seconds) + " s were asked"}),
                            renew_answer{});
              }
              resume_write(h, token, std::move(list), attempt, view, g.id);
            });
      });
}

// The resume's one txn, only if the lease key, the record, the offset and
// the failsafe record are as read: the lease and holder keys with this
// store's value on the new lease, the record of the term, and the offset
// lifted so that every later token is above `token` (a store that lost its
// data has none, or one too low). The fence is left alone: it holds back
// those who would start, and this app runs already.
void etcd_store::impl::resume_write(std::shared_ptr<renew_handler> h, std::uint64_t token,
                                    failsafe_list list, int attempt, election_view view,
                                    std::int64_t lease) {
  const auto value = stamped_value(own_value, view.hdr.raft_term);
  const std::vector<compare> as_read = {
      {keys.lease, "MOD", view.lease ? view.lease->mod_revision : 0},
      {keys.failsafe, "MOD", view.failsafe ? view.failsafe->mod_revision : 0},
      {keys.record, "MOD", view.record ? view.record->mod_revision : 0},
  };
  std::vector<txn_op> ops = {
      {txn_op::kind::put,
       keys.failsafe,
       failsafe_record_value(list.seq, std::to_string(token), own_value,
                             options.identity.peer_address, list.peers),
       0,
       {}},
      {txn_op::kind::put, keys.lease, value, lease, {}},
      {txn_op::kind::put, keys.holder, value, lease, {}},
  };
  const auto offset = view.record ? parse_offset(view.record->value) : std::nullopt;
  const auto wanted = static_cast<std::int64_t>(token);
  if (!offset || *offset + view.hdr.revision < wanted) {
    ops.push_back({txn_op::kind::put,
                   keys.record,
                   std::to_string(std::max(offset.value_or(0), wanted)),
                   0,
                   {}});
  }
  request<renew_answer>(
      h, "/v3/kv/txn", txn_request(as_read, ops),
      [this, h, token, list, attempt, view, lease](const json& j) {
        const auto t = read_txn(j);
        seen(t.hdr);
        if (!t.succeeded) {
          forget("/v3/lease/revoke", lease_id_request(lease));
          if (attempt + 1 < resume_attempts) return resume(h, token, list, attempt + 1);
          return (*h)(shell.note_failure({etcd_errc::contended,
                                          "etcd " + where() + ": the keys under " + keys.dir +
                                              " changed under " + std::to_string(resume_attempts) +
                                              " resumes in a row"}),
                      renew_answer{});
        }
        // The lease key and holder key moved to the new lease; the old one
        // (a term's lease etcd kept) goes.
        if (term && term->lease != lease) forget("/v3/lease/revoke", lease_id_request(term->lease));
        if (view.lease && view.lease->lease != 0 && view.lease->lease != lease &&
            (!term || term->lease != view.lease->lease)) {
          forget("/v3/lease/revoke", lease_id_request(view.lease->lease));
        }
        term =
            held_term{lease, t.hdr.revision, std::max<std::int64_t>(view.hdr.raft_term, 0), token};
        record_missing_at_renew = false;
        (*h)({}, renew_answer::renewed);
      });
}

// The port's failsafe calls on an etcd store.
class etcd_store::failsafe_port final : public failsafe_calls {
 public:
  explicit failsafe_port(etcd_store::impl& d) : d_(d) {}

  void async_acquire(const failsafe_acquire& a, acquire_handler handler) override {
    if (d_.shell.reject_if_closed(handler)) return;
    d_.asking = a;
    d_.promise = a.promise;
    d_.promise_at = mono_clock::now();
    d_.cleared_token = std::max(d_.cleared_token, a.cleared_token);
    d_.acquire(std::make_shared<acquire_handler>(std::move(handler)), 0);
  }

  void async_renew(const failsafe_list& list, renew_handler handler) override {
    if (d_.shell.reject_if_closed(handler)) return;
    if (!d_.term) return d_.answer_later(std::move(handler), renew_answer::lost);
    d_.renew(answered_in_time(std::move(handler)), *d_.term, list);
  }

  void async_resume(std::uint64_t token, const failsafe_list& list,
                    renew_handler handler) override {
    if (d_.shell.reject_if_closed(handler)) return;
    d_.resume(std::make_shared<renew_handler>(std::move(handler)), token, list, 0);
  }

 private:
  // A renewal with the mode answers within etcd.command_timeout in all, as
  // a timeout when its calls have not (F3): its keepalive may wait behind
  // another call to a member that does not answer, or for a new connection
  // (etcd.connect_timeout) to one that cannot be reached, and then its txn
  // as long again. A renewal that fails only after the renew deadline
  // starts no round of confirmations in time, and the leader stops its app
  // though every peer would confirm. The calls go on; their late answer is
  // not heard (each call completes once).
  std::shared_ptr<renew_handler> answered_in_time(renew_handler handler) {
    struct once {
      once(asio::io_context& io, renew_handler h) : timer(io), handler(std::move(h)) {}
      asio::steady_timer timer;
      renew_handler handler;
      bool done = false;
    };
    auto state = std::make_shared<once>(d_.io, std::move(handler));
    const auto bound = d_.options.command_timeout;
    state->timer.expires_after(bound);
    state->timer.async_wait([&d = d_, weak = d_.shell.guard(), w = std::weak_ptr<once>(state),
                             bound](const boost::system::error_code& ec) {
      if (ec || weak.expired()) return;
      const auto s = w.lock();
      if (!s || s->done) return;
      s->done = true;
      if (d.shell.closed()) return s->handler(store_shell::aborted(), renew_answer{});
      s->handler(d.shell.note_failure({etcd_errc::timeout,
                                       "etcd " + d.where() + ": the renewal had no answer within " +
                                           std::to_string(bound.count()) + " ms"}),
                 renew_answer{});
    });
    return std::make_shared<renew_handler>([state](store_error e, renew_answer a) {
      if (state->done) return;
      state->done = true;
      state->timer.cancel();
      state->handler(std::move(e), a);
    });
  }

  etcd_store::impl& d_;
};

failsafe_calls* etcd_store::failsafe() {
  auto& d = *impl_;
  if (!d.failsafe_calls_of) d.failsafe_calls_of = std::make_unique<failsafe_port>(d);
  return d.failsafe_calls_of.get();
}

}  // namespace baton
