// etcd's JSON gateway (/v3/...) as baton uses it, without I/O: the request
// bodies, and the answers read into plain structs. int64 fields travel as
// JSON strings (a number is accepted too), keys and values as base64, and a
// field left out is zero (the gateway omits zeros and false).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace baton::etcd_detail {

/// Every answer's header.
struct header {
  std::string cluster_id;
  std::int64_t revision = 0;
  /// The raft term of the member that answered (0 when not said): a leader
  /// change between two answers shows as a higher term.
  std::int64_t raft_term = 0;
};

struct key_value {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t version = 0;
  std::int64_t lease = 0;
};

/// One comparison of a txn: `target` ("CREATE", "MOD", "VALUE") of `key`
/// `result` ("EQUAL", "LESS", ...) `revision` (or `value` for VALUE: etcd
/// compares bytes, and a VALUE comparison of a missing key fails).
struct compare {
  std::string key;
  std::string target;
  std::int64_t revision = 0;
  std::string value{};
  std::string result = "EQUAL";
};

/// One operation of a txn's success branch.
struct txn_op {
  enum class kind { put, remove, range } what = kind::put;
  std::string key;
  std::string value;       // put
  std::int64_t lease = 0;  // put; 0 = none
  std::string range_end;   // remove, range: "" = the key alone
  /// range: only keys modified at or above this revision (0 = all). etcd
  /// still reads the others; they are left out of the answer.
  std::int64_t min_mod_revision = 0;
};

// --- requests ----------------------------------------------------------------

std::string range_request(std::string_view key, std::string_view range_end);
std::string grant_request(std::int64_t ttl_seconds);
std::string lease_id_request(std::int64_t lease);  // keepalive, revoke
std::string time_to_live_request(std::int64_t lease);
std::string txn_request(const std::vector<compare>& all_of, const std::vector<txn_op>& then);
/// A txn with a failure branch too: `otherwise` runs when a comparison
/// fails (read_txn_range then reads that branch's operations).
std::string txn_request(const std::vector<compare>& all_of, const std::vector<txn_op>& then,
                        const std::vector<txn_op>& otherwise);
/// A watch of [key, range_end) from `start_revision`, with the previous
/// value of deleted keys (prev_kv), so that a store knows its own release.
std::string watch_request(std::string_view key, std::string_view range_end,
                          std::int64_t start_revision);
/// The end of the range of every key that starts with `prefix` (its last
/// byte plus one).
std::string prefix_end(std::string_view prefix);

// --- answers -----------------------------------------------------------------

/// An int64 field given as a string or a number; 0 when absent; nullopt
/// when it is neither or not a whole number.
std::optional<std::int64_t> int64_field(const nlohmann::json& object, const char* name);

/// Reads answers; each throws std::runtime_error naming what was wrong,
/// which the store turns into etcd_errc::unexpected_reply.
header read_header(const nlohmann::json& answer);
key_value read_kv(const nlohmann::json& kv);
std::vector<key_value> read_range(const nlohmann::json& range_answer);

struct grant_answer {
  header hdr;
  std::int64_t id = 0;
  std::int64_t ttl_seconds = 0;
};
grant_answer read_grant(const nlohmann::json& answer);

/// A keepalive's answer ({"result": {...}}): the lease's new TTL in seconds;
/// 0 when the lease is gone.
struct keepalive_answer {
  header hdr;
  std::int64_t ttl_seconds = 0;
};
keepalive_answer read_keepalive(const nlohmann::json& answer);

/// time-to-live: the seconds left (truncated toward zero, so 0 is anything
/// in (-1 s, 1 s); -1 = gone) and the TTL the lease was granted with (0 when
/// gone).
struct ttl_answer {
  header hdr;
  std::int64_t ttl_seconds = -1;
  std::int64_t granted_seconds = 0;
};
ttl_answer read_time_to_live(const nlohmann::json& answer);

struct txn_answer {
  header hdr;
  bool succeeded = false;
};
txn_answer read_txn(const nlohmann::json& answer);
/// The keys found by the range that was operation `at` (from 0) of a txn's
/// branch that ran.
std::vector<key_value> read_txn_range(const nlohmann::json& answer, std::size_t at);

/// One message of a watch stream.
struct watch_event {
  bool deleted = false;  ///< DELETE (a delete or an expiry); else PUT
  key_value kv;
  std::optional<key_value> prev;  ///< the value before a DELETE
};
struct watch_message {
  header hdr;
  bool created = false;
  bool canceled = false;
  std::int64_t compact_revision = 0;
  std::string cancel_reason;
  std::vector<watch_event> events;
};
/// One line of the stream ({"result": {...}} or {"error": {...}}); throws
/// std::runtime_error for an error message (its text) or a bad one.
watch_message read_watch_message(std::string_view line);

}  // namespace baton::etcd_detail
