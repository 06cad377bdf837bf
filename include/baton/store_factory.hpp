// The one place that turns a configuration into a lease store. The driver
// calls make_lease_store and sees only the port (lease_store.hpp); the kind
// in use is found in the registry (store_kind.hpp), so a new kind adds
// nothing here.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "baton/config.hpp"
#include "baton/lease_store.hpp"

namespace baton {

/// Makes the store `cfg.store.kind` names (a kind of the registry), for
/// cfg.election, cfg.node_id and cfg.lease.ttl. `cfg` must be validated. Connects lazily: nothing is sent
/// before the first call. Throws std::invalid_argument for an unknown kind.
std::unique_ptr<lease_store> make_lease_store(boost::asio::io_context& io, const config& cfg);

/// The longest one store call can take before the store fails it by itself:
/// the chosen kind's connect timeout plus its command timeout.
milliseconds store_call_bound(const config& cfg);

/// What a DBA applies before the first start when the store needs a schema
/// (`baton init-store --print`): the chosen kind's DDL and grants; "" for
/// kinds that need none (Redis).
std::string store_schema_text(const config& cfg);

}  // namespace baton
