// Names of the Redis keys of one election. Every key carries the `{election}`
// hash tag so that a Redis Cluster keeps all of an election's keys in one slot,
// which the Lua scripts need (they touch several keys atomically).
#pragma once

#include <string>
#include <string_view>

#include "store/nonce.hpp"

namespace baton {

/// The lease itself: a string `<node_id>:<nonce>` with a PX expiry; or,
/// after a switchover's hand-over, for the window, a reservation
/// `(reserved) <to node> <by node>`, which no lease value can equal (a node
/// id holds neither parentheses nor spaces).
inline std::string lease_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:lease";
}

/// What this process writes into the lease key: `<node_id>:<nonce>`, the
/// nonce drawn once per process, so that a store made again in the same
/// process still recognises the lease it holds, and a restarted daemon does
/// not.
inline std::string process_lease_value(std::string_view node_id) {
  return std::string(node_id) + ":" + store_detail::process_nonce();
}

/// The fencing counter: incremented by every successful acquire.
inline std::string token_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:token";
}

/// The hold-back fence: while it exists, every acquire answers "busy". Set
/// for one ttl when the store looks like it lost its data (the token counter
/// is missing, or Redis's run_id changed), so that an old leader whose lease
/// vanished with the data has stopped before anyone else starts.
inline std::string fence_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:fence";
}

/// The holder record: "<expiry in the server's ms> <lease value>", without a
/// TTL, written with every grant and renewal and deleted with a release. When
/// the lease key vanishes before that expiry (a DEL, an eviction), acquires
/// hold back until it, since the holder may still be working.
inline std::string holder_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:holder";
}

/// The epoch (Sentinel, Cluster): the run_id of the server that last wrote
/// the record. A different one means a failover or a restart from files.
inline std::string epoch_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:epoch";
}

/// Redlock, per master: the largest token a term wrote there (a write-back
/// or a take). A reset lifts the counter to the server's clock but never
/// this, so a leader taking a free master back can tell a lifted counter
/// from a newer term.
inline std::string term_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:term";
}

/// Redlock, per master: the lease value this master granted whose token is
/// not written back yet (PX ttl). While it names the holder, the counter is
/// the term before's token, not the holder's, so a refusal says the token
/// is unknown rather than name that older one.
inline std::string granted_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:granted";
}

/// redis.replica_ack all: the most replicas the election's master has had
/// connected (a number, raised by every grant and renewal, one fewer after a
/// failover). Only an operator lowers it, by deleting it or setting it, after
/// removing a replica for good.
inline std::string replicas_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:replicas";
}

/// Sentinel with redis.replica_ack all: "<master_replid> <server ms>", the
/// replication ID of the master that wrote the last grant or renewal and
/// when, on its clock. A promoted replica whose previous replication ID
/// (master_replid2) is that one, and that has run since before that write,
/// followed the writer live: it has every acknowledged write, so its
/// promotion needs no hold-back (see lua_parts.hpp, BATON_LUA_SWITCH).
inline std::string acked_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:acked";
}

/// The candidates' registry: one line "<node id> <priority> <since ms>
/// <until ms> <nonce>[ <cool-down end ms>[ <peer address> <promise token>
/// <promise leader> <promise end ms>]]" per candidate (server clock; the nonce of the
/// process's lease value, so that a restart starts `since` again),
/// rewritten by every acquire attempt and every renewal, pruned of lapsed
/// lines and bounded (see lua_parts.hpp, BATON_LUA_REGISTER). A plain
/// string, so that it needs no command beyond the minimal ACL's GET and SET.
inline std::string candidates_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:candidates";
}

/// The front runners of a large election: lines "<node> <until ms>", at
/// most a few, each a standby that tries the moment the lease is free; the
/// others try one step later (see lua_parts.hpp, BATON_LUA_FRONT_RUNNERS). A
/// plain string with an expiry, as the candidates key. Absent while fewer
/// candidates listen than it takes.
inline std::string front_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:front";
}

/// lease.failsafe peers: the record of the last term made with the mode,
/// without a TTL: "<token> <list number> <leader's lease value> <leader's
/// peer address>" and a line "<node> <peer address>" per candidate the
/// leader listed. Written by every grant, renewal and resume of such a
/// term, deleted by its release; while it holds a term, nobody is granted
/// the free lease before clearing that term with the leader or a listed
/// peer (docs/safety.md, F6).
inline std::string failsafe_key(std::string_view election) {
  return "baton:{" + std::string(election) + "}:failsafe";
}

/// Pub/sub channel on which a release is announced to standbys.
inline std::string events_channel(std::string_view election) {
  return "baton:{" + std::string(election) + "}:events";
}

/// The channel a large election's back runners listen on instead (see
/// front_key): nothing is announced there, so a release wakes only the front
/// runners and the holder; the acquire script counts its listeners with the
/// events channel's.
inline std::string back_runners_channel(std::string_view election) {
  return events_channel(election) + ":back";
}

/// Every key and the channel of one election, named once for the stores of
/// the Redis kinds (one server, Sentinel, Cluster, each Redlock master).
struct election_keys {
  explicit election_keys(std::string_view election)
      : lease(lease_key(election)),
        token(token_key(election)),
        fence(fence_key(election)),
        holder(holder_key(election)),
        epoch(epoch_key(election)),
        term(term_key(election)),
        granted(granted_key(election)),
        replicas(replicas_key(election)),
        acked(acked_key(election)),
        candidates(candidates_key(election)),
        front(front_key(election)),
        failsafe(failsafe_key(election)),
        channel(events_channel(election)),
        back_channel(back_runners_channel(election)) {}

  std::string lease;
  std::string token;
  std::string fence;
  std::string holder;
  std::string epoch;
  std::string term;
  std::string granted;
  std::string replicas;
  std::string acked;
  std::string candidates;
  std::string front;
  std::string failsafe;
  std::string channel;
  std::string back_channel;
};

}  // namespace baton
