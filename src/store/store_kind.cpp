// What every kind's descriptor shares: who a store works for.
#include "baton/store_kind.hpp"

namespace baton {

store_identity store_identity_of(const config& cfg) {
  return {cfg.election, cfg.node_id, cfg.lease.ttl, cfg.priority};
}

}  // namespace baton
