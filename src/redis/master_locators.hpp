// The locators of the kinds whose master moves (sentinel, cluster), made from
// the config exactly once for the store and for `baton check-store`, so both
// ask the same sentinels or seed nodes with the same credentials and TLS.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "baton/config.hpp"
#include "baton/redis_url.hpp"
#include "redis/master_locator.hpp"

namespace baton {

struct located_master {
  std::shared_ptr<redis_detail::master_locator> locator;
  /// The master's endpoint but for its address: the redis: section's user
  /// and TLS settings; an empty TLS server name means the located host.
  redis_endpoint master_template;
};

/// For store.kind sentinel or cluster (validated); throws
/// std::invalid_argument for any other kind.
located_master locate_master(boost::asio::io_context& io, const config& cfg);

}  // namespace baton
