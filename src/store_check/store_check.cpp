// async_check_store: which servers to check for the configured kind, and the
// Redlock summary (how many masters answer against the majority it needs).
// Endpoints are built exactly as make_lease_store builds them.
#include "baton/store_check.hpp"

#include <memory>

#include "baton/config_load.hpp"
#include "baton/redis_settings.hpp"
#include "postgres_check.hpp"
#include "redis_server_check.hpp"
#include "store_factory/master_locators.hpp"

namespace baton {
namespace {

using store_check_detail::redis_server_settings;

redis_server_settings settings_for(const config& cfg, const std::string& url) {
  redis_server_settings s;
  s.endpoint = redis_endpoint_for(cfg.redis, url);
  if (!cfg.redis.password.empty()) s.endpoint.password = cfg.redis.password;
  s.password_file = cfg.redis.password_file;
  s.connect_timeout = cfg.redis.connect_timeout;
  s.command_timeout = cfg.redis.command_timeout;
  s.identity = {cfg.election, cfg.node_id, cfg.lease.ttl};
  s.redlock_master = cfg.store.kind == "redlock";
  s.replica_ack = cfg.redis.replica_ack.replicas;
  return s;
}

// Collects the masters' lines in their order, then adds the quorum line.
struct redlock_check {
  std::vector<std::vector<check_line>> per_master;
  std::vector<std::string> names;
  std::size_t left = 0;
  std::function<void(check_report)> done;

  void finish() {
    check_report report;
    std::size_t reachable = 0;
    for (std::size_t i = 0; i < per_master.size(); ++i) {
      const bool up = !per_master[i].empty() && per_master[i].front().topic == "reachable" &&
                      per_master[i].front().verdict != check_verdict::failure;
      if (up) ++reachable;
      for (auto line : per_master[i]) {
        line.topic = "master " + std::to_string(i + 1) + " " + line.topic;
        report.lines.push_back(std::move(line));
      }
    }
    const std::size_t n = per_master.size();
    const std::size_t majority = n / 2 + 1;
    // A master that cannot be reached costs nothing while a majority answers:
    // the election works, one loss closer to stopping.
    if (reachable >= majority) {
      for (auto& line : report.lines) {
        if (line.verdict == check_verdict::failure && line.topic.ends_with(" reachable")) {
          line.verdict = check_verdict::hazard;
        }
      }
    }
    check_line quorum{check_verdict::ok, "quorum",
                      std::to_string(reachable) + " of " + std::to_string(n) +
                          " masters answer; a grant needs " + std::to_string(majority)};
    if (reachable < majority) {
      quorum.verdict = check_verdict::failure;
      quorum.text += ": no majority, nobody can lead";
    } else if (reachable < n) {
      quorum.verdict = check_verdict::hazard;
      quorum.text += ": " + std::to_string(reachable - majority) +
                     " more lost and nobody can lead";
    }
    report.lines.push_back(std::move(quorum));
    done(std::move(report));
  }
};

// Sentinel and Cluster: where the master is, said as the store will hear
// it, then that master checked as a located one.
void check_located(boost::asio::io_context& io, const config& cfg,
                   std::function<void(check_report)> done) {
  auto located = locate_master(io, cfg);
  auto locator = located.locator;
  auto settings = settings_for(cfg, cfg.redis.url);
  settings.endpoint = located.master_template;
  if (!cfg.redis.password.empty()) settings.endpoint.password = cfg.redis.password;
  settings.located = true;
  settings.cluster = cfg.store.kind == "cluster";
  const std::string topic = settings.cluster ? "slot map" : "sentinels";
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

}  // namespace

void async_check_store(boost::asio::io_context& io, const config& cfg,
                       std::function<void(check_report)> done) {
  if (cfg.store.kind == "sentinel" || cfg.store.kind == "cluster") {
    check_located(io, cfg, std::move(done));
    return;
  }
  if (cfg.store.kind == "redis") {
    store_check_detail::async_check_redis_server(
        io, settings_for(cfg, cfg.redis.url),
        [done = std::move(done)](std::vector<check_line> lines) { done({std::move(lines)}); });
    return;
  }
  if (cfg.store.kind == "redlock") {
    auto check = std::make_shared<redlock_check>();
    const auto& urls = cfg.redlock.masters;
    check->per_master.resize(urls.size());
    check->left = urls.size();
    check->done = std::move(done);
    for (std::size_t i = 0; i < urls.size(); ++i) {
      store_check_detail::async_check_redis_server(
          io, settings_for(cfg, urls[i]), [check, i](std::vector<check_line> lines) {
            check->per_master[i] = std::move(lines);
            if (--check->left == 0) check->finish();
          });
    }
    return;
  }
  store_check_detail::async_check_postgres(io, cfg, std::move(done));
}

}  // namespace baton
