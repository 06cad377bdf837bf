// Candidates of a fault_cluster on a store world (support/worlds/), pointed at
// its servers by the option text a user writes: odd candidates read the
// store's options from a YAML file (`--config`), even ones from BATON_*
// variables, so both ways through the loader reach the kind's descriptor.
// The election's record is made first by `baton init-store` with the same
// options, as an operator prepares a new election, so that the first start
// is not held back for a ttl.
#pragma once

#include "fault_cluster.hpp"
#include "support/worlds/store_world.hpp"

namespace baton::testing {

/// The options that start candidate `index` of `cluster` on `world`'s store
/// (the cluster adds the election, node id, ttl and socket).
node_options world_candidate(const store_world& world, const fault_cluster& cluster, int index);

/// Runs `baton init-store` for `cluster`'s election on `world`'s store.
/// Throws std::runtime_error with its output when it does not exit 0.
void init_world_election(const store_world& world, const fault_cluster& cluster);

}  // namespace baton::testing
