// The redlock kind: N independent Redis masters (redlock: section, plus the
// redis: section's password, user, TLS and timeouts). What its options mean,
// how its store is made and how `check-store` checks every master.
#include "redlock_kind.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>

#include "baton/redis_settings.hpp"
#include "redis/redis_option_rules.hpp"
#include "redis/redis_server_check.hpp"
#include "redlock_option_rows.hpp"
#include "redlock_store.hpp"
#include "redlock_settings.hpp"

namespace baton {
namespace {

// --- options -----------------------------------------------------------------

// Odd, so that two majorities always share a master; at most 7, since every
// round goes to all of them.
void check_redlock_masters(const config& cfg) {
  const std::string option = "redlock.masters";
  const auto& urls = redlock_settings_of(cfg).masters;
  if (urls.size() != 3 && urls.size() != 5 && urls.size() != 7) {
    throw config_error::with_message(
        option, option + ": store.kind redlock needs 3, 5 or 7 master URLs, got " +
                    std::to_string(urls.size()) +
                    " (an odd number, so that any two majorities share a master)");
  }
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < urls.size(); ++i) {
    const std::string entry = option + ": master " + std::to_string(i + 1);
    const redis_endpoint e = redis_detail::parse_list_entry(option, entry, urls[i]);
    if (!e.password.empty()) {
      throw config_error::with_message(
          option, entry + " (" + e.redacted() + ") carries a password: every master uses "
                      "redis.password_file or BATON_REDIS_PASSWORD, never a URL");
    }
    auto where = e.redacted();
    if (std::find(seen.begin(), seen.end(), where) != seen.end()) {
      throw config_error::with_message(option, entry + " (" + where + ") is listed twice: a "
                                                                       "majority needs distinct masters");
    }
    seen.push_back(std::move(where));
  }
}

void validate_redlock(const config& cfg) {
  check_redlock_masters(cfg);
  redis_detail::check_redis_tls(cfg, redlock_settings_of(cfg).masters,
                                "no master in redlock.masters is");
}

// --- the store ---------------------------------------------------------------

std::unique_ptr<lease_store> make_redlock_store(boost::asio::io_context& io, const config& cfg) {
  const auto& redis = redis_settings_of(cfg);
  redlock_store_options o;
  for (const auto& url : redlock_settings_of(cfg).masters) {
    o.masters.push_back(redis_endpoint_for(redis, url));
  }
  o.password = redis.password;
  // Read again on every reconnect (the loader refuses it beside the variable).
  o.password_file = redis.password_file;
  o.connect_timeout = redis.connect_timeout;
  o.command_timeout = redis.command_timeout;
  o.identity = store_identity_of(cfg);
  o.drift = lease_drift(cfg.lease);
  return std::make_unique<redlock_store>(io, std::move(o));
}

milliseconds redlock_call_bound(const config& cfg) {
  const auto& redis = redis_settings_of(cfg);
  // The masters answer in parallel; an acquire is two rounds.
  return redis.connect_timeout + 2 * redis.command_timeout;
}

// --- check-store -------------------------------------------------------------

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

void check_redlock(boost::asio::io_context& io, const config& cfg,
                   std::function<void(check_report)> done) {
  auto check = std::make_shared<redlock_check>();
  const auto& urls = redlock_settings_of(cfg).masters;
  check->per_master.resize(urls.size());
  check->left = urls.size();
  check->done = std::move(done);
  for (std::size_t i = 0; i < urls.size(); ++i) {
    auto settings = store_check_detail::redis_server_settings_for(cfg, urls[i]);
    settings.redlock_master = true;
    store_check_detail::async_check_redis_server(
        io, std::move(settings), [check, i](std::vector<check_line> lines) {
          check->per_master[i] = std::move(lines);
          if (--check->left == 0) check->finish();
        });
  }
}

constexpr std::string_view redlock_sections[] = {"redlock", "redis"};

}  // namespace

const store_kind redlock_kind{
    .name = "redlock",
    .label = "Redlock",
    .options = redlock_option_rows,
    .sections = redlock_sections,
    .validate = validate_redlock,
    .resolve_secrets = redis_detail::resolve_redis_password,
    .make_store = make_redlock_store,
    .check = check_redlock,
    .call_bound = redlock_call_bound,
    .peer_confirmed_leadership = true,
};

}  // namespace baton
