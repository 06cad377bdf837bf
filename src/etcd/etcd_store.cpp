// etcd_store: each call a short chain of gateway requests on one
// http_client; every completion passes through `request`, which drops it
// when the store is gone, turns it into operation_aborted once close() was
// called, and keeps failures for status(). Every answer's header goes
// through the token floor (election_keys.hpp), which finds a restore.
#include "etcd_store.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <utility>

#include "candidate_registry.hpp"
#include "election_keys.hpp"
#include "endpoint.hpp"
#include "etcd_wire.hpp"
#include "http_client.hpp"
#include "store/nonce.hpp"
#include "store/store_shell.hpp"
#include "tls.hpp"
#include "watch_stream.hpp"

namespace baton {
namespace {

namespace asio = boost::asio;
using nlohmann::json;
using namespace etcd_detail;
using store_detail::store_shell;

// Tries of an acquire whose txn found the keys changed since its read.
constexpr int acquire_attempts = 3;
// How soon a candidate asks again about the last holder's lease when the
// lease key is gone but that lease lives (an operator's delete, or a holder
// of an older baton that released by a delete and then a revoke): short,
// since that revoke follows its delete at once.
constexpr milliseconds live_lease_recheck{250};
// The most lapsed registrations one candidates call deletes (one txn; etcd
// refuses more than 128 operations in one).
constexpr std::size_t prune_at_most = 64;

}  // namespace

namespace etcd_detail {

namespace {

std::vector<endpoint> parse_endpoints(const std::vector<std::string>& urls) {
  if (urls.empty()) throw std::invalid_argument("etcd_store: no endpoint");
  std::vector<endpoint> out;
  for (const auto& url : urls) {
    auto parsed = parse_endpoint(url);
    if (const auto* problem = std::get_if<std::string>(&parsed)) {
      throw std::invalid_argument("etcd_store: endpoint: " + *problem);
    }
    out.push_back(std::get<endpoint>(std::move(parsed)));
  }
  for (const auto& ep : out) {
    if (ep.scheme != out.front().scheme) {
      throw std::invalid_argument("etcd_store: the endpoints mix http:// and https://");
    }
  }
  return out;
}

}  // namespace

// The connection settings: endpoints, timeouts, TLS (for https endpoints
// only) and the user. Throws std::invalid_argument naming what is wrong.
http_options connection_options(const etcd_store_options& o) {
  http_options h;
  h.endpoints = parse_endpoints(o.endpoints);
  h.connect_timeout = o.connect_timeout;
  h.command_timeout = o.command_timeout;
  const bool tls_files =
      !o.tls_ca_file.empty() || !o.tls_cert_file.empty() || !o.tls_key_file.empty();
  if (h.endpoints.front().scheme == "https") {
    std::string error;
    h.tls = make_tls_context({o.tls_ca_file, o.tls_cert_file, o.tls_key_file}, error);
    if (!h.tls) throw std::invalid_argument("etcd_store: TLS: " + error);
  } else if (tls_files) {
    throw std::invalid_argument(
        "etcd_store: TLS files are given but the endpoints are http://; use https://");
  }
  if (o.username.empty() != o.password_file.empty()) {
    throw std::invalid_argument(
        "etcd_store: a user needs a password file, and a password file a user");
  }
  h.username = o.username;
  h.password_file = o.password_file;
  return h;
}

}  // namespace etcd_detail

struct etcd_store::impl {
  // A term: its lease and the lease key's revision.
  struct held_term {
    std::int64_t lease = 0;
    std::int64_t revision = 0;
    std::int64_t raft_term = 0;  // stamped in its value (0 = none)
  };

  impl(asio::io_context& context, etcd_store_options opts)
      : io(context),
        options(std::move(opts)),
        shell(context),
        keys(options.prefix, options.identity.election),
        // New per store: a restarted daemon with the same node id never
        // renews its predecessor's term.
        own_value(lease_value(options.identity.node_id, store_detail::new_nonce())),
        seconds(lease_seconds(options.identity.ttl)),
        clock(2 * options.identity.ttl),
        run(2 * options.identity.ttl),
        retry_timer(context),
        ping_timer(context) {
    auto connection = connection_options(options);
    endpoint_errors.resize(connection.endpoints.size());
    // A member's last error stands until it answers again.
    connection.on_outcome = [this, weak = shell.guard()](std::size_t at, const store_error& e) {
      if (weak.expired()) return;
      if (at < endpoint_errors.size()) endpoint_errors[at] = e ? e.message() : "";
      if (e) watch_where_the_calls_are();
    };
    client = http_client::create(io, std::move(connection));
    backoff = options.rewatch_backoff_initial;
  }

  ~impl() {
    shell.retire();
    client->close();
    if (stream) stream->stop();
    retry_timer.cancel();
    ping_timer.cancel();
  }

  std::string where() const { return client->current().redacted(); }

  // --- one request and its guard -----------------------------------------------

  // POSTs `body` to `path`; `next` reads the answer. A failure, a closed
  // store or an answer `next` cannot read (it throws) goes to `handler`.
  template <typename Answer>
  void request(std::shared_ptr<std::function<void(store_error, Answer)>> handler, std::string path,
               std::string body, std::function<void(const json&)> next) {
    client->post(
        std::move(path), std::move(body),
        [this, weak = shell.guard(), handler, next = std::move(next)](store_error e, json j) {
          if (weak.expired()) return;
          if (shell.closed()) return (*handler)(store_shell::aborted(), Answer{});
          if (e) return (*handler)(shell.note_failure(std::move(e)), Answer{});
          try {
            next(j);
          } catch (const std::exception& ex) {
            (*handler)(shell.note_failure(
                           {etcd_errc::unexpected_reply, "etcd " + where() + ": " + ex.what()}),
                       Answer{});
          }
        });
  }

  // An answer known without asking etcd, posted (never inline).
  template <typename Answer>
  void answer_later(std::function<void(store_error, Answer)> handler, Answer a) {
    asio::post(io, [this, weak = shell.guard(), handler = std::move(handler), a = std::move(a)] {
      if (weak.expired()) return;
      if (shell.closed()) return handler(store_shell::aborted(), Answer{});
      handler({}, a);
    });
  }

  // A request whose answer nobody waits for (revoking an unused lease).
  void forget(std::string path, std::string body) {
    client->post(std::move(path), std::move(body), [](store_error, json) {});
  }

  // --- what answers say about the data ----------------------------------------

  void heard(const std::optional<token_floor::finding>& f) {
    if (!f) return;
    if (f->must_fence) {
      pending_fence = f;
      term.reset();  // a term from before the data went back is over
      clock.clear();  // revisions from before it say nothing of later ones
      run.lost();     // the registration may have gone back with the data
    }
    shell.note_reset(f->why);
    // Told from the executor, not from inside the answer being read: the
    // listener may destroy the store.
    asio::post(
        io, [this, weak = shell.guard(), r = store_events::reset{f->why, f->record_missing, {}}] {
          if (!weak.expired()) shell.emit(r);
        });
  }
  void seen(const header& h) {
    heard(floor.observe_header(h));
    clock.observe(h.revision, mono_clock::now());
  }
  // A txn's header, the txn sent when floor.revision_seen() was `known`.
  void seen_txn(const header& h, std::int64_t known) {
    heard(floor.observe_linearizable_header(h, known));
    clock.observe(h.revision, mono_clock::now());
  }
  // A watch message's header (token_floor::observe_stream_header).
  void seen_on_stream(const header& h) {
    heard(floor.observe_stream_header(h));
    clock.observe(h.revision, mono_clock::now());
  }
  void seen_record(const std::optional<key_value>& record) { heard(floor.observe_record(record)); }

  // --- acquire ------------------------------------------------------------------

  using acquire_ptr = std::shared_ptr<acquire_handler>;

  // The read of the election's state and of the registrations, in a txn
  // that first registers this store when its registration is due
  // (candidate_registry.hpp): one call, as the read alone was. The
  // registrations give a held answer its outranked_by.
  void acquire(acquire_ptr h, int attempt) {
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
              return held(counted, *view.lease);
            case acquire_step::reserved:
              return reserved(counted, *view.reserved);
            case acquire_step::take:
              return take(counted, view, attempt);
          }
        });
  }

  // A call's txn, of no condition, for a call sent at `sent`: this store's
  // registration put when one is due (registration_run), then `reads`, the
  // first of them operation `first_read` of the answer. Without the put the
  // txn is reads alone, which etcd serves as a linearizable read: no raft
  // proposal, no new revision.
  struct registering_call {
    std::string body;
    std::size_t first_read = 0;
  };
  registering_call registering_txn(std::vector<txn_op> reads, time_point sent) const {
    std::vector<txn_op> ops;
    if (run.due(sent)) {
      const registration r{options.identity.priority, run.live_at(sent),
                           clock.seen_by(sent - 2 * options.identity.ttl)};
      ops.push_back({txn_op::kind::put,
                     keys.candidate(options.identity.node_id),
                     registration_value(r),
                     0,
                     {}});
    }
    const std::size_t first_read = ops.size();
    for (auto& op : reads) ops.push_back(std::move(op));
    return {txn_request({}, ops), first_read};
  }

  // A call's txn answered: its put (if it had one) noted, and what its reads
  // found at this store's registration key.
  void registered(const txn_answer& t, bool put, time_point sent,
                  const std::optional<key_value>& own) {
    if (!t.succeeded) throw std::runtime_error("a txn without conditions did not succeed");
    if (put) run.put(sent, t.hdr.revision);
    run.found(own, t.hdr.revision);
  }

  std::optional<key_value> own_registration(const std::vector<key_value>& kvs) const {
    const auto key = keys.candidate(options.identity.node_id);
    for (const auto& kv : kvs)
      if (kv.key == key) return kv;
    return std::nullopt;
  }

  // `h`, with outranked_by filled in for an answer other than acquired, from
  // the live registrations an attempt read. An answer already counted (by a
  // later attempt of the same acquire, whose handler wraps this one) keeps
  // its count.
  acquire_ptr counting(acquire_ptr h, std::vector<candidate_info> live) const {
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
  void reserved(acquire_ptr h, const key_value& kv) {
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

  void held(acquire_ptr h, const key_value& kv) {
    acquire_answer a;
    a.outcome = acquire_outcome::held;
    a.token = static_cast<std::uint64_t>(floor.token_of(kv.mod_revision));
    a.holder = holder_of(kv.value);
    if (kv.lease == 0) return (*h)({}, std::move(a));  // put by hand: no lease to ask about
    request<acquire_answer>(h, "/v3/lease/timetolive", time_to_live_request(kv.lease),
                            [this, h, a](const json& j) mutable {
                              const auto t = read_time_to_live(j);
                              seen(t.hdr);
                              a.remaining = remaining_of(t.ttl_seconds, options.identity.ttl);
                              (*h)({}, std::move(a));
                            });
  }

  void held_back(acquire_ptr h, const key_value& fence_kv) {
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
  void grant(acquire_ptr h, std::function<void(std::int64_t lease, const header&)> next) {
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
  void saw_holder(const std::optional<key_value>& kv) {
    if (kv && identity_of(kv->value) != own_value && kv->lease != 0) last_holder = kv;
  }

  // The released key: the lease its holder released, whose end is no early
  // revoke (take()).
  void saw_release_mark(const std::optional<key_value>& kv) {
    if (const auto lease = kv ? released_lease_of(kv->value) : std::nullopt)
      released_lease = *lease;
  }

  // A reservation names the lease of the term it ended by a release.
  void saw_reservation(const std::optional<key_value>& kv) {
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
  void take(acquire_ptr h, const election_view& view, int attempt) {
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
  void wait_out_holder(acquire_ptr h, const key_value& old, mono_clock::duration left,
                       std::int64_t raft_term_now) {
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

  void take_free(acquire_ptr h, const election_view& view, int attempt) {
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
      request<acquire_answer>(
          h, "/v3/kv/txn", txn_request(as_read, put),
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
            term = held_term{lease, t.hdr.revision, std::max<std::int64_t>(raft_term, 0)};
            acquire_answer a;
            a.outcome = acquire_outcome::acquired;
            a.token = static_cast<std::uint64_t>(floor.token_of(t.hdr.revision));
            a.holder = options.identity.node_id;
            a.remaining = options.identity.ttl;
            (*h)({}, std::move(a));
          });
    });
  }

  void retry(acquire_ptr h, int attempt) {
    if (attempt + 1 < acquire_attempts) return acquire(h, attempt + 1);
    (*h)(
        shell.note_failure({etcd_errc::contended,
                            "etcd " + where() + ": the keys under " + keys.dir + " changed under " +
                                std::to_string(acquire_attempts) + " acquires in a row"}),
        acquire_answer{});
  }

  // The reset's txn: the record's offset raised to the floor, the fence on a
  // lease of one ttl, the lease key deleted; only if the record is as read.
  void fence(acquire_ptr h, const election_view& view, int attempt) {
    grant(h, [this, h, view, attempt](std::int64_t lease, const header&) {
      const auto current = view.record ? parse_offset(view.record->value) : std::nullopt;
      const auto offset = floor.fence_offset(current);
      const std::vector<compare> as_read = {
          {keys.record, "MOD", view.record ? view.record->mod_revision : 0}};
      const std::vector<txn_op> ops = {
          {txn_op::kind::put, keys.record, std::to_string(offset), 0, {}},
          {txn_op::kind::put, keys.fence, own_value, lease, {}},
          {txn_op::kind::remove, keys.lease, {}, 0, {}},
          {txn_op::kind::remove, keys.holder, {}, 0, {}},
      };
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
  void revoke(std::shared_ptr<release_handler> h, held_term t) {
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
  void mark_released(std::shared_ptr<release_handler> h, held_term t) {
    client->post(
        "/v3/kv/txn",
        txn_request({}, {{txn_op::kind::put, keys.released, std::to_string(t.lease), 0, {}}}),
        [this, weak = shell.guard(), h](store_error, json) {
          if (weak.expired()) return;
          if (shell.closed()) return (*h)(store_shell::aborted(), release_answer{});
          (*h)({}, release_answer::released);
        });
  }

  // --- a switchover -------------------------------------------------------------

  // A hand-over: a lease of the window (rounded up to whole seconds), then
  // one txn that, only if the lease key is still this term's, deletes the
  // lease and holder keys (watchers hear a release, as a revoke's deletes
  // say it) and puts the reserved key on that lease. The term's lease is
  // revoked after it, before the answer (a daemon that exits on the answer
  // would cut the revoke off); the target need not wait for that revoke,
  // since the reservation names the lease as released (take()).
  void hand_over(std::shared_ptr<release_handler> h, held_term t, std::string to,
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
  void reserve(std::shared_ptr<release_handler> h, held_term t, const reservation& r,
               std::int64_t window) {
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
  void end_handed_term(std::shared_ptr<release_handler> h, held_term t, bool handed) {
    if (term && term->lease == t.lease) term.reset();
    const auto answer = handed ? release_answer::released : release_answer::not_ours;
    client->post("/v3/lease/revoke", lease_id_request(t.lease),
                 [this, weak = shell.guard(), h, answer](store_error, json) {
                   if (weak.expired()) return;
                   if (shell.closed()) return (*h)(store_shell::aborted(), release_answer{});
                   (*h)({}, answer);
                 });
  }

  // The registrations, judged (candidate_registry.hpp); the lapsed ones
  // deleted, each only if unchanged, with nobody waiting for it.
  void list_candidates(std::shared_ptr<candidates_handler> h) {
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

  // --- the watch ----------------------------------------------------------------

  void arm_watch() {
    watch_state = wakeup_state::connecting;
    const auto generation = ++watch_generation;
    // The keys as they are, then every change after them.
    auto h = std::make_shared<std::function<void(store_error, bool)>>(
        [this, weak = shell.guard(), generation](store_error e, bool) {
          if (weak.expired() || shell.closed() || !e || generation != watch_generation) return;
          watch_failed(std::move(e));
        });
    request<bool>(h, "/v3/kv/range", range_request(keys.state, keys.end),
                  [this, generation](const json& j) {
                    if (generation != watch_generation) return;
                    const auto hdr = read_header(j);
                    const auto view = read_view(hdr, read_range(j), keys);
                    seen(hdr);
                    seen_record(view.record);
                    saw_holder(view.lease);
                    saw_reservation(view.reserved);
                    open_stream(hdr.revision + 1);
                  });
  }

  void open_stream(std::int64_t from) {
    const auto weak = shell.guard();
    watch_stream::callbacks cb;
    cb.on_line = [this, weak](std::string_view line) {
      if (!weak.expired()) on_watch_line(line);
    };
    cb.on_closed = [this, weak](store_error e) {
      if (!weak.expired() && !shell.closed()) stream_failed(std::move(e));
    };
    if (stream) stream->stop();
    watched_revision = from - 1;
    suspect_revision = 0;
    watch_at = client->current_index();
    stream = watch_stream::create(io, client->current(), client->options().tls,
                                  options.connect_timeout, std::move(cb));
    stream->start(watch_request(keys.state, keys.end, from), client->token());
  }

  void on_watch_line(std::string_view line) {
    // An error said in the stream (a permission, a token gone).
    if (const auto j = json::parse(line, nullptr, false); !j.is_discarded()) {
      if (auto e = gateway_error(200, j, where())) return stream_failed(std::move(e));
    }
    watch_message m;
    try {
      m = read_watch_message(line);
    } catch (const std::exception& ex) {
      return stream_failed(
          {etcd_errc::unexpected_reply, "etcd watch " + where() + ": " + ex.what()});
    }
    const auto weak = shell.guard();
    seen_on_stream(m.hdr);
    if (m.canceled) {
      // Compacted past the revision asked for (or cancelled by the server):
      // no watch until it is armed again from a fresh read, so wake-ups are
      // untrusted meanwhile; the new watch's `created` says `released`, since
      // a release may have been missed.
      if (stream) stream->stop();
      stream.reset();
      ping_timer.cancel();
      subscribed_before = true;
      arm_watch();
      const std::string why =
          "etcd watch " + where() + ": cancelled" +
          (m.compact_revision > 0 ? " (etcd compacted its history to revision " +
                                        std::to_string(m.compact_revision) + ")"
           : m.cancel_reason.empty() ? ""
                                     : ": " + m.cancel_reason);
      // Last: the listener may destroy the store.
      shell.set_wakeups(false, why);
      return;
    }
    if (m.created) {
      watch_state = wakeup_state::subscribed;
      backoff = options.rewatch_backoff_initial;
      const bool again = subscribed_before;
      subscribed_before = true;
      schedule_ping(watch_generation);
      shell.set_wakeups(true, "");
      if (weak.expired() || shell.closed()) return;
      if (again) shell.emit(store_events::released{});
      if (weak.expired() || shell.closed()) return;
    }
    // The revisions at which a term began: a reservation deleted at one of
    // them was taken by its target, no wake-up.
    std::vector<std::int64_t> terms_begun;
    for (const auto& e : m.events) {
      const auto s = classify_event(e, keys, own_value);
      if (s.what == seen_event::kind::acquired) terms_begun.push_back(s.mod_revision);
    }
    for (const auto& e : m.events) {
      watched_revision = std::max(watched_revision, e.kv.mod_revision);
      if (e.kv.key == keys.lease) saw_holder(e.deleted ? e.prev : std::optional<key_value>(e.kv));
      const auto s = classify_event(e, keys, own_value);
      switch (s.what) {
        case seen_event::kind::none:
          break;
        case seen_event::kind::released:
          shell.emit(store_events::released{});
          break;
        case seen_event::kind::acquired:
          shell.emit(store_events::acquired{
              s.holder, static_cast<std::uint64_t>(floor.token_of(s.mod_revision))});
          break;
        case seen_event::kind::record:
          seen_record(s.record);
          break;
        case seen_event::kind::release_marked:
          // A candidate waiting out that holder may go now.
          released_lease = s.lease;
          shell.emit(store_events::released{});
          break;
        case seen_event::kind::reserved:
          if (s.lease != 0) released_lease = s.lease;
          break;
        case seen_event::kind::unreserved:
          // The window is over: free for everyone.
          if (std::find(terms_begun.begin(), terms_begun.end(), s.mod_revision) ==
              terms_begun.end()) {
            shell.emit(store_events::released{});
          }
          break;
      }
      if (weak.expired() || shell.closed()) return;
    }
  }

  // A watch stream says nothing while nothing changes, so a dead server or
  // a half-open connection looks like quiet. Every ping interval the keys
  // are read on the call connection: a failure, or a change the watch has
  // not reported by the next ping, ends the watch (wake-ups untrusted) and
  // starts it again.
  void schedule_ping(std::uint64_t generation) {
    if (options.watch_ping_interval <= milliseconds::zero()) return;
    ping_timer.expires_after(options.watch_ping_interval);
    ping_timer.async_wait(
        [this, weak = shell.guard(), generation](const boost::system::error_code& ec) {
          if (ec || weak.expired() || shell.closed() || generation != watch_generation) return;
          ping(generation);
        });
  }

  void ping(std::uint64_t generation) {
    auto h = std::make_shared<std::function<void(store_error, bool)>>([this, weak = shell.guard(),
                                                                       generation](store_error e,
                                                                                   bool) {
      if (weak.expired() || shell.closed() || !e || generation != watch_generation) return;
      watch_failed({e.code, "etcd watch " + where() + ": its check read failed: " + e.message()});
    });
    request<bool>(h, "/v3/kv/range", range_request(keys.state, keys.end),
                  [this, generation](const json& j) {
                    if (generation != watch_generation) return;
                    const auto hdr = read_header(j);
                    seen(hdr);
                    std::int64_t newest = 0;
                    for (const auto& kv : read_range(j)) newest = std::max(newest, kv.mod_revision);
                    if (suspect_revision > watched_revision) {
                      return stream_failed(
                          {etcd_errc::connection_lost,
                           "etcd watch " + where() + ": the election's keys changed at revision " +
                               std::to_string(suspect_revision) + " and the watch did not say so"});
                    }
                    suspect_revision = newest > watched_revision ? newest : 0;
                    schedule_ping(generation);
                  });
  }

  // The calls moved on from a member that failed them or cannot serve: the
  // watch moves with them, so that the store uses one member at a time. A
  // watch left on a frozen member keeps its stream open and silent, and
  // would pass for a working one until a ping found a change it missed.
  // Called from the client's outcome, before the failed call's handler: the
  // listener is told from the executor, as it may destroy the store.
  void watch_where_the_calls_are() {
    if (!stream || !watching || shell.closed() || watch_at == client->current_index()) return;
    const auto& all = client->options().endpoints;
    const std::string why = "etcd watch " + all[watch_at].redacted() + ": moved to " + where() +
                            " with the calls, which found it failing";
    stream->stop();
    stream.reset();
    ping_timer.cancel();
    arm_watch();  // a new generation: answers for the old watch are dropped
    asio::post(io, [this, weak = shell.guard(), generation = watch_generation, why] {
      if (weak.expired() || shell.closed() || generation != watch_generation ||
          watch_state == wakeup_state::subscribed)
        return;
      shell.set_wakeups(false, why);
    });
  }

  // The watch stream itself failed: its member's row keeps the error.
  void stream_failed(store_error e) {
    if (watch_at < endpoint_errors.size()) endpoint_errors[watch_at] = e.message();
    watch_failed(std::move(e));
  }

  // The watch failed, by its stream or by one of its reads. A read is a call
  // of the client, whose row the client's outcome already names (the member
  // it asked, which need not be the stream's).
  void watch_failed(store_error e) {
    ++watch_generation;  // answers for the watch that failed are old news
    watch_state = wakeup_state::disconnected;
    if (stream) stream->stop();
    stream.reset();
    ping_timer.cancel();
    shell.note_failure(e);
    retry_timer.expires_after(backoff);
    backoff = std::min(backoff * 2, options.rewatch_backoff_max);
    retry_timer.async_wait([this, weak = shell.guard()](const boost::system::error_code& ec) {
      if (ec || weak.expired() || shell.closed()) return;
      arm_watch();
    });
    // Last: the listener may destroy the store.
    shell.set_wakeups(false, e.message());
  }

  asio::io_context& io;
  etcd_store_options options;
  store_shell shell;
  const election_keys keys;
  const std::string own_value;
  const std::int64_t seconds;  // the etcd lease TTL: the ttl rounded up
  std::shared_ptr<http_client> client;
  token_floor floor;
  std::optional<token_floor::finding> pending_fence;
  // The revisions answers carried and when, and this store's registrations
  // without a gap (candidate_registry.hpp).
  revision_clock clock;
  registration_run run;
  // The last lease the released key named (0 = none).
  std::int64_t released_lease = 0;
  // The term this store holds.
  std::optional<held_term> term;
  // The lease key as another store last held it (read or watched), kept
  // after its delete: see take().
  std::optional<key_value> last_holder;
  // A last holder's lease found gone when it may have been revoked early,
  // and until when this store holds back for it.
  struct ended_lease {
    std::int64_t lease = 0;
    time_point until;
  };
  std::optional<ended_lease> early_end;
  // The watch.
  bool watching = false;
  bool subscribed_before = false;
  wakeup_state watch_state = wakeup_state::off;
  std::shared_ptr<watch_stream> stream;
  asio::steady_timer retry_timer;
  asio::steady_timer ping_timer;
  milliseconds backoff{100};
  // Which watch an answer belongs to: a ping or a read for a watch that has
  // since failed finds a larger number here and is dropped.
  std::uint64_t watch_generation = 0;
  // The newest revision of the election's keys the watch reported, and one
  // a ping saw that the watch had not reported yet (0 = none).
  std::int64_t watched_revision = 0;
  std::int64_t suspect_revision = 0;
  // The endpoint the watch stream went to, and the last failure seen at
  // each endpoint (calls and the watch) until it answers again.
  std::size_t watch_at = 0;
  std::vector<std::string> endpoint_errors;
};

etcd_store::etcd_store(asio::io_context& io, etcd_store_options options) {
  require_valid_identity(options.identity, "etcd_store");
  if (options.prefix.empty()) throw std::invalid_argument("etcd_store: the key prefix is empty");
  impl_ = std::make_unique<impl>(io, std::move(options));
}

etcd_store::~etcd_store() = default;

const store_identity& etcd_store::identity() const {
  return impl_->options.identity;
}

void etcd_store::async_acquire(acquire_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.acquire(std::make_shared<acquire_handler>(std::move(handler)), 0);
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

void etcd_store::async_candidates(candidates_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.list_candidates(std::make_shared<candidates_handler>(std::move(handler)));
}

void etcd_store::register_cooldown(milliseconds cooldown) {
  auto& d = *impl_;
  if (d.shell.closed()) return;
  const auto now = mono_clock::now();
  const auto put = cooling_mark(d.run, now, d.options.identity.priority,
                                d.clock.seen_by(now - 2 * d.options.identity.ttl), cooldown);
  if (!put) return;
  // Only over the registration it marks; whatever comes of it, the next
  // call puts a plain one, which ends the cool-down. Best effort, as the
  // registration is: nobody waits for the answer.
  const auto key = d.keys.candidate(d.options.identity.node_id);
  d.run.lost();
  d.forget("/v3/kv/txn", txn_request({{key, "MOD", put->over}},
                                     {{txn_op::kind::put, key, put->value, 0, {}}}));
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

void etcd_store::watch(event_listener listener) {
  auto& d = *impl_;
  if (!d.shell.set_listener(std::move(listener))) return;
  if (d.watching) return;
  d.watching = true;
  d.arm_watch();
}

store_status etcd_store::status() const {
  const auto& d = *impl_;
  store_status s;
  s.kind = "etcd";
  s.label = "etcd";
  std::string endpoints;
  for (const auto& url : d.options.endpoints) {
    auto parsed = parse_endpoint(url);
    if (const auto* ep = std::get_if<endpoint>(&parsed)) {
      endpoints += (endpoints.empty() ? "" : ",") + ep->redacted();
    }
  }
  s.endpoint = endpoints + " prefix " + d.keys.dir;
  s.wakeups = d.watching ? d.watch_state : wakeup_state::off;
  d.shell.fill_status(s);
  // One row per endpoint: connected while the calls' connection or the
  // watch stream is open to it, connecting while one of them is being
  // opened; the others have no connection (the store uses one member at a
  // time, and the watch follows the calls when they move on). The store's
  // own link is the best of the two connections: a watch open alone is a
  // connection to etcd too.
  const auto& all = d.client->options().endpoints;
  const bool stream_open = d.stream && d.watching && !d.shell.closed();
  const auto calls = d.client->state();
  const auto watch = !stream_open                                  ? link_state::disconnected
                     : d.watch_state == wakeup_state::subscribed ? link_state::connected
                     : d.watch_state == wakeup_state::connecting ? link_state::connecting
                                                                 : link_state::disconnected;
  const auto best = [](link_state a, link_state b) {
    if (a == link_state::connected || b == link_state::connected) return link_state::connected;
    if (a == link_state::connecting || b == link_state::connecting) return link_state::connecting;
    return link_state::disconnected;
  };
  s.link = best(calls, watch);
  for (std::size_t i = 0; i < all.size(); ++i) {
    store_member_status m;
    m.endpoint = all[i].redacted();
    m.role = "endpoint";
    const bool calls_here = d.client->current_index() == i;
    const bool watch_here = stream_open && d.watch_at == i;
    m.link = best(calls_here ? calls : link_state::disconnected,
                  watch_here ? watch : link_state::disconnected);
    m.last_error = i < d.endpoint_errors.size() ? d.endpoint_errors[i] : "";
    s.members.push_back(std::move(m));
  }
  return s;
}

void etcd_store::close() {
  auto& d = *impl_;
  if (!d.shell.close()) return;
  d.client->close();
  if (d.stream) d.stream->stop();
  d.retry_timer.cancel();
  d.ping_timer.cancel();
}

}  // namespace baton
