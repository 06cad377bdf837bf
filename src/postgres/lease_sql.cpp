// The statements themselves. Identifiers are validated (postgres_table_problem)
// and double-quoted; every value travels as a parameter.
#include "lease_sql.hpp"


namespace baton::postgres_detail {
namespace {

std::string quote(std::string_view name) {
  const auto dot = name.find('.');
  if (dot == std::string_view::npos) return "\"" + std::string(name) + "\"";
  return "\"" + std::string(name.substr(0, dot)) + "\".\"" + std::string(name.substr(dot + 1)) +
         "\"";
}

// The server's identity: a restore or a promoted replica changes the timeline
// (and a restore from another cluster the system identifier), any restart the
// postmaster's start time. All three are readable by any role.
constexpr std::string_view epoch_expression =
    "(SELECT system_identifier FROM pg_control_system())::text || '/' || "
    "substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) || '/' || "
    "(extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint::text";

// Microseconds since 1970 on the server's clock: the floor of tokens issued
// after a reset, as the Redis stores do with TIME.
constexpr std::string_view clock_micros = "(extract(epoch FROM s.now) * 1000000)::bigint";

}  // namespace

lease_sql::lease_sql(std::string table)
    : table_(std::move(table)),
      sequence_(table_ + "_token"),
      quoted_table_(quote(table_)),
      quoted_sequence_(quote(sequence_)) {}

std::string lease_sql::ddl() const {
  return "CREATE TABLE IF NOT EXISTS " + quoted_table_ +
         " (\n"
         "  election text PRIMARY KEY,\n"
         "  holder text NOT NULL DEFAULT '',\n"
         "  holder_session text NOT NULL DEFAULT '',\n"
         "  token bigint NOT NULL DEFAULT 0,\n"
         "  acquired_at timestamptz,\n"
         "  expires_at timestamptz NOT NULL DEFAULT '-infinity',\n"
         "  held_back_until timestamptz NOT NULL DEFAULT '-infinity',\n"
         "  server_epoch text NOT NULL DEFAULT ''\n"
         ");\n"
         "COMMENT ON TABLE " + quoted_table_ +
         " IS 'baton leader-election leases: one row per election, never deleted; "
         "expires_at and held_back_until are in the server''s clock';\n"
         "CREATE SEQUENCE IF NOT EXISTS " + quoted_sequence_ + " AS bigint;\n";
}

std::string lease_sql::ddl_for_people() const {
  // A table outside the search path's default needs its schema, and the role
  // needs USAGE on it.
  const auto dot = table_.find('.');
  const std::string schema = dot == std::string::npos ? "" : "\"" + table_.substr(0, dot) + "\"";
  return "-- baton's lease table for the postgres store (postgres.table = " + table_ +
         ").\n-- Run as a role that may create tables, e.g. psql -f this-file; safe to run again.\n" +
         (schema.empty() ? "" : "CREATE SCHEMA IF NOT EXISTS " + schema + ";\n") + ddl() +
         "-- What the role baton connects as needs (replace baton with that role):\n" +
         (schema.empty() ? "" : "GRANT USAGE ON SCHEMA " + schema + " TO baton;\n") +
         "GRANT SELECT, INSERT, UPDATE ON " + quoted_table_ + " TO baton;\n" +
         "GRANT USAGE ON SEQUENCE " + quoted_sequence_ + " TO baton;\n";
}

std::string lease_sql::schema_exists() const {
  return "SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL";
}

std::string lease_sql::acquire() const {
  const std::string t = quoted_table_;
  const std::string ttl = "$4::bigint * interval '1 millisecond'";
  const std::string moved = "l.server_epoch <> s.epoch";
  return "WITH s AS (SELECT clock_timestamp() AS now, " + std::string(epoch_expression) +
         " AS epoch),\n"
         "created AS (\n"
         "  INSERT INTO " + t + " AS l (election, token, held_back_until, server_epoch)\n"
         "  SELECT $1, " + std::string(clock_micros) + ", s.now + " + ttl + ", s.epoch FROM s\n"
         "  ON CONFLICT (election) DO NOTHING\n"
         "  RETURNING l.token, l.held_back_until, l.server_epoch),\n"
         "changed AS (\n"
         "  UPDATE " + t + " AS l SET\n"
         "    holder = CASE WHEN " + moved + " THEN l.holder ELSE $2 END,\n"
         "    holder_session = CASE WHEN " + moved + " THEN l.holder_session ELSE $3 END,\n"
         "    token = CASE WHEN " + moved + " THEN greatest(l.token, " + std::string(clock_micros) +
         ")\n"
         "                 ELSE greatest(nextval('" + quoted_sequence_ + "'), l.token + 1) END,\n"
         "    acquired_at = CASE WHEN " + moved + " THEN l.acquired_at\n"
         "                       WHEN l.expires_at > s.now AND l.holder_session = $3 THEN "
         "l.acquired_at\n"
         "                       ELSE s.now END,\n"
         "    expires_at = CASE WHEN " + moved + " THEN l.expires_at ELSE s.now + " + ttl +
         " END,\n"
         "    held_back_until = CASE WHEN " + moved + " THEN greatest(l.held_back_until, s.now + " +
         ttl + ") ELSE l.held_back_until END,\n"
         "    server_epoch = s.epoch\n"
         "  FROM s\n"
         "  WHERE l.election = $1 AND (" + moved +
         " OR (l.held_back_until <= s.now AND (l.expires_at <= s.now OR\n"
         "       (l.holder = $2 AND l.holder_session = $3))))\n"
         "  RETURNING l.holder, l.token, l.held_back_until > s.now AS reset,\n"
         "            l.acquired_at = s.now AS new_term, l.expires_at, l.held_back_until, s.now,\n"
         "            l.server_epoch),\n"
         "answer AS (\n"
         "  SELECT CASE WHEN c.reset THEN 'held_back' ELSE 'acquired' END AS outcome, c.reset,\n"
         "         false AS missing, c.new_term AND NOT c.reset AS new_term,\n"
         "         CASE WHEN NOT c.reset OR c.expires_at > c.now THEN c.holder ELSE '' END AS "
         "holder,\n"
         "         c.token,\n"
         "         CASE WHEN c.reset THEN ceil(extract(epoch FROM greatest(c.held_back_until, "
         "c.expires_at) - c.now) * 1000)::bigint ELSE $4::bigint END AS remaining_ms,\n"
         "         c.server_epoch AS epoch\n"
         "  FROM changed c\n"
         "  UNION ALL\n"
         "  SELECT 'held_back', true, true, false, '', r.token,\n"
         "         ceil(extract(epoch FROM r.held_back_until - s.now) * 1000)::bigint, "
         "r.server_epoch\n"
         "  FROM created r, s\n"
         "  UNION ALL\n"
         "  SELECT CASE WHEN l.held_back_until > s.now THEN 'held_back' ELSE 'held' END, false, "
         "false, false,\n"
         "         CASE WHEN l.expires_at > s.now THEN l.holder ELSE '' END, l.token,\n"
         "         greatest(0, ceil(extract(epoch FROM greatest(l.held_back_until, l.expires_at) - "
         "s.now) * 1000))::bigint, l.server_epoch\n"
         "  FROM " + t + " l, s\n"
         "  WHERE l.election = $1 AND NOT EXISTS (SELECT 1 FROM changed)\n"
         "    AND NOT EXISTS (SELECT 1 FROM created))\n"
         "SELECT a.outcome, a.reset, a.missing, a.new_term, a.holder, a.token, a.remaining_ms, "
         "a.epoch,\n"
         "       CASE WHEN a.new_term THEN pg_notify($5, json_build_object('event', 'acquired', "
         "'election', $1,\n"
         "            'holder', a.holder, 'session', $3::text, 'token', a.token)::text)::text END\n"
         "FROM answer a";
}

std::string lease_sql::renew() const {
  return "UPDATE " + quoted_table_ +
         " AS l SET expires_at = s.now + $5::bigint * interval '1 millisecond'\n"
         "FROM (SELECT clock_timestamp() AS now) s\n"
         "WHERE l.election = $1 AND l.holder = $2 AND l.holder_session = $3 AND l.token = "
         "$4::bigint\n"
         "  AND l.expires_at > s.now\n"
         "RETURNING l.token";
}

std::string lease_sql::release() const {
  return "WITH s AS (SELECT clock_timestamp() AS now),\n"
         "freed AS (\n"
         "  UPDATE " + quoted_table_ + " AS l SET expires_at = s.now FROM s\n"
         "  WHERE l.election = $1 AND l.holder = $2 AND l.holder_session = $3 AND l.token = "
         "$4::bigint\n"
         "    AND l.expires_at > s.now\n"
         "  RETURNING l.token)\n"
         "SELECT f.token, pg_notify($5, json_build_object('event', 'released', 'election', $1,\n"
         "         'holder', $2::text, 'session', $3::text, 'token', f.token)::text)::text\n"
         "FROM freed f";
}

std::string lease_sql::create_record() const {
  return "WITH s AS (SELECT clock_timestamp() AS now, " + std::string(epoch_expression) +
         " AS epoch)\n"
         "INSERT INTO " + quoted_table_ +
         " (election, token, server_epoch)\n"
         "SELECT $1, " + std::string(clock_micros) +
         ", s.epoch FROM s\n"
         "ON CONFLICT (election) DO NOTHING\n"
         "RETURNING token";
}

std::string lease_sql::listen() const { return "LISTEN \"" + table_ + "\""; }

}  // namespace baton::postgres_detail
