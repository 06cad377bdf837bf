// The etcd store kind (a key on an etcd lease, over the JSON gateway); the
// registry (src/store_kinds/registry.cpp) lists it.
#pragma once

#include "baton/store_kind.hpp"

namespace baton {

extern const store_kind etcd_kind;

}  // namespace baton
