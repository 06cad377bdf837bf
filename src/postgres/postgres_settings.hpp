// The postgres: section's settings and their accessor.
#pragma once

#include <string>

#include "baton/config.hpp"

namespace baton {

/// The postgres: section (store.kind postgres): a lease table in PostgreSQL.
struct postgres_settings {
  /// A libpq connection string (`host=... dbname=... user=...`) or URI
  /// (`postgresql://user@host:port/db?sslmode=verify-full`), as libpq reads
  /// it; sslmode, sslrootcert and the rest keep libpq's names.
  std::string url = "postgresql://127.0.0.1:5432/postgres";
  /// Secret. Never logged, never taken from argv: from
  /// BATON_POSTGRES_PASSWORD, postgres.password_file, or the URL
  /// (discouraged). libpq's own PGPASSWORD / PGPASSFILE work too.
  std::string password;
  /// File whose first line is the password ("" = none).
  std::string password_file;
  /// The lease table, `name` or `schema.name`; its sequence is
  /// `<table>_token` and its notification channel the table's name.
  std::string table = "baton_lease";
  /// Create the table and sequence on first use when they are missing.
  bool create_schema = true;
  /// Time allowed to connect, authenticate and set the session up.
  milliseconds connect_timeout{1000};
  /// Time allowed for one statement (also the session's statement_timeout).
  /// 0 = min(1s, lease.renew_interval / 2).
  milliseconds command_timeout{0};
};

/// The settings of the postgres: section in `cfg`.
inline postgres_settings& postgres_settings_of(config& cfg) {
  return cfg.kinds.get<postgres_settings>();
}
inline const postgres_settings& postgres_settings_of(const config& cfg) {
  return cfg.kinds.get<postgres_settings>();
}

}  // namespace baton
