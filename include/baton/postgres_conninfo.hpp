// What baton reads from a libpq connection string or URI: whether libpq
// accepts it, and a description of where it points that never holds the
// password (for logs, status and error lines). Used by config validation
// and by the postgres store alike, so both read it as libpq does.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace baton {

struct conninfo_summary {
  /// libpq's complaint when it cannot parse the string ("" = it parsed).
  std::string error;
  /// "host:port/dbname as user", with libpq's defaults left out when the
  /// string does not name them (e.g. "127.0.0.1:5432/app as baton").
  std::string where;
  /// The password the string itself holds ("" = none; discouraged: it may
  /// reach argv).
  std::string password;
  /// The port(s) as written, comma-separated for several hosts ("" = libpq's
  /// default). libpq checks them only when it connects; see
  /// postgres_port_problem.
  std::string port;
};

conninfo_summary summarize_conninfo(const std::string& conninfo);

/// Checks the port(s) of a connection string: each entry of the comma list
/// empty (the default) or a number from 1 to 65535. nullopt when fine, else
/// what is wrong, naming the entry (never the rest of the string).
std::optional<std::string> postgres_port_problem(std::string_view port);

/// Checks a `postgres.table` value: `name` or `schema.name`, each part
/// [A-Za-z_][A-Za-z0-9_]*, at most 63 characters in all (it also names the
/// notification channel, which has that limit). nullopt when fine, else what
/// is allowed.
std::optional<std::string> postgres_table_problem(std::string_view table);

}  // namespace baton
