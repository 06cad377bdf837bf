// lease.failsafe peers on the ZooKeeper store (docs/stores/zookeeper.md,
// "Peer-confirmed leadership"): the port's failsafe calls. The record's term
// rides on the record node, which every grant already rewrites in its multi
// (lease_nodes.hpp decides what goes into it); this file adds what a take
// needs besides (the other candidates' registered promises, read and their
// versions checked in the take's own multi, F9), the promise this node's
// registry node carries, and the resume (F8): one multi that checks the
// record's version (so its content as read), writes the record and
// creates the ephemeral lease node again on this session.
#include "zookeeper_store_impl.hpp"

#include <zookeeper/zookeeper.h>

#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace baton {
namespace {

constexpr int max_resume_attempts = 4;

}  // namespace

struct zookeeper_store::impl::failsafe_side final : failsafe_calls {
  explicit failsafe_side(impl& d) : d_(d) {}

  void async_acquire(const failsafe_acquire& a, acquire_handler handler) override {
    auto fs = std::make_shared<const failsafe_grant>(
        failsafe_grant{a.may_win, a.cleared_token, d_.options.identity.peer_address, a.list});
    d_.begin_call(handler, "acquire", [this, fs, promise = a.promise](auto o) {
      d_.keep_promise(promise);
      d_.acquire(o, 0, fs);
    });
  }
  // Within command_timeout, the session's wait included: a renewal that
  // cannot reach the store must fail while a round of confirmations can
  // still count before the leader's renew deadline (F3), not after the
  // connect_timeout a plain renewal waits for a session.
  void async_renew(const failsafe_list& list, renew_handler handler) override {
    const auto bound = d_.options.command_timeout;
    d_.begin_call(
        handler, "renew",
        [this, list, bound](auto o) {
          d_.with_session(
              [this, o, list](store_error e) {
                if (o->done) return;
                if (e) return o->finish(e, {});
                d_.renew(o, &list);
              },
              bound);
        },
        bound);
  }
  void async_resume(std::uint64_t token, const failsafe_list& list,
                    renew_handler handler) override {
    d_.begin_call(handler, "resume", [this, token, list](auto o) { d_.resume(o, token, list, 0); });
  }

 private:
  impl& d_;
};

// The promise this node keeps, for its registry node: rewritten when the
// promise is for another term, ends later than the one written, or ended.
// A promise that merely counts down is not written again: the node's
// mtime and the time left it says already tell its end.
void zookeeper_store::impl::keep_promise(const std::optional<failsafe_promise>& p) {
  const auto now = mono_clock::now();
  bool changed = false;
  if (p && p->remaining > milliseconds(0)) {
    const auto until = now + p->remaining;
    const bool same_term = promise && promise->leader == p->leader && promise->token == p->token;
    if (!same_term || until > promise_until) {
      promise = p;
      promise_until = until;
      changed = true;
    }
  } else if (promise) {
    promise.reset();
    changed = true;
  }
  if (changed) promise_unwritten = true;
  if (promise_unwritten && link && session_up && registered_gen == link_gen) {
    promise_unwritten = false;
    cooling_marked = false;
    write_registration(encode_candidate(own_candidate()));
  }
}

// F9 before a take: the other candidates' registry nodes read (their names
// from the registry, then each node), a live promise to a term the caller
// has not cleared answered as a failsafe hold; then a caller that may not
// win only registers (F7); otherwise the take's multi, with each node read
// checked at its version, so that a promise written meanwhile fails it.
void zookeeper_store::impl::take_unless_promised(const std::shared_ptr<op<acquire_answer>>& o,
                                                 int attempt, const acquire_steps::take& s,
                                                 const grant_args& fs) {
  const auto gen = link_gen;
  link->children(
      paths.candidates, [this, o, attempt, s, fs, gen](int rc, std::vector<std::string> names) {
        if (o->done) return;
        if (rc != ZOK && rc != ZNONODE)
          return o->finish(note_failure(zoo_failure(rc, "list " + paths.candidates)), {});
        if (gen != link_gen)
          return o->finish(note_failure({zookeeper_errc::connection_lost,
                                         "the ZooKeeper session changed during an acquire"}),
                           {});
        auto seen = std::make_shared<std::vector<registration_seen>>();
        auto pending = std::make_shared<std::size_t>(1);
        const auto judge = [this, o, attempt, s, fs, seen, pending] {
          if (--*pending > 0 || o->done) return;
          const auto& self = options.identity.node_id;
          const auto server_now = server_time.now_ms(mono_clock::now());
          if (auto hold = promise_hold(*seen, self, fs->cleared_token, server_now)) {
            if (!pending_reset.empty() && seen_hold_at >= pending_reset_at) pending_reset.clear();
            return o->finish({}, failsafe_hold_answer(std::move(*hold), 0));
          }
          if (!fs->may_win) return o->finish({}, abstained_answer(0));
          std::vector<zk_op> ops_;
          for (const auto& r : *seen)
            ops_.push_back({zk_op::kind::check, r.path, {}, r.version, false});
          ops_.push_back(
              {zk_op::kind::set, paths.record, encode_record(s.record), s.record_version, false});
          ops_.push_back({zk_op::kind::create, paths.lease, encode_lease(s.lease), -1, true});
          take(o, attempt, std::move(ops_), s.record, s.lease.token, fs);
        };
        for (const auto& name : names) {
          auto v = decode_candidate_name(name);
          // Not a candidate's node, or this node id's own (a predecessor's too).
          if (!v || v->node_id == options.identity.node_id) continue;
          ++*pending;
          const auto path = paths.candidates + "/" + name;
          link->get(path, [this, o, seen, judge, path, node = v->node_id](int rc2, node_seen n) {
            if (o->done) return;
            if (rc2 != ZOK && rc2 != ZNONODE)
              return o->finish(note_failure(zoo_failure(rc2, "read " + path)), {});
            // Gone since the listing (its session expired): no promise.
            if (rc2 == ZOK) seen->push_back({path, node, std::move(n.data), n.version, n.mtime_ms});
            judge();
          });
        }
        judge();
      });
}

// F8: the record and the lease node read on this session, the pure
// decision taken on them, and its one multi written.
void zookeeper_store::impl::resume(const std::shared_ptr<op<renew_answer>>& o, std::uint64_t token,
                                   const failsafe_list& list, int attempt) {
  with_session([this, o, token, list, attempt](store_error e) {
    if (o->done) return;
    if (e) return o->finish(e, {});
    if (session_problem) return o->finish(note_failure(session_problem), {});
    register_candidate();
    const auto gen = link_gen;
    const auto changed = [this] {
      return note_failure(
          {zookeeper_errc::connection_lost, "the ZooKeeper session changed during a resume"});
    };
    link->get(paths.record,
              [this, o, token, list, attempt, gen, changed](int rc, node_seen record) {
                if (o->done) return;
                if (rc != ZOK && rc != ZNONODE)
                  return o->finish(note_failure(zoo_failure(rc, "read " + paths.record)), {});
                if (gen != link_gen) return o->finish(changed(), {});
                link->get(paths.lease, [this, o, token, list, attempt, gen, changed, record](
                                           int rc2, node_seen lease) {
                  if (o->done) return;
                  if (rc2 != ZOK && rc2 != ZNONODE)
                    return o->finish(note_failure(zoo_failure(rc2, "read " + paths.lease)), {});
                  if (gen != link_gen) return o->finish(changed(), {});
                  const resume_facts f{token,
                                       options.identity.node_id,
                                       nonce,
                                       link->session_id(),
                                       options.identity.peer_address,
                                       list};
                  const auto step = decide_resume(record, lease, f);
                  if (const auto* lost = std::get_if<resume_steps::lost>(&step)) {
                    // No code: the detail says why, for the log.
                    return o->finish({{},
                                      "resume of term " + std::to_string(token) + " on " +
                                          paths.election + ": " + lost->why},
                                     renew_answer::lost);
                  }
                  if (const auto* bad = std::get_if<resume_steps::bad_data>(&step)) {
                    return o->finish(note_failure({zookeeper_errc::unexpected_reply,
                                                   bad->why + " (" + paths.election + ")"}),
                                     {});
                  }
                  const auto& w = std::get<resume_steps::write>(step);
                  if (w.record_exists) return write_resume(o, token, list, attempt, w);
                  // The ensemble lost its data: the prefix's and election's nodes first.
                  ensure_parents([this, o, token, list, attempt, w](store_error pe) {
                    if (o->done) return;
                    if (pe) return o->finish(pe, {});
                    write_resume(o, token, list, attempt, w);
                  });
                });
              });
  });
}

void zookeeper_store::impl::write_resume(const std::shared_ptr<op<renew_answer>>& o,
                                         std::uint64_t token, const failsafe_list& list,
                                         int attempt, const resume_steps::write& w) {
  using resume_steps::lease_write;
  std::vector<zk_op> ops_;
  if (w.record_exists) {
    ops_.push_back(
        {zk_op::kind::set, paths.record, encode_record(w.record), w.record_version, false});
  } else {
    ops_.push_back({zk_op::kind::create, paths.record, encode_record(w.record), -1, false});
  }
  const auto data = encode_lease(w.value);
  if (w.lease == lease_write::set) {
    ops_.push_back({zk_op::kind::set, paths.lease, data, w.lease_version, false});
  } else {
    // A lease node of ours on a session this store left dies with that
    // session: deleted here, it comes back on this one in the same step.
    if (w.lease == lease_write::replace)
      ops_.push_back({zk_op::kind::remove, paths.lease, {}, w.lease_version, false});
    ops_.push_back({zk_op::kind::create, paths.lease, data, -1, true});
  }
  const auto sent_at = mono_clock::now();
  const auto gen = link_gen;
  link->multi(std::move(ops_), [this, o, token, list, attempt, w, sent_at, gen](
                                   int rc, std::vector<zk_op_result> r) {
    if (o->done) return;
    switch (classify_write(rc)) {
      case write_outcome::done: {
        if (gen != link_gen || r.empty()) break;
        const auto record_version = w.record_exists ? r.front().stat.version : 0;
        const auto lease_version = w.lease == lease_write::set ? r.back().stat.version : 0;
        hold_term(token, lease_version, record_version, sent_at, w.record);
        if (w.record_exists) server_time.learn(r.front().stat.mtime_ms, mono_clock::now());
        pending_reset.clear();
        suppress_release = false;
        return o->finish({}, renew_answer::renewed);
      }
      case write_outcome::raced:
        if (attempt + 1 < max_resume_attempts) return resume(o, token, list, attempt + 1);
        return o->finish(note_failure({zookeeper_errc::contention,
                                       "the nodes of " + paths.election + " changed on each of " +
                                           std::to_string(max_resume_attempts) +
                                           " tries to resume term " + std::to_string(token)}),
                         {});
      case write_outcome::failed:
        return o->finish(note_failure(call_failure(rc, "resume on " + paths.election)), {});
    }
    o->finish(note_failure({zookeeper_errc::connection_lost,
                            "the ZooKeeper session changed during a resume"}),
              {});
  });
}

failsafe_calls* zookeeper_store::failsafe() {
  auto& d = *impl_;
  if (!d.failsafe_calls_of) d.failsafe_calls_of = std::make_shared<impl::failsafe_side>(d);
  return d.failsafe_calls_of.get();
}

}  // namespace baton
