// The options of a redlock_store on real redis-servers, shared by the tests
// that start their own masters (support/servers/redis_server.hpp): the
// Redlock integration tests here and the Redlock contract harness
// (tests/contract/redlock_contract_test.cpp). What every one of them sets
// alike is here; what a file sets on purpose (its timeouts, a priority, a
// peer address) it sets on the options it gets back.
#pragma once

#include <span>
#include <string>

#include "baton/time.hpp"
#include "integration/redis/store_test_util.hpp"
#include "redlock/redlock_store.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::testing::redlock_test_util {

using namespace std::chrono_literals;

/// Options for a store named `node` in store_test_util::election on every
/// one of `masters` over TCP, in their order, with lease ttl `ttl` (default
/// store_test_util::default_ttl, 5 s), priority 0 and no peer address; a
/// drift of 2 ms + 1 % of the ttl (what the daemon's default
/// lease.drift_factor gives for a ttl in tenths of a second); and the
/// store's own connect and command timeouts (1 s each).
inline redlock_store_options options_for(std::span<const redis_server> masters,
                                         const std::string& node,
                                         milliseconds ttl = store_test_util::default_ttl) {
  redlock_store_options o;
  for (const auto& server : masters) {
    redis_endpoint e;
    e.host = server.host();
    e.port = server.port();
    o.masters.push_back(e);
  }
  o.identity = store_identity{store_test_util::election, node, ttl};
  o.drift = 2ms + ttl / 100;
  return o;
}

}  // namespace baton::testing::redlock_test_util
