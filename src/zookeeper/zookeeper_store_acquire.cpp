// The ZooKeeper store's acquire: the record and the lease node read, the
// pure decision of lease_nodes.hpp taken on them with what this store saw
// before, and its step carried out (a term taken in one multi, a hold-back
// written, a missing record created, an answer of held); raced writes are
// tried again a few times. Also the election's nodes created when missing,
// by an acquire, a registration or async_create_record.
#include "zookeeper_store_impl.hpp"

#include <zookeeper/zookeeper.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace baton {
namespace {

template <typename... Fs>
struct overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
overloaded(Fs...) -> overloaded<Fs...>;

constexpr int max_attempts = 4;

}  // namespace

void zookeeper_store::impl::acquire(std::shared_ptr<op<acquire_answer>> o, int attempt,
                                    grant_args fs) {
  with_session([this, o, attempt, fs](store_error e) {
    if (o->done) return;
    if (e) return o->finish(e, {});
    if (session_problem) return o->finish(note_failure(session_problem), {});
    register_candidate();
    clear_cooling();
    refresh_registry();
    if (may_take_unread(attempt, fs)) {
      // The lease node's deletion was just heard and the record is as this
      // store last read it: the decision needs no read. The take's multi
      // checks both (the record's version, the lease node created only if
      // absent), so a changed record or a new term makes it fail as raced,
      // and the next attempt reads.
      lease_gone = false;
      const auto record = cached_record;
      return decide(o, attempt, record, node_seen{}, fs);
    }
    read_then_decide(o, attempt, fs);
  });
}

// The fast path of a takeover after a crash: only a plain acquire
// (lease.failsafe peers reads the registry's promises first), the first
// attempt, on the session the record was read on, its watch silent since.
bool zookeeper_store::impl::may_take_unread(int attempt, const grant_args& fs) const {
  return !fs && !failsafe_on() && attempt == 0 && lease_gone && !record_stale &&
         cached_record_gen == link_gen && cached_record.exists;
}

// The record (with a data watch, which keeps it cached) and the lease node,
// both asked at once: the server answers a session's requests in order, so
// the record is read before the lease node, in one round trip.
void zookeeper_store::impl::read_then_decide(const std::shared_ptr<op<acquire_answer>>& o,
                                             int attempt, const grant_args& fs) {
  struct reads {
    std::optional<std::pair<int, node_seen>> record;
    std::optional<std::pair<int, node_seen>> lease;
  };
  auto got = std::make_shared<reads>();
  const auto gen = link_gen;
  auto both = [this, o, attempt, gen, fs, got] {
    if (o->done || !got->record || !got->lease) return;
    const auto& [rc, record] = *got->record;
    const auto& [rc2, lease] = *got->lease;
    if (rc != ZOK && rc != ZNONODE)
      return o->finish(note_failure(zoo_failure(rc, "read " + paths.record)), {});
    if (rc2 != ZOK && rc2 != ZNONODE)
      return o->finish(note_failure(zoo_failure(rc2, "read " + paths.lease)), {});
    if (gen != link_gen)
      return o->finish(note_failure({zookeeper_errc::connection_lost,
                                     "the ZooKeeper session changed during an acquire"}),
                       {});
    decide(o, attempt, record, lease, fs);
  };
  link->get_watch(paths.record, [this, gen, got, both](int rc, node_seen record) {
    if (gen == link_gen && rc == ZOK) {
      // A change after this read fires the watch, whose event comes
      // before any later answer; one before it came already.
      cached_record = record;
      cached_record_gen = gen;
      record_stale = false;
    } else if (gen == link_gen) {
      record_stale = true;  // no node: no watch either
    }
    got->record.emplace(rc, std::move(record));
    both();
  });
  link->get(paths.lease, [got, both](int rc, node_seen lease) {
    got->lease.emplace(rc, std::move(lease));
    both();
  });
}

// False when the listener destroyed or closed the store meanwhile.
bool zookeeper_store::impl::note_seen(const node_seen& record, const node_seen& lease,
                                      time_point now) {
  const auto alive = shell.guard();
  if (record.exists &&
      (record.czxid != seen_record_czxid || record.version != seen_record_version)) {
    seen_record_czxid = record.czxid;
    seen_record_version = record.version;
    seen_record_at = now;
  }
  if (record.exists) {
    if (const auto rec = decode_record(record.data); rec && rec->hold != seen_hold) {
      seen_hold = rec->hold;
      seen_hold_at = now;
      if (!rec->hold.empty() && rec->hold.rfind(nonce + "-", 0) != 0) {
        // Its cause is the other candidate's (rec->why); what this store
        // saw is the hold, not lost data.
        shell.report_reset(store_events::reset{
            rec->why,
            false,
            {},
            "another candidate of election " + options.identity.election +
                " found the store reset and wrote a hold-back into the record"});
        if (alive.expired() || shell.closed()) return false;
      }
    }
  }
  note_lease(lease, now);
  return true;
}

// When this store first saw the lease node's current version: a held
// lease's remaining time and the early-loss guard count from there.
void zookeeper_store::impl::note_lease(const node_seen& lease, time_point now) {
  if (lease.exists && (lease.czxid != seen_lease_czxid || lease.version != seen_lease_version)) {
    seen_lease_czxid = lease.czxid;
    seen_lease_version = lease.version;
    seen_lease_at = now;
    const auto value = decode_lease(lease.data);
    seen_lease_token = value ? value->token : 0;
  }
}

void zookeeper_store::impl::decide(const std::shared_ptr<op<acquire_answer>>& o, int attempt,
                                   const node_seen& record, const node_seen& lease,
                                   const grant_args& fs) {
  const auto now = mono_clock::now();
  if (!note_seen(record, lease, now)) return;
  acquire_facts f;
  f.node_id = options.identity.node_id;
  f.nonce = nonce;
  f.session_id = link->session_id();
  f.ttl = ttl();
  f.now = now;
  f.pending_reset = pending_reset;
  f.pending_reset_at = pending_reset_at;
  f.seen_hold = seen_hold;
  f.seen_hold_at = seen_hold_at;
  f.seen_lease_czxid = seen_lease_czxid;
  f.seen_lease_version = seen_lease_version;
  f.seen_lease_at = seen_lease_at;
  f.seen_lease_token = seen_lease_token;
  f.seen_record_czxid = seen_record_czxid;
  f.seen_record_version = seen_record_version;
  f.seen_record_at = seen_record_at;
  f.server_now_ms = server_time.now_ms(now);
  if (fs) f.failsafe = *fs;
  const auto mark = nonce + "-" + std::to_string(++hold_count);
  const auto counter = [&] {
    const auto rec = decode_record(record.data);
    return rec ? rec->counter : 0;
  }();
  std::visit(
      overloaded{
          [&](const acquire_steps::create_record& s) {
            create_record_held(o, attempt, s.record, now, fs);
          },
          [&](const acquire_steps::write_hold& s) { write_hold(o, attempt, s, now, fs); },
          [&](const acquire_steps::held_back& s) {
            if (!pending_reset.empty() && seen_hold_at >= pending_reset_at) pending_reset.clear();
            acquire_answer a;
            a.outcome = acquire_outcome::held_back;
            a.token = counter;
            a.remaining = s.remaining;
            a.why = s.why;
            o->finish({}, std::move(a));
          },
          [&](const acquire_steps::held& s) {
            pending_reset.clear();
            acquire_answer a;
            a.outcome = acquire_outcome::held;
            a.holder = s.holder;
            a.token = s.token;
            a.remaining = s.remaining;
            a.reserved_for = s.reserved_for;
            a.outranked_by = outranked_by(s.holder);
            o->finish({}, std::move(a));
          },
          [&](const acquire_steps::take& s) {
            if (fs) return take_unless_promised(o, attempt, s, fs);
            take(o, attempt,
                 {{zk_op::kind::set, paths.record, encode_record(s.record), s.record_version,
                   false},
                  {zk_op::kind::create, paths.lease, encode_lease(s.lease), -1, true}},
                 s.record, s.lease.token, fs);
          },
          [&](const acquire_steps::retake& s) {
            take(o, attempt,
                 {{zk_op::kind::set, paths.record, encode_record(s.record), s.record_version,
                   false},
                  {zk_op::kind::set, paths.lease, encode_lease(s.lease), s.lease_version, false}},
                 s.record, s.lease.token, fs);
          },
          [&](const acquire_steps::bad_data& s) {
            o->finish(note_failure({zookeeper_errc::unexpected_reply,
                                    s.why + " (" + paths.election + ")"}),
                      {});
          },
          [&](const acquire_steps::failsafe_held& s) {
            if (!pending_reset.empty() && seen_hold_at >= pending_reset_at) pending_reset.clear();
            o->finish({}, failsafe_hold_answer(s.hold, counter));
          },
          [&](const acquire_steps::abstain&) { o->finish({}, abstained_answer(counter)); },
      },
      decide_acquire(record, lease, f, mark));
}

void zookeeper_store::impl::retry_or_give_up(const std::shared_ptr<op<acquire_answer>>& o,
                                             int attempt, const grant_args& fs) {
  if (attempt + 1 < max_attempts) {
    acquire(o, attempt + 1, fs);
    return;
  }
  o->finish(note_failure({zookeeper_errc::contention,
                          "the nodes of " + paths.election + " changed on each of " +
                              std::to_string(max_attempts) + " tries"}),
            {});
}

// `ops_` end with the record's set and the lease node's write (the checks
// of a failsafe take come before them).
void zookeeper_store::impl::take(const std::shared_ptr<op<acquire_answer>>& o, int attempt,
                                 std::vector<zk_op> ops_, const record_value& record,
                                 std::uint64_t token, const grant_args& fs) {
  const auto sent_at = mono_clock::now();
  const auto gen = link_gen;
  const auto count = ops_.size();
  link->multi(std::move(ops_), [this, o, attempt, token, sent_at, gen, record, fs, count](
                                   int rc, std::vector<zk_op_result> r) {
    if (o->done && rc != ZOK) return;
    switch (classify_write(rc)) {
      case write_outcome::done: {
        if (gen != link_gen || r.size() != count || count < 2) break;
        const auto& record_result = r[count - 2];
        const auto& lease_result = r[count - 1];
        const auto lease_version = lease_result.stat.exists ? lease_result.stat.version : 0;
        hold_term(token, lease_version, record_result.stat.version, sent_at, record);
        server_time.learn(record_result.stat.mtime_ms, mono_clock::now());
        pending_reset.clear();
        suppress_release = false;
        acquire_answer a;
        a.outcome = acquire_outcome::acquired;
        a.token = token;
        a.holder = options.identity.node_id;
        a.remaining = ttl();
        o->finish({}, std::move(a));
        return;
      }
      case write_outcome::raced:
        return retry_or_give_up(o, attempt, fs);
      case write_outcome::failed:
        return o->finish(note_failure(zoo_failure(rc, "acquire on " + paths.election)), {});
    }
    o->finish(note_failure({zookeeper_errc::connection_lost,
                            "the ZooKeeper session changed during an acquire"}),
              {});
  });
}

void zookeeper_store::impl::create_record_held(const std::shared_ptr<op<acquire_answer>>& o,
                                               int attempt, const record_value& record,
                                               time_point now, const grant_args& fs) {
  ensure_parents([this, o, attempt, record, now, fs](store_error e) {
    if (o->done) return;
    if (e) return o->finish(e, {});
    link->create(
        paths.record, encode_record(record), false,
        [this, o, attempt, record, now, fs](int rc, node_seen) {
          if (o->done) return;
          if (rc == ZNODEEXISTS) return retry_or_give_up(o, attempt, fs);
          if (rc != ZOK)
            return o->finish(note_failure(zoo_failure(rc, "create " + paths.record)), {});
          seen_hold = record.hold;
          seen_hold_at = now;
          pending_reset.clear();
          acquire_answer a;
          a.outcome = acquire_outcome::held_back;
          a.remaining = ttl();
          const auto alive = shell.guard();
          shell.report_reset(store_events::reset{
              "the record of election " + options.identity.election + " was missing at " +
                  paths.record + " (a first start, or the ensemble lost its data)",
              true,
              {}});
          if (alive.expired()) return;
          o->finish({}, std::move(a));
        });
  });
}

void zookeeper_store::impl::write_hold(const std::shared_ptr<op<acquire_answer>>& o, int attempt,
                                       const acquire_steps::write_hold& s, time_point now,
                                       const grant_args& fs) {
  const auto record = s.record;
  link->multi({{zk_op::kind::set, paths.record, encode_record(record), s.record_version, false}},
              [this, o, attempt, record, now, fs](int rc, std::vector<zk_op_result>) {
                if (o->done) return;
                switch (classify_write(rc)) {
                  case write_outcome::done: {
                    seen_hold = record.hold;
                    seen_hold_at = now;
                    pending_reset.clear();
                    acquire_answer a;
                    a.outcome = acquire_outcome::held_back;
                    a.token = record.counter;
                    a.remaining = ttl();
                    return o->finish({}, std::move(a));
                  }
                  case write_outcome::raced:
                    return retry_or_give_up(o, attempt, fs);
                  case write_outcome::failed:
                    return o->finish(note_failure(zoo_failure(rc, "hold back " + paths.election)),
                                     {});
                }
              });
}

// The prefix's nodes and the election's node (and the registry's, with
// `candidates`), created when missing.
void zookeeper_store::impl::ensure_parents(std::function<void(store_error)> done, bool candidates) {
  std::vector<std::string> chain;
  for (std::size_t at = 1; at <= paths.prefix.size(); ++at) {
    if (at == paths.prefix.size() || paths.prefix[at] == '/')
      chain.push_back(paths.prefix.substr(0, at));
  }
  chain.push_back(paths.election);
  if (candidates) chain.push_back(paths.candidates);
  create_chain(std::make_shared<std::vector<std::string>>(std::move(chain)), 0, std::move(done));
}

void zookeeper_store::impl::create_chain(std::shared_ptr<std::vector<std::string>> chain,
                                         std::size_t i, std::function<void(store_error)> done) {
  if (i == chain->size()) return done({});
  if (!link || !session_up)
    return done(
        note_failure({zookeeper_errc::connection_lost, "the ZooKeeper session was lost"}));
  link->create((*chain)[i], {}, false, [this, chain, i, done](int rc, node_seen) {
    if (rc != ZOK && rc != ZNODEEXISTS)
      return done(note_failure(zoo_failure(rc, "create " + (*chain)[i])));
    create_chain(chain, i + 1, done);
  });
}

void zookeeper_store::async_acquire(acquire_handler handler) {
  auto& d = *impl_;
  d.begin_call(handler, "acquire", [&d](auto o) { d.acquire(o, 0); });
}

void zookeeper_store::async_create_record(record_handler handler) {
  auto& d = *impl_;
  d.begin_session_call(handler, "create the record", [&d](auto o) {
    // The registry's node with it: the first candidates' registrations and
    // their registry reads find it.
    d.ensure_parents(
        [&d, o](store_error pe) {
          if (o->done) return;
          if (pe) return o->finish(pe, {});
          d.link->create(d.paths.record, encode_record({}), false, [&d, o](int rc, node_seen) {
            if (rc == ZOK) return o->finish({}, record_answer::created);
            if (rc == ZNODEEXISTS) return o->finish({}, record_answer::existed);
            o->finish(d.note_failure(zoo_failure(rc, "create " + d.paths.record)), {});
          });
        },
        true);
  });
}

}  // namespace baton
