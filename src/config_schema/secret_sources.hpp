// Which source of a store's password wins, and the errors when two claim it.
// A password is a secret, so it has its own sources and order, none of them
// argv or the config file: its variable (the secret option's), then its
// file option, then what the store's URL carries. Each store kind resolves
// its own password through this one rule.
#pragma once

#include <string>

#include "baton/environment.hpp"
#include "baton/option_origins.hpp"
#include "option_spec.hpp"

namespace baton {

struct password_sources {
  const option_spec& secret;  ///< the secret option, for its variable
  std::string file_option;    ///< "redis.password_file"
  std::string file_path;      ///< its value ("" = not set)
  std::string url_option;     ///< "redis.url"
  std::string url_password;   ///< what the URL carries ("" = none)
  std::string label;          ///< "Redis", "PostgreSQL"
};

/// The variable's value if set and non-empty, or the first line of the
/// file, or the URL's password ("" = none). More than one of them is a
/// config_error naming the sources (never the password); an unusable file a
/// config_error naming the file option. `origins` says where values came from.
std::string resolve_password(const password_sources& sources, const environment& env,
                             const option_origins& origins);

}  // namespace baton
