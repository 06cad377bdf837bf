// The ZooKeeper store's registry of candidates: this store's ephemeral node
// under <election>/candidates, once per session (a predecessor's replaced);
// its cool-down mark; the list a switchover picks from (async_candidates);
// and the cache of the registry's names, kept by a children watch, that a
// held answer's outranked_by counts from.
#include "zookeeper_store_impl.hpp"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace baton {

// This store's registry node, once per session: sent ahead of the call's
// own requests, its answer not waited for (the call takes no extra round
// trip; the server answers a session's requests in order, so only the
// session's first call waits for the create's commit), and nothing at all
// once it is there. It lives with the session: a closed or crashed store
// leaves the list when its session expires, one session timeout (the ttl)
// after its last contact; a failed registration is tried again by the
// next acquire or renewal.
void zookeeper_store::impl::register_candidate() {
  if (!link || !session_up || registered_gen == link_gen || registering_gen == link_gen) return;
  registering_gen = link_gen;
  create_registration(link_gen, 0);
}

void zookeeper_store::impl::create_registration(std::uint64_t gen, int attempt) {
  const auto path = candidate_path(paths, options.identity.node_id, options.identity.priority);
  promise_unwritten = false;
  const auto data = encode_candidate(own_candidate());
  link->create(path, data, true, [this, gen, attempt, path](int rc, node_seen node) {
    if (gen != link_gen) return;
    if (rc == ZOK) {
      registered_gen = gen;
      server_time.learn(node.ctime_ms, mono_clock::now());
      return;
    }
    if (attempt < 2 && rc == ZNONODE) {
      // The registry's node is missing (a first start, or an election
      // older than the registry).
      return ensure_parents(
          [this, gen, attempt](store_error e) {
            if (gen != link_gen) return;
            if (e) return registration_failed({});
            create_registration(gen, attempt + 1);
          },
          true);
    }
    if (attempt < 2 && rc == ZNODEEXISTS) return replace_registration(gen, attempt, path);
    registration_failed(zoo_failure(rc, "register in " + paths.candidates));
  });
}

// A node of this node id from another session: a predecessor of this
// process whose session has not expired yet, or a second candidate with
// the same node id. Ours replaces it, so that the list keeps the node id
// once and this session's node outlives the other's.
void zookeeper_store::impl::replace_registration(std::uint64_t gen, int attempt,
                                                 const std::string& path) {
  link->get(path, [this, gen, attempt, path](int rc, node_seen node) {
    if (gen != link_gen) return;
    if (rc == ZOK && node.owner_session == link->session_id()) {
      registered_gen = gen;
      return;
    }
    if (rc == ZNONODE) return create_registration(gen, attempt + 1);
    if (rc != ZOK) return registration_failed(zoo_failure(rc, "read " + path));
    link->multi({{zk_op::kind::remove, path, {}, node.version, false}},
                [this, gen, attempt, path](int rc2, std::vector<zk_op_result>) {
                  if (gen != link_gen) return;
                  if (rc2 != ZOK && rc2 != ZNONODE && rc2 != ZBADVERSION)
                    return registration_failed(zoo_failure(rc2, "replace " + path));
                  create_registration(gen, attempt + 1);
                });
  });
}

// What this store's registry node says: its node id, priority and card,
// and with lease.failsafe peers its peer port and the promise it keeps
// (F9), with the time left of it now.
candidate_value zookeeper_store::impl::own_candidate() const {
  candidate_value v{options.identity.priority, options.identity.node_id, options.identity.card};
  v.peer_address = options.identity.peer_address;
  if (promise) {
    const auto left = std::chrono::ceil<milliseconds>(promise_until - mono_clock::now());
    if (left > milliseconds(0))
      v.promise = registered_promise{promise->token, promise->leader, left};
  }
  return v;
}

// Not the call's failure: the call goes on, status tells, and the next
// acquire or renewal tries again.
void zookeeper_store::impl::registration_failed(store_error e) {
  registering_gen = 0;
  if (e) note_failure(std::move(e));
}

// A cool-down after giving the lease up, for a leader weighing a
// switchover to this node: the registry node's data says how long, and its
// mtime (the server's clock) since when. Best effort, as the registry is:
// a failed write leaves the node as it was. The session keeps the node;
// the next acquire puts the plain data back, and a reader stops counting
// the cool-down once it has passed in any case.
void zookeeper_store::impl::mark_cooling(milliseconds cooldown) {
  if (!link || !session_up || registered_gen != link_gen || cooldown <= milliseconds(0)) return;
  cooling_marked = true;
  write_registration(encode_cooling_candidate(own_candidate(), cooldown));
}

void zookeeper_store::impl::clear_cooling() {
  if (!cooling_marked || !link || !session_up || registered_gen != link_gen) return;
  cooling_marked = false;
  write_registration(encode_candidate(own_candidate()));
}

void zookeeper_store::impl::write_registration(std::string data) {
  const auto path = candidate_path(paths, options.identity.node_id, options.identity.priority);
  link->multi({{zk_op::kind::set, path, std::move(data), -1, false}},
              [](int, std::vector<zk_op_result>) {});
}

// One read of each listed node for its age (ctime): the names say who and
// with which priority. A node id listed twice (a restarted candidate with
// another priority, before its successor removed its predecessor's node)
// is its newest registration.
void zookeeper_store::impl::list_candidates(
    const std::shared_ptr<op<std::vector<candidate_info>>>& o) {
  const auto gen = link_gen;
  link->children(paths.candidates, [this, o, gen](int rc, std::vector<std::string> names) {
    if (o->done) return;
    if (rc == ZNONODE) return o->finish({}, {});
    if (rc != ZOK) return o->finish(note_failure(zoo_failure(rc, "list " + paths.candidates)), {});
    if (gen != link_gen)
      return o->finish(note_failure({zookeeper_errc::connection_lost,
                                     "the ZooKeeper session changed while listing candidates"}),
                       {});
    struct listed {
      candidate_info info;
      std::int64_t czxid = 0;
    };
    auto found = std::make_shared<std::vector<listed>>();
    auto pending = std::make_shared<std::size_t>(0);
    const auto finish = [o, found] {
      std::vector<candidate_info> out;
      std::sort(found->begin(), found->end(),
                [](const listed& x, const listed& y) { return x.czxid > y.czxid; });
      for (auto& f : *found) {
        const bool seen = std::any_of(
            out.begin(), out.end(), [&](const candidate_info& c) { return c.node == f.info.node; });
        if (!seen) out.push_back(std::move(f.info));
      }
      o->finish({}, std::move(out));
    };
    for (const auto& name : names) {
      // A node baton did not write: not a candidate.
      auto v = decode_candidate_name(name);
      if (!v) continue;
      ++*pending;
      const auto path = paths.candidates + "/" + name;
      link->get(path, [this, o, found, pending, path, finish, v = std::move(*v)](int rc2,
                                                                                 node_seen node) {
        if (o->done) return;
        if (rc2 != ZOK && rc2 != ZNONODE)
          return o->finish(note_failure(zoo_failure(rc2, "read " + path)), {});
        // Gone since the listing (its session expired): not a candidate.
        if (rc2 == ZOK) {
          const auto server_now = server_time.now_ms(mono_clock::now());
          candidate_info info{v.node_id, v.priority, registered_for(node.ctime_ms, server_now)};
          info.cooling_down_for = cooling_left(node.data, node.mtime_ms, server_now);
          info.card = candidate_card_of(node.data);
          info.peer_address = candidate_peer_of(node.data);
          found->push_back({std::move(info), node.czxid});
        }
        if (--*pending == 0) finish();
      });
    }
    if (*pending == 0) finish();
  });
}

// What a held answer's outranked_by counts from: the registry's names
// (each says its candidate's node id and priority), read with a children
// watch. The read goes out ahead of an acquire's own reads, in the same
// round trip (the server answers a session's requests in order), and only
// when the cache is not current: the first acquire on a session, the
// first after the watch fired (a candidate came or went), or after the
// connection broke. A standby whose registry does not change sends
// nothing more than before; a leader, which does not acquire, nothing.
void zookeeper_store::impl::refresh_registry() {
  if (!link || !session_up) return;
  if (registry_gen == link_gen && !registry_stale) return;
  if (registry_reading_gen == link_gen) return;
  registry_reading_gen = link_gen;
  const auto gen = link_gen;
  link->children_watch(paths.candidates, [this, gen](int rc, std::vector<std::string> names) {
    if (gen != link_gen) return;
    registry_reading_gen = 0;
    // No registry yet (ZNONODE: nor a watch), or the call failed: the
    // next acquire reads it again; the acquire's own reads say why.
    if (rc != ZOK) return;
    // A watch event that came before this answer was about a change this
    // read saw already (the server sends a change's event before the
    // answers that follow it).
    registry_stale = false;
    registry_gen = gen;
    registry.clear();
    const auto& self = options.identity.node_id;
    const auto own = candidate_name(self, options.identity.priority);
    for (const auto& name : names) {
      auto v = decode_candidate_name(name);
      if (!v) continue;
      // This node id's registration from a predecessor of another
      // priority: ours replaces it, as one of the same priority is.
      if (v->node_id == self && name != own) {
        if (registered_gen == gen) remove_predecessor(paths.candidates + "/" + name);
        continue;
      }
      registry.push_back(std::move(*v));
    }
  });
}

void zookeeper_store::impl::remove_predecessor(const std::string& path) {
  link->multi({{zk_op::kind::remove, path, {}, -1, false}},
              [this, gen = link_gen, path](int rc, std::vector<zk_op_result>) {
                if (gen != link_gen || rc == ZOK || rc == ZNONODE) return;
                note_failure(zoo_failure(rc, "replace " + path));
              });
}

// acquire_answer::outranked_by for a lease held by `holder`; -1 when the
// registry was not read on this session (yet).
int zookeeper_store::impl::outranked_by(const std::string& holder) const {
  if (registry_gen == 0 || registry_gen != link_gen) return -1;
  return count_outranking(registry, options.identity.node_id, options.identity.priority, holder);
}

void zookeeper_store::register_cooldown(milliseconds cooldown) {
  impl_->mark_cooling(cooldown);
}

// The registry node is rewritten at once when this session has one (a
// cool-down's mark goes with it: a drain or undrain is news enough), else
// created with the card by the next registration.
void zookeeper_store::update_card(std::string card) {
  auto& d = *impl_;
  d.options.identity.card = std::move(card);
  if (!d.link || !d.session_up || d.registered_gen != d.link_gen) return;
  d.cooling_marked = false;
  d.write_registration(encode_candidate(d.own_candidate()));
}

// The session's registry node, as an acquire makes it (once per session),
// then the lease node's data: its holder and token. With lease.failsafe
// peers it does not register, as no other kind does: every listed
// candidate is a peer a leader asks, and one that may not lead answers
// none, so a leader's rounds would fail for its sake.
void zookeeper_store::async_look(look_handler handler) {
  auto& d = *impl_;
  d.begin_session_call(handler, "look at the lease", [&d](auto o) {
    if (d.options.identity.peer_address.empty()) d.register_candidate();
    d.link->get(d.paths.lease, [&d, o](int rc, node_seen node) {
      if (o->done) return;
      if (rc == ZNONODE) return o->finish({}, {});
      if (rc != ZOK) return o->finish(d.note_failure(zoo_failure(rc, "read " + d.paths.lease)), {});
      const auto value = decode_lease(node.data);
      o->finish({}, value ? lease_holder{value->node_id, value->token} : lease_holder{});
    });
  });
}

void zookeeper_store::async_candidates(candidates_handler handler) {
  auto& d = *impl_;
  d.begin_session_call(handler, "list the candidates", [&d](auto o) { d.list_candidates(o); });
}

}  // namespace baton
