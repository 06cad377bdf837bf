// The term the ZooKeeper store holds: kept from the acquire's write, valid
// for ttl from the send time of the last acknowledged write, its lease node
// deleted by the store itself when it runs out unrenewed. Its calls: renew
// (a version-checked rewrite of the lease node), release and hand-over (one
// multi that rewrites the record and deletes the lease node; behind a
// renewal still in flight, they wait for its answer).
#include "zookeeper_store_impl.hpp"

#include <zookeeper/zookeeper.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace baton {

void zookeeper_store::impl::hold_term(std::uint64_t token, std::int32_t lease_version,
                                      std::int32_t record_version, time_point sent_at,
                                      record_value record) {
  held = {token, lease_version, record_version, link_gen, sent_at + ttl(), std::move(record)};
  arm_expiry();
}

void zookeeper_store::impl::arm_expiry() {
  expiry_timer.expires_at(held.valid_until);
  expiry_timer.async_wait([this, w = shell.guard()](const boost::system::error_code& ec) {
    if (ec || w.expired() || held.token == 0 || renewing) return;
    if (mono_clock::now() >= held.valid_until) drop_term(true);
  });
}

// Forgets the term; `delete_node`: its lease ran out unrenewed, so its
// node goes too (version checked: only ours), and standbys need not wait
// for the session to expire. With lease.failsafe peers the record keeps the
// term unreleased: its leader may run on its peers' confirmations, so a
// taker must clear it first (F6), and the leader may resume it (F8).
void zookeeper_store::impl::drop_term(bool delete_node) {
  if (delete_node && held.token != 0 && link && session_up && held.gen == link_gen) {
    auto ops_ = failsafe_on() && held.record.failsafe
                    ? std::vector<zk_op>{{zk_op::kind::remove, paths.lease, {}, held.lease_version,
                                          false}}
                    : end_term_ops(released_record(held.token));
    ++own_deletes;
    link->multi(std::move(ops_), [this, w = shell.guard()](int, std::vector<zk_op_result>) {
      if (!w.expired()) --own_deletes;
    });
  }
  held = {};
  expiry_timer.cancel();
}

// The holder ends its term: the record rewritten as `record` says (the
// term marked released, a hand-over's reservation with it; its version
// checked: still the record of our term) and the lease node deleted (its
// version checked: still our node), in one multi.
std::vector<zk_op> zookeeper_store::impl::end_term_ops(const record_value& record) const {
  return {{zk_op::kind::set, paths.record, encode_record(record), held.record_version, false},
          {zk_op::kind::remove, paths.lease, {}, held.lease_version, false}};
}

// Release and hand-over: the term ends with `record` written, announced as
// a release by the lease node's deletion (to the others: not to us).
void zookeeper_store::impl::end_term(const std::shared_ptr<op<release_answer>>& o,
                                     const record_value& record, const char* what) {
  if (o->done) return;
  if (renewing && held.token != 0 && held.gen == link_gen) {
    // A leader keeps renewing while its app stops, so a release can
    // follow a renewal that is still unanswered. That renewal moves the
    // lease node's version: sent now, the release would carry the version
    // from before it, answer "not ours" and leave the lease to expire
    // (a handover that took the session timeout). It goes once the
    // renewal's answer is in, with the version that answer brings.
    after_renewal.push_back([this, o, record, what] { end_term(o, record, what); });
    return;
  }
  if (held.token == 0 || held.gen != link_gen || !link) {
    return o->finish({}, release_answer::not_ours);
  }
  const auto gen = link_gen;
  const auto token = held.token;
  ++own_deletes;
  link->multi(
      end_term_ops(record), [this, o, gen, token, what](int rc, std::vector<zk_op_result>) {
        --own_deletes;
        const bool same_term = gen == link_gen && held.token == token;
        switch (classify_write(rc)) {
          case write_outcome::done:
            if (same_term) drop_term(false);
            suppress_release = true;
            return o->finish({}, release_answer::released);
          case write_outcome::raced:
            if (same_term) drop_term(false);
            return o->finish({}, release_answer::not_ours);
          case write_outcome::failed:
            return o->finish(
                note_failure(zoo_failure(rc, std::string(what) + " on " + paths.election)), {});
        }
      });
}

std::string zookeeper_store::impl::own_lease_data() const {
  return encode_lease({held.token, options.identity.node_id, nonce});
}

// A renewal: the lease node rewritten (its version checked) and the
// record's version checked, so that a term begun by another candidate
// fails it. With lease.failsafe peers and a list numbered above the one the
// record holds, the record is rewritten with that list instead of checked
// (F1); a list that lands late leaves the record's as it is.
void zookeeper_store::impl::renew(const std::shared_ptr<op<renew_answer>>& o,
                                  const failsafe_list* list) {
  if (held.token == 0 || held.gen != link_gen) return o->finish({}, renew_answer::lost);
  if (mono_clock::now() >= held.valid_until) {
    // Ran out unrenewed: a standby may hold it by now.
    drop_term(true);
    return o->finish({}, renew_answer::lost);
  }
  register_candidate();
  const auto sent_at = mono_clock::now();
  const auto gen = link_gen;
  const auto token = held.token;
  std::optional<record_value> rewritten;
  if (list && held.record.failsafe && list->seq > held.record.failsafe->seq) {
    rewritten = held.record;
    rewritten->failsafe->seq = list->seq;
    rewritten->failsafe->peers = list->peers;
  }
  zk_op record_op{zk_op::kind::check, paths.record, {}, held.record_version, false};
  if (rewritten) {
    record_op = {zk_op::kind::set, paths.record, encode_record(*rewritten), held.record_version,
                 false};
  }
  renewing = true;
  link->multi(
      {std::move(record_op),
       {zk_op::kind::set, paths.lease, own_lease_data(), held.lease_version, false}},
      [this, o, sent_at, gen, token, rewritten](int rc, std::vector<zk_op_result> r) {
        renewing = false;
        // Later: after this handler has recorded the versions it brought.
        for (auto& next : std::exchange(after_renewal, {})) later(std::move(next));
        const bool same_term = gen == link_gen && held.token == token;
        switch (classify_write(rc)) {
          case write_outcome::done:
            if (same_term && r.size() == 2) {
              held.lease_version = r[1].stat.version;
              if (rewritten) {
                held.record_version = r[0].stat.version;
                held.record = *rewritten;
              }
              held.valid_until = sent_at + ttl();
              server_time.learn(r[1].stat.mtime_ms, mono_clock::now());
              arm_expiry();
              return o->finish({}, renew_answer::renewed);
            }
            return o->finish({}, renew_answer::lost);
          case write_outcome::raced:
            if (same_term) drop_term(false);
            return o->finish({}, renew_answer::lost);
          case write_outcome::failed:
            if (same_term && mono_clock::now() >= held.valid_until) drop_term(true);
            return o->finish(note_failure(call_failure(rc, "renew on " + paths.election)), {});
        }
      });
}

void zookeeper_store::async_renew(renew_handler handler) {
  auto& d = *impl_;
  d.begin_session_call(handler, "renew", [&d](auto o) { d.renew(o, nullptr); });
}

void zookeeper_store::async_release(release_handler handler) {
  auto& d = *impl_;
  d.begin_session_call(handler, "release",
                       [&d](auto o) { d.end_term(o, released_record(d.held.token), "release"); });
}

// The release's multi, the reservation written into the record with it: the
// lease node goes and the reservation comes at once, and only `to_node`'s
// take (which rewrites the record) ends it before its window does.
void zookeeper_store::async_hand_over(const std::string& to_node, milliseconds window,
                                      release_handler handler) {
  auto& d = *impl_;
  const auto& self = d.options.identity.node_id;
  auto problem = reservation_node_problem(to_node);
  if (problem) {
    *problem = "cannot hand over to node id \"" + to_node + "\": it " + *problem;
  } else if (const auto own = reservation_node_problem(self)) {
    problem = "cannot hand over from node id \"" + self + "\": it " + *own;
  }
  if (problem) {
    if (d.shell.reject_if_closed(handler)) return;
    return d.shell.fail_later(
        std::move(handler),
        store_error{std::make_error_code(std::errc::invalid_argument), *problem});
  }
  d.begin_session_call(handler, "hand over", [&d, to_node, window](auto o) {
    d.end_term(o, handed_over_record(d.held.token, to_node, d.options.identity.node_id, window),
               "hand over");
  });
}

}  // namespace baton
