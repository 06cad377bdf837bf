// What baton reads from a libpq connection string or URI: whether libpq
// accepts it, and a description of where it points that never holds the
// password (for logs, status and error lines).
#pragma once

#include <string>

namespace baton::postgres_detail {

struct conninfo_summary {
  /// libpq's complaint when it cannot parse the string ("" = it parsed).
  std::string error;
  /// "host:port/dbname as user", with libpq's defaults left out when the
  /// string does not name them (e.g. "127.0.0.1:5432/app as baton").
  std::string where;
  /// The string itself holds a password (discouraged: it may reach argv).
  bool has_password = false;
};

conninfo_summary summarize_conninfo(const std::string& conninfo);

}  // namespace baton::postgres_detail
