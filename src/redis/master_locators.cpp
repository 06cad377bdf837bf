// locate_master: see master_locators.hpp.
#include "master_locators.hpp"

#include <stdexcept>

#include "baton/option_text.hpp"
#include "baton/redis_settings.hpp"
#include "redis/cluster_locator.hpp"
#include "redis/lease_keys.hpp"
#include "redis/sentinel_locator.hpp"

namespace baton {
namespace {

redis_endpoint master_template_for(const config& cfg, bool tls) {
  const auto& redis = redis_settings_of(cfg);
  auto e = redis_endpoint_for(redis, tls ? "rediss://located" : "redis://located");
  e.tls_settings.server_name = redis.tls_server_name;
  return e;
}

located_master sentinel_master(boost::asio::io_context& io, const config& cfg) {
  const auto& redis = redis_settings_of(cfg);
  const auto& sc = sentinel_settings_of(cfg);
  redis_detail::sentinel_locator_options s;
  bool tls = false;
  for (const auto& url : sc.addresses) {
    auto e = redis_endpoint_for(redis, url);
    tls = e.tls;
    // The sentinels have their own user and password, and may have their
    // own TLS files.
    e.username = sc.username;
    auto& names = e.tls_settings.options;
    if (!sc.tls_ca_file.empty()) e.tls_settings.ca_file = sc.tls_ca_file;
    if (!sc.tls_ca_file.empty() || redis.tls_ca_file.empty())
      names.ca_file = "sentinel.tls_ca_file";
    if (!sc.tls_cert_file.empty()) {
      e.tls_settings.cert_file = sc.tls_cert_file;
      e.tls_settings.key_file = sc.tls_key_file;
    }
    // Errors name the option whose file is in use, or the sentinel's own
    // when neither is set (where the user would add one).
    if (!sc.tls_cert_file.empty() || redis.tls_cert_file.empty()) {
      names.cert_file = "sentinel.tls_cert_file";
      names.key_file = "sentinel.tls_key_file";
    }
    s.sentinels.push_back(std::move(e));
  }
  s.password_file = sc.password_file;
  s.master_name = sc.master_name;
  s.connect_timeout = redis.connect_timeout;
  s.command_timeout = redis.command_timeout;
  s.check_interval = sc.check_interval;
  return {redis_detail::sentinel_locator::create(io, std::move(s)), master_template_for(cfg, tls)};
}

located_master cluster_master(boost::asio::io_context& io, const config& cfg) {
  const auto& redis = redis_settings_of(cfg);
  redis_detail::cluster_locator_options c;
  bool tls = false;
  for (const auto& url : cluster_settings_of(cfg).nodes) {
    // The seeds are data nodes: the redis: section's credentials.
    auto e = redis_endpoint_for(redis, url);
    tls = e.tls;
    if (!redis.password.empty()) e.password = redis.password;
    c.seeds.push_back(std::move(e));
  }
  c.password_file = redis.password_file;
  c.key = lease_key(cfg.election);
  c.connect_timeout = redis.connect_timeout;
  c.command_timeout = redis.command_timeout;
  return {redis_detail::cluster_locator::create(io, std::move(c)), master_template_for(cfg, tls)};
}

}  // namespace

located_master locate_master(boost::asio::io_context& io, const config& cfg) {
  if (cfg.store.kind == "sentinel") return sentinel_master(io, cfg);
  if (cfg.store.kind == "cluster") return cluster_master(io, cfg);
  throw std::invalid_argument("store.kind " + cfg.store.kind + " has no master locator");
}

}  // namespace baton
