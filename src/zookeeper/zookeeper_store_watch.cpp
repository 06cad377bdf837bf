// The ZooKeeper store's watch: an exists watch on the lease node, armed
// again each time it fires or the session comes back, and what it found told
// to the listener (`released`, `acquired`, whether wake-ups can be trusted).
#include "zookeeper_store_impl.hpp"

#include <zookeeper/zookeeper.h>

#include <string>
#include <utility>

namespace baton {

void zookeeper_store::impl::arm_watch() {
  if (!watching || shell.closed() || !link || !session_up) return;
  if (arming) {
    rearm = true;
    return;
  }
  arming = true;
  const auto gen = link_gen;
  link->exists_watch(paths.lease, [this, gen](int rc, node_seen seen) {
    if (gen != link_gen || shell.closed()) return;
    arming = false;
    if (rc != ZOK && rc != ZNONODE) {
      const auto e = note_failure(zoo_failure(rc, "watch " + paths.lease));
      shell.set_wakeups(false, e.message());
      return;
    }
    note_lease(seen, mono_clock::now());
    const bool relisten = ever_armed && !watch_armed;
    watch_armed = true;
    ever_armed = true;
    // The listener may close or destroy this store from any event: after
    // each, nothing of it is touched unless it is still there and open.
    const auto alive = shell.guard();
    if (!observe(seen) || alive.expired() || shell.closed()) return;
    shell.set_wakeups(true, "");
    if (alive.expired() || shell.closed()) return;
    if (relisten) shell.emit(store_events::released{});
    if (alive.expired() || shell.closed()) return;
    if (std::exchange(rearm, false)) arm_watch();
  });
}

// The watch fired (it is one-shot): what happened is decided when it is
// armed again, by then this store's own release has completed too.
void zookeeper_store::impl::node_event(int type, const std::string& path) {
  if (path == paths.candidates) {
    // A candidate came or went (the watch is one-shot): the next acquire
    // reads the registry again.
    registry_stale = true;
    return;
  }
  if (path == paths.record) {
    // The record changed: the next acquire reads it (and watches it) again.
    record_stale = true;
    return;
  }
  lease_gone = false;
  if (type == ZOO_DELETED_EVENT && announce_deletion()) return;
  if (type == ZOO_DELETED_EVENT) deleted_event = true;
  if (type == ZOO_CREATED_EVENT) created_event = true;
  arm_watch();
}

// The node this store watched was deleted, and not by this store: a
// crashed holder's session expired, or a holder released. That is
// announced at once rather than once the watch is armed again: the watch's
// request goes out ahead of the acquire the announcement starts, in the
// same round trip, and what it finds (a new term) is told as before. Not
// while this store holds a term or deletes its own node (its own release
// is not announced to it: the watch armed again decides), nor with
// lease.failsafe peers. False: not announced, the watch decides.
bool zookeeper_store::impl::announce_deletion() {
  if (!baseline || watched_czxid == 0 || held.token != 0 || own_deletes > 0 || suppress_release ||
      failsafe_on())
    return false;
  watched_czxid = 0;
  lease_gone = true;
  const auto alive = shell.guard();
  arm_watch();
  if (alive.expired() || shell.closed()) return true;
  shell.emit(store_events::released{});
  return true;
}

// Announcements from what the watch found: the node it watched gone (a
// release, unless it was this store's own), a node of a new term there.
// A term can come and go between a creation event and the watch armed
// again: the node is absent then, and that is a release too.
// False when the listener closed or destroyed the store meanwhile.
bool zookeeper_store::impl::observe(const node_seen& seen) {
  const auto alive = shell.guard();
  const auto before = watched_czxid;
  watched_czxid = seen.exists ? seen.czxid : 0;
  const bool deleted = std::exchange(deleted_event, false);
  const bool came_and_went = std::exchange(created_event, false) && !seen.exists;
  if (!baseline) {
    baseline = true;
    return true;
  }
  if ((before != 0 && before != watched_czxid) || (deleted && before == 0) || came_and_went) {
    if (std::exchange(suppress_release, false)) {
      // Our own release: not reported to us.
    } else {
      shell.emit(store_events::released{});
      if (alive.expired() || shell.closed()) return false;
    }
  }
  if (watched_czxid != 0 && watched_czxid != before) {
    const auto gen = link_gen;
    const auto czxid = watched_czxid;
    link->get(paths.lease, [this, gen, czxid](int rc, node_seen node) {
      if (gen != link_gen || rc != ZOK || node.czxid != czxid) return;
      if (const auto v = decode_lease(node.data)) {
        shell.emit(store_events::acquired{v->node_id, v->token});
      }
    });
  }
  return true;
}

wakeup_state zookeeper_store::impl::current_wakeups() const {
  if (!watching) return wakeup_state::off;
  if (watch_armed && link && session_up) return wakeup_state::subscribed;
  return ever_armed ? wakeup_state::disconnected : wakeup_state::connecting;
}

void zookeeper_store::watch(event_listener listener) {
  auto& d = *impl_;
  if (!d.shell.set_listener(std::move(listener))) return;
  if (d.watching) return;
  d.watching = true;
  d.later([&d] {
    if (d.shell.closed()) return;
    d.ensure_link();
    d.arm_watch();
  });
}

}  // namespace baton
