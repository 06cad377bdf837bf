// A transport whose address is found when it connects: it asks a
// master_locator, then connects a plain TCP or TLS transport there with the
// template endpoint's credentials and TLS settings. The connection above it
// does not know the difference, so a reconnect is also a re-resolution.
#pragma once

#include <memory>

#include "master_locator.hpp"
#include "transport.hpp"

namespace baton::redis_detail {

/// Makes one locating transport per attempt. The endpoint handed to the
/// factory is the template: its host and port are replaced by the located
/// ones; an empty TLS server name means the located host.
transport_factory locating_transport_factory(std::shared_ptr<master_locator> locator);

}  // namespace baton::redis_detail
