// What the kinds' worlds share, inside support/worlds/: each kind's maker,
// for the list in store_world.cpp, and the clock their answers are in.
#pragma once

#include <cstdint>
#include <memory>

#include "support/worlds/store_world.hpp"

namespace baton::testing::worlds {

std::unique_ptr<store_world> make_redis_world();
std::unique_ptr<store_world> make_sentinel_world();
std::unique_ptr<store_world> make_cluster_world();
std::unique_ptr<store_world> make_redlock_world();
std::unique_ptr<store_world> make_postgres_world();
std::unique_ptr<store_world> make_etcd_world();
std::unique_ptr<store_world> make_zookeeper_world();

/// CLOCK_MONOTONIC now, ns: the clock of the workers' event log, which
/// lease_kept_until_ns answers in.
std::int64_t monotonic_ns();

}  // namespace baton::testing::worlds
