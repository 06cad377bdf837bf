// Where a key lives in a Redis Cluster, as pure functions: the hash slot of a
// key, the master that serves a slot according to a CLUSTER SHARDS (Redis 7)
// or CLUSTER SLOTS reply, and what a MOVED/ASK/TRYAGAIN/... error reply asks
// of the client. No hiredis, asio or I/O here, so a cluster store's routing
// decisions are testable without a cluster. A reply of unexpected shape is an
// error code with a detail naming the cause, never a crash or a guess.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/redis_url.hpp"
#include "redis_reply.hpp"

namespace baton::redis_detail {

/// The number of hash slots of every Redis Cluster.
inline constexpr int cluster_slot_count = 16384;

/// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0, no reflection),
/// the checksum Redis Cluster hashes keys with. crc16("123456789") == 0x31C3.
std::uint16_t crc16(std::string_view data);

/// The hash slot of `key` (0..16383): the CRC16 of the key, or of the part
/// between its first '{' and the next '}' when that part is non-empty (a hash
/// tag, which keeps related keys in one slot), modulo 16384.
std::uint16_t key_slot(std::string_view key);

/// One node of a shard, as CLUSTER SHARDS describes it.
struct cluster_node {
  std::string id;        ///< 40 hex digits
  std::string ip;        ///< "" when unknown
  std::string endpoint;  ///< the preferred endpoint; "?" or "" = unknown
  std::string hostname;  ///< "" when none is announced
  int port = 0;          ///< plain TCP port; 0 = none announced (TLS-only node)
  int tls_port = 0;      ///< TLS port; 0 = none announced
  std::string role;      ///< "master" or "replica"
  std::string health;    ///< "online", "fail"/"failed", "loading"; "" = unknown (CLUSTER SLOTS)
};

/// A master with its replicas and the slots they serve.
struct cluster_shard {
  /// Inclusive [start, end] ranges, each 0 <= start <= end <= 16383.
  std::vector<std::pair<int, int>> slot_ranges;
  std::vector<cluster_node> nodes;
};

/// Where to send commands for a slot.
struct cluster_target {
  /// Host name or IP address; "" = the node that gave the slot map (its
  /// endpoint is unknown to the cluster, e.g. behind a load balancer).
  std::string host;
  unsigned short port = 0;
  /// The master's node id ("" when the reply named none: pre-4.0 CLUSTER SLOTS).
  std::string id;
};

/// The shards of a CLUSTER SHARDS reply (RESP2: flat key/value arrays).
/// Unknown keys are ignored; missing, mistyped or out-of-range fields are
/// unexpected_reply. An error reply (e.g. "ERR unknown subcommand" before
/// Redis 7, or a cluster-disabled server) comes back classified, with its text.
parsed_reply<std::vector<cluster_shard>> parse_cluster_shards(const redis_reply& reply);

/// The slot map of a CLUSTER SLOTS reply (`[start, end, [endpoint, port, id,
/// {metadata}], replicas...]` per range) in the same shape: one shard per
/// range, the first node its master. A nil endpoint (unknown) becomes "".
/// Health is unknown there (""), and the port is already the one for the
/// connection's kind (TLS or not), so it is stored as `port`.
parsed_reply<std::vector<cluster_shard>> parse_cluster_slots(const redis_reply& reply);

/// The master serving `slot` in a parsed slot map. Its host is the endpoint
/// unless that is "?" or empty, then the ip, then "" (the node asked); its
/// port is tls_port when `tls` and announced, else port. Errors: no_master
/// when no shard serves the slot, its shard lists no master or the master is
/// failed (health "fail"); unexpected_reply when two shards claim the slot or
/// the master has no usable port.
parsed_reply<cluster_target> master_for_slot(const std::vector<cluster_shard>& shards,
                                             std::uint16_t slot, bool tls);

/// parse_cluster_shards, then master_for_slot.
parsed_reply<cluster_target> master_for_slot(const redis_reply& shards_reply, std::uint16_t slot,
                                             bool tls);

/// parse_cluster_slots, then master_for_slot. No `tls` flag: the server
/// already reports the port for the kind of connection that asked.
parsed_reply<cluster_target> master_for_slot_from_slots(const redis_reply& slots_reply,
                                                        std::uint16_t slot);

/// A "MOVED <slot> <host>:<port>" or "ASK <slot> <host>:<port>" error reply.
struct cluster_redirect {
  /// moved: the slot lives elsewhere for good (refresh the slot map);
  /// ask: this one command goes there, preceded by ASKING.
  enum class kind { moved, ask } kind = kind::moved;
  std::uint16_t slot = 0;
  /// "" = the same host as the node that answered (unknown endpoint).
  std::string host;
  int port = 0;
};

/// The redirect in an error reply's text, or nullopt for any other or
/// malformed text. The address is split at its last ':' (IPv6 addresses come
/// unbracketed: "MOVED 1 ::1:6381"; a bracketed "[::1]" is unwrapped).
std::optional<cluster_redirect> parse_redirect(std::string_view error_text);

/// "TRYAGAIN ...": a multi-key command hit a slot being migrated; retry soon.
bool is_tryagain(std::string_view error_text);

/// "CLUSTERDOWN ...": the cluster cannot serve the slot now (unassigned slot,
/// lost majority); retry after a pause, with a fresh slot map.
bool is_clusterdown(std::string_view error_text);

/// "READONLY", "NOREPLICAS", "MASTERDOWN" or "LOADING ...": the node we reach
/// is not (or not yet, or no longer) a usable master, typically during a
/// failover; find the slot's master again before retrying.
bool needs_new_master(std::string_view error_text);

/// `via` (the endpoint that answered or gave the slot map) moved to `host`
/// and `port`: a TCP endpoint with via's TLS settings and credentials. An
/// empty `host` keeps via's host (for a Unix socket: 127.0.0.1, the default).
redis_endpoint endpoint_for(const redis_endpoint& via, std::string_view host, unsigned short port);

}  // namespace baton::redis_detail
