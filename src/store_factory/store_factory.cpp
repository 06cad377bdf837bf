// make_lease_store: config in, a store behind the port out, dispatching on
// store.kind. Validation (src/config/validate.cpp), the store check
// (src/store_check) and a few status lines name kinds too: gathering each
// kind's rules behind one registry is still to do.
#include "baton/store_factory.hpp"

#include <stdexcept>

#include "baton/redis_settings.hpp"
#include "postgres/lease_sql.hpp"
#include "postgres/postgres_store.hpp"
#include "baton/config_load.hpp"
#include "redis/redis_store.hpp"
#include "master_locators.hpp"
#include "redlock/redlock_store.hpp"

namespace baton {
namespace {

store_identity identity_of(const config& cfg) {
  return {cfg.election, cfg.node_id, cfg.lease.ttl};
}

// What the redis, sentinel and cluster kinds share: the redis: section's
// credentials, timeouts and replica acknowledgement.
redis_store_options redis_options(const config& cfg, redis_endpoint master) {
  redis_store_options o;
  o.endpoint = std::move(master);
  o.password = cfg.redis.password;
  o.password_file = cfg.redis.password_file;
  o.connect_timeout = cfg.redis.connect_timeout;
  o.command_timeout = cfg.redis.command_timeout;
  o.identity = identity_of(cfg);
  o.ack.replicas = cfg.redis.replica_ack.replicas;
  o.ack.timeout = cfg.redis.replica_ack_timeout;
  return o;
}

std::unique_ptr<lease_store> make_redis_store(boost::asio::io_context& io, const config& cfg) {
  // The password file is read again on every reconnect (the loader refuses
  // it beside the variable).
  return std::make_unique<redis_store>(
      io, redis_options(cfg, redis_endpoint_for(cfg.redis, cfg.redis.url)));
}

std::unique_ptr<lease_store> make_located_store(boost::asio::io_context& io, const config& cfg) {
  auto located = locate_master(io, cfg);
  auto o = redis_options(cfg, std::move(located.master_template));
  o.locator = std::move(located.locator);
  o.replicated = true;
  o.sharded_pubsub = cfg.store.kind == "cluster";
  o.kind = cfg.store.kind;
  o.label = cfg.store.kind == "cluster" ? "Redis Cluster" : "Redis Sentinel";
  return std::make_unique<redis_store>(io, std::move(o));
}

std::unique_ptr<lease_store> make_redlock_store(boost::asio::io_context& io, const config& cfg) {
  redlock_store_options o;
  for (const auto& url : cfg.redlock.masters) {
    o.masters.push_back(redis_endpoint_for(cfg.redis, url));
  }
  o.password = cfg.redis.password;
  // Read again on every reconnect (the loader refuses it beside the variable).
  o.password_file = cfg.redis.password_file;
  o.connect_timeout = cfg.redis.connect_timeout;
  o.command_timeout = cfg.redis.command_timeout;
  o.identity = identity_of(cfg);
  o.drift = lease_drift(cfg.lease);
  return std::make_unique<redlock_store>(io, std::move(o));
}

std::unique_ptr<lease_store> make_postgres_store(boost::asio::io_context& io, const config& cfg) {
  postgres_store_options o;
  o.conninfo = cfg.postgres.url;
  o.password = cfg.postgres.password;
  o.table = cfg.postgres.table;
  o.create_schema = cfg.postgres.create_schema;
  o.connect_timeout = cfg.postgres.connect_timeout;
  o.command_timeout = cfg.postgres.command_timeout;
  o.identity = identity_of(cfg);
  return std::make_unique<postgres_store>(io, std::move(o));
}

}  // namespace

// Every kind in store_config::known_kinds (what validation accepts) has a case
// here; store_factory_test checks that each one is built.
std::unique_ptr<lease_store> make_lease_store(boost::asio::io_context& io, const config& cfg) {
  if (cfg.store.kind == "redis") return make_redis_store(io, cfg);
  if (cfg.store.kind == "sentinel" || cfg.store.kind == "cluster") return make_located_store(io, cfg);
  if (cfg.store.kind == "redlock") return make_redlock_store(io, cfg);
  if (cfg.store.kind == "postgres") return make_postgres_store(io, cfg);
  throw std::invalid_argument("unknown store kind \"" + cfg.store.kind + "\"");
}

}  // namespace baton

namespace baton {

milliseconds store_call_bound(const config& cfg) {
  if (cfg.store.kind == "postgres") {
    // The table check, its creation and the statement itself.
    return cfg.postgres.connect_timeout + 3 * cfg.postgres.command_timeout;
  }
  if (cfg.store.kind == "sentinel") {
    // Each sentinel may be asked in turn before the master is reached.
    const auto sentinels = static_cast<int>(cfg.sentinel.addresses.size());
    return (sentinels + 1) * (cfg.redis.connect_timeout + cfg.redis.command_timeout);
  }
  if (cfg.store.kind == "cluster") {
    // The slot map from a seed, the master, and a redirect or two.
    return 2 * cfg.redis.connect_timeout + 3 * cfg.redis.command_timeout;
  }
  if (cfg.store.kind == "redlock") {
    // The masters answer in parallel; an acquire is two rounds.
    return cfg.redis.connect_timeout + 2 * cfg.redis.command_timeout;
  }
  return cfg.redis.connect_timeout + cfg.redis.command_timeout;
}

std::string store_schema_text(const config& cfg) {
  if (cfg.store.kind == "postgres") return postgres_detail::lease_sql(cfg.postgres.table).ddl_for_people();
  return {};
}

}  // namespace baton
