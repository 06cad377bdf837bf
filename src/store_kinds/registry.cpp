// The registry: every store kind this build knows, one line each. A new kind
// is its folder, a line here and its baton_component line in CMakeLists.txt
// (see baton/store_kind.hpp for what its descriptor provides).
#include <string>

#include "baton/config.hpp"
#include "baton/store_registry.hpp"
#include "etcd/etcd_kind.hpp"
#include "postgres/postgres_kind.hpp"
#include "redis/redis_kinds.hpp"
#include "redlock/redlock_kind.hpp"
#include "zookeeper/zookeeper_kind.hpp"

namespace baton {
namespace {

// In the order messages list them; the first is the default.
const store_kind* const kinds[] = {
    &redis_kind,
    &sentinel_kind,
    &cluster_kind,
    &redlock_kind,
    &postgres_kind,
    &etcd_kind,
    &zookeeper_kind,
};

}  // namespace

std::span<const store_kind* const> store_kinds() { return kinds; }

const store_kind& default_store_kind() { return *kinds[0]; }

const store_kind* find_store_kind(std::string_view name) {
  for (const store_kind* kind : kinds) {
    if (kind->name == name) return kind;
  }
  return nullptr;
}

const store_kind& store_kind_of(const config& cfg) {
  if (const store_kind* kind = find_store_kind(cfg.store.kind)) return *kind;
  std::string known;
  for (const store_kind* kind : kinds) known += (known.empty() ? "" : ", ") + std::string(kind->name);
  // The registry owns store.kind: its row is the table's, its value one of these.
  throw config_error("store.kind", cfg.store.kind,
                     "must be a store kind this build knows: " + known);
}

}  // namespace baton
