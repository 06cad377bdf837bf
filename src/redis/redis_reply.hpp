// A Redis reply as a plain value, and the pure functions that turn the replies
// of baton's Lua scripts into lease store answers. No hiredis or asio here: the
// connection converts hiredis replies into redis_reply, so everything below is
// testable without a server. A reply of unexpected shape is an error code with
// a detail string, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <system_error>
#include <vector>

#include "baton/lease_store.hpp"

namespace baton {

/// One RESP2 reply (a tree for arrays).
struct redis_reply {
  enum class type { nil, string, status, error, integer, array };

  type kind = type::nil;
  /// Payload of string, status and error replies.
  std::string str;
  /// Payload of integer replies.
  long long integer = 0;
  /// Elements of array replies.
  std::vector<redis_reply> elements;

  static redis_reply nil() { return {}; }
  static redis_reply string(std::string s) { return {type::string, std::move(s), 0, {}}; }
  static redis_reply status(std::string s) { return {type::status, std::move(s), 0, {}}; }
  static redis_reply error(std::string s) { return {type::error, std::move(s), 0, {}}; }
  static redis_reply integer_reply(long long i) { return {type::integer, {}, i, {}}; }
  static redis_reply array(std::vector<redis_reply> e) {
    return {type::array, {}, 0, std::move(e)};
  }
};

/// A short description of a reply's shape for error details, e.g. `integer 5`,
/// `array[3]`, `error "ERR x"` (strings are cut to 64 bytes).
std::string describe_reply(const redis_reply& reply);

/// `s` in double quotes for an error line, cut after 64 bytes ("..." then):
/// a server's text shown, never a page of it.
std::string quoted_excerpt(std::string_view s);

/// The result of parsing a reply: `ec` is empty on success (then `value` is
/// set); otherwise `detail` says what was wrong.
template <typename T>
struct parsed_reply {
  std::error_code ec;
  std::string detail;
  T value{};
};

/// Maps an error reply's text to a code: NOAUTH/WRONGPASS -> auth_failed,
/// an ACL refusal (NOPERM, or its wording inside a script) ->
/// permission_denied, anything else -> server_error.
std::error_code classify_error_reply(std::string_view message);

/// True for the "NOSCRIPT ..." error, after which EVALSHA is retried as EVAL.
bool is_noscript_error(const redis_reply& reply);

/// What the acquire script puts where a holder's value goes while the fence
/// holds acquisitions back and no lease key exists (a node id can never
/// contain parentheses or spaces). It never leaves this component: the
/// answer's holder is then empty.
inline constexpr std::string_view fenced_without_holder = "(store reset)";

/// What the acquire script answered: the port's answer, and whether this
/// very call found the token counter missing and set the fence (a reset).
struct acquire_script_reply {
  acquire_answer answer;
  bool found_reset = false;
  /// With found_reset: the counter was missing (a first start, or lost
  /// data), rather than another server having written the record (a
  /// failover).
  bool record_missing = false;
  /// With found_reset: what the script found, for the log.
  std::string reset_why;
  /// With a replica requirement (redis.replica_ack): how many replicas must
  /// acknowledge the grant (0 = no requirement was given).
  int replicas_needed = 0;
  /// With a requirement: a grant the script made, on a lease that was free,
  /// which the caller announces once the replicas acknowledged it.
  bool announce = false;
  /// With a requirement: the master had only this many replicas connected,
  /// fewer than replicas_needed, so the script granted nothing.
  std::optional<int> replicas_short;
};

/// The acquire script answers `{1, token}` (or with a replica requirement
/// `{1, token, needed, announce}`), `{0, value, pttl_ms, token-or-""}`
/// (held), or the same with a fifth element "fence", "reset" or "failover"
/// while the hold-back fence is up, or "vanished" while the holder record
/// outlives a lease key that disappeared early (held_back), or `{0, "", 0,
/// token, "replicas", connected, needed}` when too few replicas are connected
/// to grant (replicas_short; see scripts.hpp), or `{0, by node, window ms,
/// token, "reserved", to node}` while a hand-over reserves the lease for
/// another node (held, with reserved_for). A held answer may carry the µs
/// until the lease is free, the listening count (contenders) and "front" or
/// "back" (back_runner). A refusal may end with
/// `"outranked", n` (n >= 0): the answer's outranked_by. With lease.failsafe
/// peers, `{0, value, -1, counter, "failsafe", token, address, n, n times node
/// and address}` is a failsafe hold (held_back, with failsafe_hold) and
/// `{0, "", -1, counter, "abstained"}` a register-only attempt (held_back,
/// with why).
parsed_reply<acquire_script_reply> parse_acquire_reply(const redis_reply& reply);

/// What a replicated store's switch script found on a new server (see
/// scripts.hpp, switch_script), and so what the store reports.
struct server_switch {
  enum class seen {
    /// The record named this server already: another candidate's check (or
    /// a write) came first. A reset only while a fence is up.
    same,
    /// A promoted replica that followed the record's writer live, with
    /// every acknowledged write: no hold-back.
    promoted,
    /// Anything else (a failover without that proof, a restart, a record
    /// without an epoch, a counter gone): fenced for one ttl.
    fenced,
  };
  seen what = seen::fenced;
  /// The script's word for it ("same", "promoted", "failover", ...).
  std::string verdict;
  /// The fence's PTTL after the script (-1 = without expiry, -2 = none).
  long long fence_ms = -2;

  /// Whether every acquisition is held back now: what watchers hear as a
  /// reset.
  bool held_back() const { return what == seen::fenced || fence_ms > 0 || fence_ms == -1; }
};
/// The switch script answers `{verdict, fence PTTL}`.
parsed_reply<server_switch> parse_switch_reply(const redis_reply& reply);

/// One live registration of the candidates' registry.
struct registered_candidate {
  candidate_info info;
  /// How long until it lapses unless renewed (server's clock).
  milliseconds left{0};
  /// The registering process's nonce: another one under the same node id
  /// is a restarted process.
  std::string nonce;
};
/// The candidates script answers a flat array: node id, priority, ms
/// registered without a gap, ms until it lapses, nonce, ms left of its
/// cool-down, peer address ("" = none), for each candidate. A registration lives two of `ttl` from its
/// node's last attempt, which gives last_attempt_ago.
parsed_reply<std::vector<registered_candidate>> parse_candidates_reply(const redis_reply& reply,
                                                                      milliseconds ttl);

/// The create-record script answers 1 (created) or 0 (it existed).
parsed_reply<record_answer> parse_record_reply(const redis_reply& reply);

/// The value of `name:` at the start of a line of an INFO reply ("" when
/// absent).
std::string info_field(std::string_view info, std::string_view name);

/// The `run_id:` field of an `INFO server` reply (40 hex digits); "" when
/// absent or malformed.
std::string run_id_from_info(std::string_view info);

/// A ROLE reply: the replica count when the server is a master ({"master",
/// offset, {{ip, port, offset}...}}), else the role's name ("replica" for
/// "slave", "sentinel", or a description of an unexpected reply).
std::variant<int, std::string> master_role(const redis_reply& reply);

/// The renew script answers 1 (renewed) or 0 (lost).
parsed_reply<renew_answer> parse_renew_reply(const redis_reply& reply);

/// A renewal with a replica requirement (redis.replica_ack).
struct required_renewal {
  renew_answer answer = renew_answer::lost;
  /// How many replicas must acknowledge it (when renewed or short).
  int needed = 0;
  /// The master had only this many replicas connected: not extended.
  std::optional<int> short_of;
};
/// The renew script with a replica requirement answers `{1 or 0, 0, needed}`
/// or `{2, connected, needed}` (too few replicas; nothing extended).
parsed_reply<required_renewal> parse_required_renew_reply(const redis_reply& reply);


/// The release script answers 1 (deleted: released) or 0 (not ours; nothing
/// deleted).
parsed_reply<release_answer> parse_release_reply(const redis_reply& reply);

/// The node id in a lease value `<node_id>:<nonce>`: everything before the
/// last ':'; the whole value when it has no ':'.
std::string holder_from_value(std::string_view value);

/// The standby script's answer {lease value, token counter}: who holds the
/// lease ("" for none, and for a switchover's reservation) and its token.
parsed_reply<lease_holder> parse_look_reply(const redis_reply& reply);

/// A switchover's reservation as the lease key holds it for the window
/// (`(reserved) <to node> <by node>`, written by the release script).
struct lease_reservation {
  std::string to;  ///< the only node that may acquire meanwhile
  std::string by;  ///< the node that handed over
};
/// The reservation `value` holds; nullopt for a lease value (or anything else).
std::optional<lease_reservation> reservation_in(std::string_view value);

/// True when `message`, as published by the release script
/// (`released <lease_value> <token>`), announces a release by a lease value
/// other than `own_value`; our own releases and unknown messages are ignored.
bool is_foreign_release(std::string_view message, std::string_view own_value);

/// A new term announced by the acquire script (`acquired <lease_value> <token>`).
struct announced_term {
  std::string holder;  ///< node id (the lease value without its nonce)
  std::uint64_t token = 0;
};
/// The announcement in `message`, or nullopt for other or malformed messages.
std::optional<announced_term> parse_acquired_announcement(std::string_view message);

}  // namespace baton
