// The statements themselves. Identifiers are validated (postgres_table_problem)
// and double-quoted; every value travels as a parameter.
//
// This file: the names, the schema (the DDL, for the store and for people)
// and the statement that checks it, for the store and check-store; the
// other statements are in a file per family: lease_sql_acquire.cpp,
// lease_sql_term.cpp (renew, release, hand-over, the record, LISTEN),
// lease_sql_failsafe.cpp (resume) and lease_sql_registry.cpp (the
// candidates' registry).
#include "lease_sql.hpp"

#include <string>
#include <string_view>
#include <utility>

namespace baton::postgres_detail {
namespace {

std::string quote(std::string_view name) {
  const auto dot = name.find('.');
  if (dot == std::string_view::npos) return "\"" + std::string(name) + "\"";
  return "\"" + std::string(name.substr(0, dot)) + "\".\"" + std::string(name.substr(dot + 1)) +
         "\"";
}

}  // namespace

lease_sql::lease_sql(std::string table)
    : table_(std::move(table)),
      sequence_(table_ + "_token"),
      candidates_(table_ + "_candidates"),
      quoted_table_(quote(table_)),
      quoted_sequence_(quote(sequence_)),
      quoted_candidates_(quote(candidates_)) {}

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
         "  server_epoch text NOT NULL DEFAULT '',\n"
         "  failsafe jsonb\n"
         ");\n"
         "COMMENT ON TABLE " + quoted_table_ +
         " IS 'baton leader-election leases: one row per election, never deleted; "
         "expires_at and held_back_until are in the server''s clock';\n"
         "-- A table made by a version before lease.failsafe peers (the record of its term):\n"
         "ALTER TABLE " + quoted_table_ + " ADD COLUMN IF NOT EXISTS failsafe jsonb;\n"
         "CREATE SEQUENCE IF NOT EXISTS " + quoted_sequence_ + " AS bigint;\n" + registry_ddl();
}

bool lease_sql::has_registry() const {
  // PostgreSQL cuts names at 63 bytes (NAMEDATALEN - 1; the names are
  // ASCII): a table name of 62 cuts both <table>_token and
  // <table>_candidates to <table>_.
  const auto cut = [](const std::string& name) {
    const auto dot = name.find('.');
    return (dot == std::string::npos ? name : name.substr(dot + 1)).substr(0, 63);
  };
  return cut(candidates_) != cut(table_) && cut(candidates_) != cut(sequence_);
}

std::string lease_sql::registry_ddl() const {
  if (!has_registry()) return {};
  return "CREATE TABLE IF NOT EXISTS " + quoted_candidates_ +
         " (\n"
         "  election text NOT NULL,\n"
         "  node text NOT NULL,\n"
         "  session text NOT NULL DEFAULT '',\n"
         "  priority integer NOT NULL DEFAULT 0,\n"
         "  live_since timestamptz NOT NULL,\n"
         "  expires_at timestamptz NOT NULL,\n"
         "  card text NOT NULL DEFAULT '',\n"
         "  failsafe jsonb,\n"
         "  PRIMARY KEY (election, node)\n"
         ");\n"
         "COMMENT ON TABLE " + quoted_candidates_ +
         " IS 'baton candidates: who tried to acquire a lease or renewed one lately; a row lapses "
         "two ttls after it was written (server''s clock) and a leader deletes it then';\n"
         "-- A table made by a version before the candidate card (standing, advertise address):\n"
         "ALTER TABLE " + quoted_candidates_ + " ADD COLUMN IF NOT EXISTS card text NOT NULL "
         "DEFAULT '';\n"
         "-- ... and before lease.failsafe peers (a candidate's peer address and promise):\n"
         "ALTER TABLE " + quoted_candidates_ + " ADD COLUMN IF NOT EXISTS failsafe jsonb;\n";
}

std::string lease_sql::failsafe_ddl() const {
  return "ALTER TABLE " + quoted_table_ + " ADD COLUMN IF NOT EXISTS failsafe jsonb;\n" +
         (has_registry() ? "ALTER TABLE IF EXISTS " + quoted_candidates_ +
                               " ADD COLUMN IF NOT EXISTS failsafe jsonb;\n"
                         : std::string());
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
         "GRANT USAGE ON SEQUENCE " + quoted_sequence_ + " TO baton;\n" +
         (has_registry()
              ? "GRANT SELECT, INSERT, UPDATE, DELETE ON " + quoted_candidates_ + " TO baton;\n"
              : std::string());
}

std::string lease_sql::schema_exists() const {
  return "SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL,\n"
         "       CASE WHEN to_regclass($3) IS NULL THEN 'missing'\n"
         "            WHEN NOT has_table_privilege(to_regclass($3), 'SELECT, INSERT, UPDATE, "
         "DELETE') THEN 'denied'\n"
         "            WHEN NOT EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = "
         "to_regclass($3)\n"
         "                             AND a.attname = 'card' AND NOT a.attisdropped) THEN 'old'\n"
         "            ELSE 'ok' END,\n"
         "       EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = to_regclass($1)\n"
         "               AND a.attname = 'failsafe' AND NOT a.attisdropped) AND\n"
         "       (to_regclass($3) IS NULL OR EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = "
         "to_regclass($3)\n"
         "               AND a.attname = 'failsafe' AND NOT a.attisdropped))";
}

}  // namespace baton::postgres_detail
