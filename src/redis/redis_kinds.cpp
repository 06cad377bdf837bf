// The redis, sentinel and cluster kinds: what their options mean, how their
// store is made and how `check-store` checks it.
#include "redis_kinds.hpp"

#include <memory>
#include <utility>

#include "baton/redis_settings.hpp"
#include "config_schema/option_rules.hpp"
#include "master_locators.hpp"
#include "redis_option_rows.hpp"
#include "redis_option_rules.hpp"
#include "redis_server_check.hpp"
#include "redis_store.hpp"

namespace baton {
namespace {

// Rules name this kind's options by its own rows.
using rules = option_rules_of<redis_detail::redis_option_rows, redis_detail::sentinel_option_rows,
                               redis_detail::cluster_option_rows>;

using store_check_detail::redis_server_settings;

// --- options -----------------------------------------------------------------

void validate_redis(const config& cfg) {
  redis_detail::check_redis_tls(cfg, {redis_settings_of(cfg).url}, "redis.url is not");
}

void validate_sentinel(const config& cfg) {
  redis_detail::check_sentinel_options(cfg);
  redis_detail::check_redis_tls(cfg, sentinel_settings_of(cfg).addresses,
                                "sentinel.addresses are not");
}

void validate_cluster(const config& cfg) {
  const auto& nodes = cluster_settings_of(cfg).nodes;
  redis_detail::check_url_list(cfg, nodes, true);
  redis_detail::check_redis_tls(cfg, nodes, "cluster.nodes are not");
}

void fill_redis_defaults(config& cfg, option_origins* origins) {
  auto& redis = redis_settings_of(cfg);
  if (redis.command_timeout.count() == 0) {
    redis.command_timeout = derived_command_timeout(cfg);
    rules::note_derived(cfg, origins, redis.command_timeout,
                 "default: min(1s, lease.renew_interval / 2)");
  }
  if (redis.replica_ack_timeout.count() == 0) {
    redis.replica_ack_timeout = redis.command_timeout / 2;
    rules::note_derived(cfg, origins, redis.replica_ack_timeout,
                        "default: redis.command_timeout / 2");
  }
}

// --- the store ---------------------------------------------------------------

// What the three kinds share: the redis: section's credentials, timeouts
// and replica acknowledgement.
redis_store_options redis_options(const config& cfg, redis_endpoint master) {
  const auto& redis = redis_settings_of(cfg);
  redis_store_options o;
  o.endpoint = std::move(master);
  o.password = redis.password;
  o.password_file = redis.password_file;
  o.connect_timeout = redis.connect_timeout;
  o.command_timeout = redis.command_timeout;
  o.identity = store_identity_of(cfg);
  o.ack.replicas = redis.replica_ack.replicas;
  o.ack.timeout = redis.replica_ack_timeout;
  return o;
}

std::unique_ptr<lease_store> make_redis_store(boost::asio::io_context& io, const config& cfg) {
  const auto& redis = redis_settings_of(cfg);
  // The password file is read again on every reconnect (the loader refuses
  // it beside the variable).
  return std::make_unique<redis_store>(
      io, redis_options(cfg, redis_endpoint_for(redis, redis.url)));
}

std::unique_ptr<lease_store> make_located_store(boost::asio::io_context& io, const config& cfg,
                                                const store_kind& kind) {
  auto located = locate_master(io, cfg);
  auto o = redis_options(cfg, std::move(located.master_template));
  o.locator = std::move(located.locator);
  o.replicated = true;
  o.sharded_pubsub = &kind == &cluster_kind;
  // Tested against Sentinel's failovers; a Cluster keeps the hold-back.
  o.acknowledged_promotion = &kind == &sentinel_kind && o.ack.replicas == 0;
  o.kind = kind.name;
  o.label = kind.label;
  return std::make_unique<redis_store>(io, std::move(o));
}

std::unique_ptr<lease_store> make_sentinel_store(boost::asio::io_context& io, const config& cfg) {
  return make_located_store(io, cfg, sentinel_kind);
}

std::unique_ptr<lease_store> make_cluster_store(boost::asio::io_context& io, const config& cfg) {
  return make_located_store(io, cfg, cluster_kind);
}

milliseconds redis_call_bound(const config& cfg) {
  const auto& redis = redis_settings_of(cfg);
  return redis.connect_timeout + redis.command_timeout;
}

milliseconds sentinel_call_bound(const config& cfg) {
  const auto& redis = redis_settings_of(cfg);
  // Each sentinel may be asked in turn before the master is reached.
  const auto sentinels = static_cast<int>(sentinel_settings_of(cfg).addresses.size());
  return (sentinels + 1) * (redis.connect_timeout + redis.command_timeout);
}

milliseconds cluster_call_bound(const config& cfg) {
  const auto& redis = redis_settings_of(cfg);
  // The slot map from a seed, the master, and a redirect or two.
  return 2 * redis.connect_timeout + 3 * redis.command_timeout;
}

// --- check-store -------------------------------------------------------------

void check_redis(boost::asio::io_context& io, const config& cfg,
                 std::function<void(check_report)> done) {
  store_check_detail::async_check_redis_server(
      io, store_check_detail::redis_server_settings_for(cfg, redis_settings_of(cfg).url),
      [done = std::move(done)](std::vector<check_line> lines) { done({std::move(lines)}); });
}

// Sentinel and Cluster: where the master is, said as the store will hear
// it, then that master checked as a located one.
void check_located(boost::asio::io_context& io, const config& cfg, bool cluster,
                   std::function<void(check_report)> done) {
  const auto& redis = redis_settings_of(cfg);
  auto located = locate_master(io, cfg);
  auto locator = located.locator;
  auto settings = store_check_detail::redis_server_settings_for(cfg, redis.url);
  settings.endpoint = located.master_template;
  if (!redis.password.empty()) settings.endpoint.password = redis.password;
  settings.located = true;
  settings.cluster = cluster;
  const std::string topic = cluster ? "slot map" : "sentinels";
  locator->async_locate([&io, locator, settings, topic, done = std::move(done)](
                            store_error error, redis_detail::master_address where) mutable {
    if (error) {
      locator->close();
      done({{{check_verdict::failure, topic, error.message()}}});
      return;
    }
    check_line source{check_verdict::ok, topic, locator->describe() + ": " + where.text()};
    settings.endpoint.host = where.host;
    settings.endpoint.port = where.port;
    store_check_detail::async_check_redis_server(
        io, settings, [locator, source, done](std::vector<check_line> lines) {
          locator->close();
          lines.insert(lines.begin(), source);
          done({std::move(lines)});
        });
  });
}

void check_sentinel(boost::asio::io_context& io, const config& cfg,
                    std::function<void(check_report)> done) {
  check_located(io, cfg, false, std::move(done));
}

void check_cluster(boost::asio::io_context& io, const config& cfg,
                   std::function<void(check_report)> done) {
  check_located(io, cfg, true, std::move(done));
}

constexpr std::string_view redis_sections[] = {"redis"};
constexpr std::string_view sentinel_sections[] = {"sentinel", "redis"};
constexpr std::string_view cluster_sections[] = {"cluster", "redis"};

}  // namespace

const store_kind redis_kind{
    .name = "redis",
    .label = "Redis",
    .options = redis_detail::redis_option_rows,
    .sections = redis_sections,
    .fill_derived_defaults = fill_redis_defaults,
    // The redis: section is read by four kinds; its form is checked once,
    // here.
    .check_form = redis_detail::check_redis_section_form,
    .validate = validate_redis,
    .resolve_secrets = redis_detail::resolve_redis_password,
    .make_store = make_redis_store,
    .check = check_redis,
    .call_bound = redis_call_bound,
    .password_sources =
        "BATON_REDIS_PASSWORD, redis.password_file or the URL in the file or environment",
    .password_flag_advice = "set BATON_REDIS_PASSWORD or use --redis-password-file FILE",
    .redis_era_status_names = true,
    .peer_confirmed_leadership = true,
};

const store_kind sentinel_kind{
    .name = "sentinel",
    .label = "Redis Sentinel",
    .options = redis_detail::sentinel_option_rows,
    .sections = sentinel_sections,
    .validate = validate_sentinel,
    .resolve_secrets = redis_detail::resolve_redis_password,
    .make_store = make_sentinel_store,
    .check = check_sentinel,
    .call_bound = sentinel_call_bound,
    .peer_confirmed_leadership = true,
};

const store_kind cluster_kind{
    .name = "cluster",
    .label = "Redis Cluster",
    .options = redis_detail::cluster_option_rows,
    .sections = cluster_sections,
    .validate = validate_cluster,
    .resolve_secrets = redis_detail::resolve_redis_password,
    .make_store = make_cluster_store,
    .check = check_cluster,
    .call_bound = cluster_call_bound,
    .peer_confirmed_leadership = true,
};

}  // namespace baton
