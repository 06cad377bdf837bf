// The SQL fragments the lease statements are put together from (lease_sql.cpp,
// lease_sql_acquire.cpp, lease_sql_term.cpp, lease_sql_failsafe.cpp,
// lease_sql_registry.cpp): the server's facts read once per statement, a
// row's epoch and reset mark, the clock in micro- and milliseconds, a
// registration's cool-down and a switchover's reservation. Include only from
// those files: private to them, as the one file's anonymous namespace was
// (inline, so that a file that uses only some of them compiles without a
// warning, and two of them can share a unity build's unit).
#pragma once

#include <string>
#include <string_view>

namespace baton::postgres_detail {
namespace {

// The server's identity in two parts. The cluster: its system identifier and
// the timeline of the current WAL position; a restore into a new cluster
// changes the first, a promoted replica or a point-in-time recovery the
// second. And the postmaster's start time, which any restart changes, a
// restart with every committed write intact included. All are readable by
// any role. The row keeps "cluster/start" as it was last written.
constexpr std::string_view cluster_expression =
    "(SELECT system_identifier FROM pg_control_system())::text || '/' || "
    "substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)";
constexpr std::string_view start_expression =
    "(extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint::text";

// The parts of a row's epoch: "sysid/timeline/start", then "/R" when a reset
// lifted the row's token to R, until the next term. The mark tells every
// candidate, not only the one that found the reset, that one happened ('/'
// and '//' for an empty epoch, which matches no server).
constexpr std::string_view row_cluster =
    "split_part(l.server_epoch, '/', 1) || '/' || split_part(l.server_epoch, '/', 2)";
constexpr std::string_view row_epoch =
    "split_part(l.server_epoch, '/', 1) || '/' || split_part(l.server_epoch, '/', 2) || '/' || "
    "split_part(l.server_epoch, '/', 3)";
constexpr std::string_view row_reset_mark =
    "CASE WHEN split_part(l.server_epoch, '/', 4) = '' THEN '' ELSE '/' || "
    "split_part(l.server_epoch, '/', 4) END";

// Microseconds since 1970 on the server's clock: the floor of tokens issued
// after a reset, as the Redis stores do with TIME.
constexpr std::string_view clock_micros = "(extract(epoch FROM s.now) * 1000000)::bigint";

// A registration's cool-down, after its session (lease_sql.hpp): the mark
// written, and its end read back (0 when the row has none, or one written
// by hand in another form: a preference, never an error).
constexpr std::string_view cooling_mark = " cooling_until_ms=";
constexpr std::string_view clock_millis = "(extract(epoch FROM s.now) * 1000)::bigint";
inline std::string cooling_until(std::string_view r) {
  return "coalesce(substring(" + std::string(r) + ".session from '" + std::string(cooling_mark) +
         "([0-9]{1,15})$')::bigint, 0)";
}
// The session a registration was written by, without its cool-down.
inline std::string session_of(std::string_view r) {
  return "split_part(" + std::string(r) + ".session, ' ', 1)";
}

// A switchover's reservation lives in the row itself, so that it needs no new
// column: holder reads "reserved for <target> by <the node that handed over>"
// and expires_at is the window's end. A node id has no space (the config
// allows A-Z a-z 0-9 . _ @ -, and postgres_store refuses a space), so no real
// holder reads like that. A daemon from before switchovers sees a lease held
// until the window's end by a node that never renews it: it waits, as the
// reservation wants, and takes the lease once the window is over.
constexpr std::string_view reservation_prefix = "reserved for ";

// Whether row `r`'s holder is a reservation, its target and the node that
// handed over (each meaningful only while r.expires_at is ahead).
inline std::string reserved(std::string_view r) {
  return "left(" + std::string(r) + ".holder, " + std::to_string(reservation_prefix.size()) +
         ") = '" + std::string(reservation_prefix) + "'";
}
inline std::string reserved_target(std::string_view r) {
  return "split_part(" + std::string(r) + ".holder, ' ', 3)";
}
inline std::string reserved_by(std::string_view r) {
  return "split_part(" + std::string(r) + ".holder, ' ', 5)";
}

// The server's clock, identity and durable WAL position, read once per
// statement. The flush position only grows on one cluster and timeline, a
// crash and its recovery included: only data put back moves it below a
// position seen before.
inline std::string server_facts() {
  return "s AS (SELECT x.now, x.cluster, x.cluster || '/' || x.started AS epoch, x.lsn FROM\n"
         "  (SELECT clock_timestamp() AS now, " + std::string(cluster_expression) + " AS cluster,\n"
         "          " + std::string(start_expression) + " AS started,\n"
         "          pg_current_wal_flush_lsn() AS lsn) x)";
}

}  // namespace
}  // namespace baton::postgres_detail
