// The one place that turns a configuration into a lease store. The driver
// calls make_lease_store and sees only the port (lease_store.hpp); a new store
// kind is a new case here plus its own component.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "baton/config.hpp"
#include "baton/lease_store.hpp"

namespace baton {

/// Makes the store `cfg.store.kind` names (one of store_config::known_kinds), for cfg.election, cfg.node_id and
/// cfg.lease.ttl. `cfg` must be validated. Connects lazily: nothing is sent
/// before the first call. Throws std::invalid_argument for an unknown kind.
std::unique_ptr<lease_store> make_lease_store(boost::asio::io_context& io, const config& cfg);

}  // namespace baton
