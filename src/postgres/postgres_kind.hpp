// The postgres store kind (a lease table in PostgreSQL); the registry
// (src/store_kinds/registry.cpp) lists it.
#pragma once

#include "baton/store_kind.hpp"

namespace baton {

extern const store_kind postgres_kind;

}  // namespace baton
