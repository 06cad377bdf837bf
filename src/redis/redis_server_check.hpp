// The checks of one Redis server, as the redis kind and each Redlock master
// need it: one connection made exactly as the store makes its own, then a
// fixed sequence of commands, each reported as one line.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <string>
#include <vector>

#include "baton/config.hpp"
#include "baton/lease_store.hpp"
#include "baton/redis_url.hpp"
#include "baton/check_report.hpp"

namespace baton::store_check_detail {

struct redis_server_settings {
  redis_endpoint endpoint;       ///< with the password from the URL or the environment
  std::string password_file;     ///< read as the store reads it ("" = none)
  milliseconds connect_timeout{1000};
  milliseconds command_timeout{1000};
  store_identity identity;       ///< election and ttl
  /// For a Redlock master: replicas are a hazard for a different reason.
  bool redlock_master = false;
  /// A master found through Sentinel or a Cluster's slot map: replicas are
  /// expected, and what matters is redis.replica_ack against them.
  bool located = false;
  /// A Cluster node: cluster mode is expected.
  bool cluster = false;
  /// redis.replica_ack: -1 off, 0 all, N.
  int replica_ack = -1;
};

/// The settings of the server at `url` (redis.url, a Redlock master), made
/// exactly as the store makes its endpoint: the redis: section's user, TLS,
/// password and timeouts, and redis.replica_ack.
redis_server_settings redis_server_settings_for(const config& cfg, const std::string& url);

/// Checks one server; `done` gets its lines (the first is "reachable"; when
/// that one is a failure nothing else was checked).
void async_check_redis_server(boost::asio::io_context& io, redis_server_settings settings,
                              std::function<void(std::vector<check_line>)> done);

/// The commands baton needs, as README's minimal ACL lists them (lowercase).
const std::vector<std::string>& required_redis_commands();

/// The "tls" line of a server at `e`: plain TCP that leaves this host is a
/// hazard when `password` (one is configured: it goes out in AUTH) and a
/// note otherwise; loopback, a Unix socket and verified TLS are ok; TLS that
/// checks nothing is a hazard.
check_line tls_line(const redis_endpoint& e, bool password);

/// The policy's verdict and words: noeviction (or no maxmemory) is ok,
/// volatile-* and allkeys-* are hazards.
check_line eviction_line(const std::string& policy, long long maxmemory);

}  // namespace baton::store_check_detail
