// How to reach one Redis server with the redis: section's settings: the URL
// parsed, then the ACL user and the TLS options applied. The single-server
// store, every Redlock master, init-store and check-store connect through it,
// so they all log in and verify the same way.
#pragma once

#include <string>
#include <vector>

#include "baton/config.hpp"
#include "baton/redis_url.hpp"

namespace baton {

/// The endpoint of `url` (redis.url or a Redlock master) with redis.username
/// and redis.tls_* applied. For a validated config it does not throw;
/// otherwise config_error as parse_redis_url.
redis_endpoint redis_endpoint_for(const redis_config& redis, const std::string& url);

/// The URLs whose servers hold the lease for `cfg`'s store kind: redis.url,
/// the sentinels, the cluster's seeds or the Redlock masters (none for a kind
/// not built on Redis).
std::vector<std::string> redis_urls_in_use(const config& cfg);

}  // namespace baton
