// The zookeeper store kind (an ephemeral lease node and a record per
// election); the registry (src/store_kinds/registry.cpp) lists it.
#pragma once

#include "baton/store_kind.hpp"

namespace baton {

extern const store_kind zookeeper_kind;

}  // namespace baton
