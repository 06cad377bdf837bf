// make_lease_store: config in, a store behind the port out. The only file
// outside a store's own component that names store kinds.
#include "baton/store_factory.hpp"

#include <stdexcept>

#include "baton/redis_settings.hpp"
#include "postgres/lease_sql.hpp"
#include "postgres/postgres_store.hpp"
#include "baton/config_load.hpp"
#include "redis/redis_store.hpp"
#include "redis/cluster_locator.hpp"
#include "redis/lease_keys.hpp"
#include "redis/sentinel_locator.hpp"
#include "redlock/redlock_store.hpp"

namespace baton {
namespace {

store_identity identity_of(const config& cfg) {
  return {cfg.election, cfg.node_id, cfg.lease.ttl};
}

std::unique_ptr<lease_store> make_redis_store(boost::asio::io_context& io, const config& cfg) {
  redis_store_options o;
  o.endpoint = redis_endpoint_for(cfg.redis, cfg.redis.url);
  o.password = cfg.redis.password;
  // Read again on every reconnect (the loader refuses it beside the variable).
  o.password_file = cfg.redis.password_file;
  o.connect_timeout = cfg.redis.connect_timeout;
  o.command_timeout = cfg.redis.command_timeout;
  o.identity = identity_of(cfg);
  o.ack.replicas = parse_replica_ack(cfg.redis.replica_ack).value_or(-1);
  o.ack.timeout = cfg.redis.replica_ack_timeout;
  return std::make_unique<redis_store>(io, std::move(o));
}

// What the sentinel, cluster and plain redis kinds share: the redis: section's
// credentials, timeouts and replica acknowledgement.
redis_store_options replicated_options(const config& cfg, redis_endpoint master) {
  redis_store_options o;
  o.endpoint = std::move(master);
  o.password = cfg.redis.password;
  o.password_file = cfg.redis.password_file;
  o.connect_timeout = cfg.redis.connect_timeout;
  o.command_timeout = cfg.redis.command_timeout;
  o.identity = identity_of(cfg);
  o.ack.replicas = parse_replica_ack(cfg.redis.replica_ack).value_or(-1);
  o.ack.timeout = cfg.redis.replica_ack_timeout;
  return o;
}

// The master's endpoint template: its address comes from the locator; an
// empty TLS server name then means the located host.
redis_endpoint located_master_template(const config& cfg, bool tls) {
  auto e = redis_endpoint_for(cfg.redis, tls ? "rediss://located" : "redis://located");
  e.tls_settings.server_name = cfg.redis.tls_server_name;
  return e;
}

std::unique_ptr<lease_store> make_sentinel_store(boost::asio::io_context& io, const config& cfg) {
  redis_detail::sentinel_locator_options s;
  bool tls = false;
  for (const auto& url : url_list(cfg.sentinel.addresses)) {
    auto e = redis_endpoint_for(cfg.redis, url);
    tls = e.tls;
    // The sentinels have their own user and password, and may have their
    // own TLS files.
    e.username = cfg.sentinel.username;
    if (!cfg.sentinel.tls_ca_file.empty()) e.tls_settings.ca_file = cfg.sentinel.tls_ca_file;
    if (!cfg.sentinel.tls_cert_file.empty()) {
      e.tls_settings.cert_file = cfg.sentinel.tls_cert_file;
      e.tls_settings.key_file = cfg.sentinel.tls_key_file;
    }
    s.sentinels.push_back(std::move(e));
  }
  s.password_file = cfg.sentinel.password_file;
  s.master_name = cfg.sentinel.master_name;
  s.connect_timeout = cfg.redis.connect_timeout;
  s.command_timeout = cfg.redis.command_timeout;
  s.check_interval = cfg.sentinel.check_interval;
  auto o = replicated_options(cfg, located_master_template(cfg, tls));
  o.locator = redis_detail::sentinel_locator::create(io, std::move(s));
  o.replicated = true;
  o.kind = "sentinel";
  o.label = "Redis Sentinel";
  return std::make_unique<redis_store>(io, std::move(o));
}

std::unique_ptr<lease_store> make_cluster_store(boost::asio::io_context& io, const config& cfg) {
  redis_detail::cluster_locator_options c;
  bool tls = false;
  for (const auto& url : url_list(cfg.cluster.nodes)) {
    auto e = redis_endpoint_for(cfg.redis, url);
    tls = e.tls;
    if (!cfg.redis.password.empty()) e.password = cfg.redis.password;
    c.seeds.push_back(std::move(e));
  }
  c.password_file = cfg.redis.password_file;
  c.key = lease_key(cfg.election);
  c.connect_timeout = cfg.redis.connect_timeout;
  c.command_timeout = cfg.redis.command_timeout;
  auto o = replicated_options(cfg, located_master_template(cfg, tls));
  o.locator = redis_detail::cluster_locator::create(io, std::move(c));
  o.replicated = true;
  o.sharded_pubsub = true;
  o.kind = "cluster";
  o.label = "Redis Cluster";
  return std::make_unique<redis_store>(io, std::move(o));
}

std::unique_ptr<lease_store> make_redlock_store(boost::asio::io_context& io, const config& cfg) {
  redlock_store_options o;
  for (const auto& url : redlock_master_urls(cfg.redlock)) {
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
  if (cfg.store.kind == "sentinel") return make_sentinel_store(io, cfg);
  if (cfg.store.kind == "cluster") return make_cluster_store(io, cfg);
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
    const auto sentinels = static_cast<int>(url_list(cfg.sentinel.addresses).size());
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
