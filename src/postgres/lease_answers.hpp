// Rows of the lease statements (lease_sql.hpp) into the port's answers. Pure,
// so every malformed row has a unit test: a row of the wrong shape is an
// unexpected_reply with a detail that says what was wrong, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "baton/lease_store.hpp"

namespace baton::postgres_detail {

using result_rows = std::vector<std::vector<std::optional<std::string>>>;

struct parsed_acquire {
  store_error error;  ///< set when the rows had an unexpected shape
  acquire_answer answer;
  bool reset = false;    ///< this statement found the reset (and set the hold-back)
  bool missing = false;  ///< ... because the election's row was missing
  /// This statement found a restart with the data intact (only the
  /// postmaster's start time changed): every term was kept.
  bool restarted = false;
  /// Why data went back, when `reset` and not `missing`.
  std::string lost_why;
  /// The server epoch the row is now written under: "sysid/timeline/start",
  /// then "/R" when a reset lifted its token to R, until the next term
  /// (lease_sql_parts.hpp).
  std::string epoch;
  /// The server's WAL flush position ("0/1500790") at the statement.
  std::string wal_position;
  /// The server's time the statement read, microseconds since 1970 (this
  /// and the next are absent from a row of the older shape).
  std::optional<std::int64_t> server_time_us;
  /// The lease was free and this statement left it: it lapsed unreleased and
  /// the server's clock was beyond what this node expected (clock_watch.hpp).
  bool left_for_the_clock = false;
  /// lease.failsafe peers: the caller only registered (it may not win
  /// yet); the answer is then held_back with why set.
  bool abstained = false;
};

/// The "sysid/timeline" part of an epoch ("" for "").
std::string epoch_cluster(const std::string& epoch);
/// The "sysid/timeline/start" part of an epoch: the server it names.
std::string epoch_server(const std::string& epoch);
/// The token of the last reset an epoch records ("" = none).
std::string epoch_reset_mark(const std::string& epoch);

/// An acquire's row; with lease.failsafe peers its last two columns are the
/// failsafe hold (failsafe_sql.hpp's jsonb, NULL = none) and whether the
/// caller only registered.
parsed_acquire parse_acquire_rows(const result_rows& rows);

/// A list of lease.failsafe peers as the statements take it: a JSON array
/// of {"node", "address"}.
std::string failsafe_peers_json(const std::vector<failsafe_peer>& peers);

/// A failsafe hold as the acquire answers it ({"leader", "token",
/// "address", "peers": [{"node", "address"}]}); nullopt when malformed.
std::optional<failsafe_hold_info> parse_failsafe_hold(const std::string& json);

struct parsed_candidates {
  store_error error;  ///< set when a row had an unexpected shape (list empty)
  std::vector<candidate_info> list;
};

/// The registry's rows (lease_sql::candidates: node, priority, live_for ms,
/// ms since the last attempt, ms left of a cool-down, card, and with
/// lease.failsafe peers the peer address).
parsed_candidates parse_candidate_rows(const result_rows& rows);

struct parsed_look {
  store_error error;  ///< set for an unexpected shape (holder empty)
  lease_holder holder;
};

/// lease_sql::look's rows: none (nobody holds the lease), or one of holder
/// and token.
parsed_look parse_look_rows(const result_rows& rows);

}  // namespace baton::postgres_detail
