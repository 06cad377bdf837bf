// What every kind's descriptor shares: who a store works for.
#include "baton/store_kind.hpp"

#include "baton/candidate_card.hpp"

namespace baton {

store_identity store_identity_of(const config& cfg) {
  store_identity id{cfg.election, cfg.node_id, cfg.lease.ttl, cfg.priority, {}};
  // The registration publishes the peer port only with the mode on.
  if (cfg.lease.failsafe == failsafe_mode::peers) {
    id.peer_address =
        cfg.lease.failsafe_address.empty() ? cfg.lease.failsafe_listen : cfg.lease.failsafe_address;
  }
  // A drain is the daemon's to add (update_card), once it has read its
  // drain file.
  id.card = encode_candidate_card(
      {cfg.never_lead ? candidate_standing::never : candidate_standing::eligible, cfg.advertise});
  return id;
}

}  // namespace baton
