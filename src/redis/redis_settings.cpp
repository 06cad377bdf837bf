// redis_endpoint_for: the one place where the redis: section's user and TLS
// options meet a URL.
#include "baton/redis_settings.hpp"


namespace baton {

redis_endpoint redis_endpoint_for(const redis_config& redis, const std::string& url) {
  redis_endpoint e = parse_redis_url(url);
  if (!redis.username.empty()) e.username = redis.username;
  auto& tls = e.tls_settings;
  tls.ca_file = redis.tls_ca_file;
  tls.ca_dir = redis.tls_ca_dir;
  tls.cert_file = redis.tls_cert_file;
  tls.key_file = redis.tls_key_file;
  tls.server_name = redis.tls_server_name.empty() ? e.host : redis.tls_server_name;
  tls.verify = redis.tls_verify;
  return e;
}

std::vector<std::string> redis_urls_in_use(const config& cfg) {
  if (cfg.store.kind == "redis") return {cfg.redis.url};
  if (cfg.store.kind == "redlock") return cfg.redlock.masters;
  if (cfg.store.kind == "sentinel") return cfg.sentinel.addresses;
  if (cfg.store.kind == "cluster") return cfg.cluster.nodes;
  return {};
}

}  // namespace baton
