// The three store kinds built on redis_store: redis (one server), sentinel
// (the master a Sentinel group names) and cluster (the master of the
// election's slot). The registry (src/store_kinds/registry.cpp) lists them.
#pragma once

#include "baton/store_kind.hpp"

namespace baton {

extern const store_kind redis_kind;
extern const store_kind sentinel_kind;
extern const store_kind cluster_kind;

}  // namespace baton
