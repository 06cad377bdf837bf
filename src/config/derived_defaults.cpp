// Defaults that depend on other options (the lease timings scale with the
// ttl) or on the host (node_id), filled in after all sources are applied so
// that a ttl set on the command line also moves the derived timings.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string_view>

#include "baton/config_load.hpp"
#include "baton/store_registry.hpp"
#include "option_table.hpp"

namespace baton {
namespace {

constexpr std::size_t max_node_id = 128;
constexpr std::size_t suffix_length = 7;  // "-" and 6 hex digits

bool node_id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '@' || c == '-';
}

std::string hostname() {
  char buffer[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return {};
  return buffer;
}

}  // namespace

std::string default_node_id(const config& cfg) {
  std::string host = hostname();
  for (char& c : host) {
    if (!node_id_char(c)) c = '-';
  }
  if (host.empty()) host = "baton";
  if (host.size() > max_node_id - suffix_length) host.resize(max_node_id - suffix_length);

  // The suffix tells apart two batons on one host (or in containers sharing
  // a hostname) without changing on a restart, which would start new metric
  // series and make the old leader look like a stranger: a hash (FNV-1a) of
  // what two batons on one host cannot share, or would not compete with.
  std::uint64_t hash = 14695981039346656037ULL;
  const auto mix = [&hash](std::string_view part) {
    for (unsigned char c : part) {
      hash ^= c;
      hash *= 1099511628211ULL;
    }
    hash ^= 0xff;  // a separator no text holds, so ("ab","c") != ("a","bc")
    hash *= 1099511628211ULL;
  };
  mix(cfg.election);
  mix(cfg.socket.path);
  mix(cfg.http.listen);
  mix(std::to_string(::geteuid()));
  static constexpr char hex[] = "0123456789abcdef";
  std::string id = host + "-";
  for (std::size_t i = 1; i < suffix_length; ++i) {
    id += hex[(hash >> (60 - 4 * (i - 1))) & 0xf];
  }
  return id;
}

void fill_derived_defaults(config& cfg, option_origins* origins) {
  // Keyed by the table's name, as every other origin is.
  const auto note = [&cfg, origins](const auto& field, const char* how) {
    if (origins != nullptr) (*origins)[option_name(cfg, field)] = how;
  };
  lease_config& lease = cfg.lease;
  if (lease.renew_interval.count() == 0) {
    lease.renew_interval = lease.ttl / 3;
    note(lease.renew_interval, "default: lease.ttl / 3");
  }
  if (lease.renew_deadline.count() == 0) {
    lease.renew_deadline = lease.ttl * 2 / 3;
    note(lease.renew_deadline, "default: lease.ttl * 2 / 3");
  }
  if (lease.retry_interval.count() == 0) {
    lease.retry_interval = std::min(milliseconds{1000}, lease.renew_interval);
    note(lease.retry_interval, "default: min(1s, lease.renew_interval)");
  }
  if (lease.resign_cooldown.count() == 0) {
    lease.resign_cooldown = lease.ttl;
    note(lease.resign_cooldown, "default: lease.ttl");
  }
  if (lease.preempt_delay.count() == 0) {
    lease.preempt_delay = lease.ttl * 3;
    note(lease.preempt_delay, "default: lease.ttl * 3");
  }
  // Every kind's, whatever the kind, as check-config shows them.
  for (const store_kind* kind : store_kinds()) {
    if (kind->fill_derived_defaults != nullptr) kind->fill_derived_defaults(cfg, origins);
  }
  if (cfg.node_id.empty()) {
    cfg.node_id = default_node_id(cfg);
    note(cfg.node_id, "default: hostname and a hash of election, socket.path, http.listen and uid");
  }
}

}  // namespace baton
