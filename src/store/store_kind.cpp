// What every kind's descriptor shares: who a store works for.
#include "baton/store_kind.hpp"

namespace baton {

store_identity store_identity_of(const config& cfg) {
  store_identity id{cfg.election, cfg.node_id, cfg.lease.ttl, cfg.priority, {}};
  // The registration publishes the peer port only with the mode on.
  if (cfg.lease.failsafe == failsafe_mode::peers) {
    id.peer_address =
        cfg.lease.failsafe_address.empty() ? cfg.lease.failsafe_listen : cfg.lease.failsafe_address;
  }
  return id;
}

}  // namespace baton
