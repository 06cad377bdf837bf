// redis.replica_ack's rule, for the parts of baton that explain it rather
// than enforce it (check-store, the log): how many replicas a grant or
// renewal needs, and why one was refused. The scripts enforce the same rule
// on the server, atomically with the grant (BATON_LUA_REPLICAS in
// lua_parts.hpp); keep the two alike.
#pragma once

#include <string>
#include <string_view>

namespace baton {

/// How many replicas must acknowledge a grant or renewal: `replica_ack` -1
/// (off) needs none (0); N > 0 needs N; 0 (all) needs the most replicas the
/// election's master has had (`recorded`, kept in replicas_key, raised to
/// the replicas connected now), and never fewer than one.
int replicas_required(int replica_ack, int recorded, int connected);

/// Why redis.replica_ack (`requirement`: "all" or a number) refused a grant or
/// renewal before it was written: the master has `connected` of the `needed`
/// replicas. Names the key that keeps the count for "all" (`replicas_key`).
std::string replica_shortfall(int connected, int needed, std::string_view requirement,
                              std::string_view replicas_key);

}  // namespace baton
