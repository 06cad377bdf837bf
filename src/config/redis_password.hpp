// Where the Redis password comes from. It is a secret, so it has its own
// sources and order, none of them argv or the config file: BATON_REDIS_PASSWORD,
// then redis.password_file, then the URL's user-info.
#pragma once

#include <string>

#include "baton/config_load.hpp"

namespace baton {

/// The password for `cfg` (validated): the variable named by the secret
/// option redis.password if set and non-empty, or the first line of
/// redis.password_file, or the URL's user-info ("" = none). More than one of
/// them is a config_error naming the sources (never the password). Throws
/// config_error naming redis.password_file when that file cannot be used;
/// `origins` says where its name came from.
std::string resolve_redis_password(const config& cfg, const environment& env,
                                   const option_origins& origins);

/// The same rules for the PostgreSQL password: BATON_POSTGRES_PASSWORD,
/// postgres.password_file, or the password in postgres.url ("" = none, and
/// libpq may still find one in PGPASSWORD or its password file).
std::string resolve_postgres_password(const config& cfg, const environment& env,
                                      const option_origins& origins);

}  // namespace baton
