// make_lease_store: config in, a store behind the port out. The only file
// outside a store's own component that names store kinds.
#include "baton/store_factory.hpp"

#include <stdexcept>

#include "baton/redis_url.hpp"
#include "redis/redis_store.hpp"

namespace baton {
namespace {

store_identity identity_of(const config& cfg) {
  return {cfg.election, cfg.node_id, cfg.lease.ttl};
}

std::unique_ptr<lease_store> make_redis_store(boost::asio::io_context& io, const config& cfg) {
  redis_store_options o;
  o.endpoint = parse_redis_url(cfg.redis.url);
  o.password = cfg.redis.password;
  o.connect_timeout = cfg.redis.connect_timeout;
  o.command_timeout = cfg.redis.command_timeout;
  o.identity = identity_of(cfg);
  return std::make_unique<redis_store>(io, std::move(o));
}

}  // namespace

// Every kind in store_config::known_kinds (what validation accepts) has a case
// here; store_factory_test checks that each one is built.
std::unique_ptr<lease_store> make_lease_store(boost::asio::io_context& io, const config& cfg) {
  if (cfg.store.kind == "redis") return make_redis_store(io, cfg);
  throw std::invalid_argument("unknown store kind \"" + cfg.store.kind + "\"");
}

}  // namespace baton
