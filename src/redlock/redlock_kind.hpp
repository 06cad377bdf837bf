// The redlock store kind (N independent Redis masters); the registry
// (src/store_kinds/registry.cpp) lists it.
#pragma once

#include "baton/store_kind.hpp"

namespace baton {

extern const store_kind redlock_kind;

}  // namespace baton
