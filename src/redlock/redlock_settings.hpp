// The redlock: section's settings (the masters) and their accessor; the
// masters' password, user, TLS files and timeouts are the redis: section's
// (baton/redis_settings.hpp).
#pragma once

#include <string>
#include <vector>

#include "baton/config.hpp"

namespace baton {

/// The redlock: section (store.kind redlock): N independent Redis masters.
struct redlock_settings {
  /// The masters' URLs (redis:// or unix://, no password: every master uses
  /// the redis: section's password): 3, 5 or 7. From a flag or variable, the
  /// URLs are separated by commas or spaces.
  std::vector<std::string> masters;
};

/// The settings of the redlock: section in `cfg`.
inline redlock_settings& redlock_settings_of(config& cfg) {
  return cfg.kinds.get<redlock_settings>();
}
inline const redlock_settings& redlock_settings_of(const config& cfg) {
  return cfg.kinds.get<redlock_settings>();
}

/// redlock.masters as single URLs: a list entry may hold several separated
/// by commas (as a flag or variable gives them); empty pieces dropped.
std::vector<std::string> redlock_master_urls(const redlock_settings& redlock);

/// The URLs whose servers hold the lease for `cfg`'s store kind: redis.url,
/// the sentinels, the cluster's seeds or the Redlock masters (none for a kind
/// not built on Redis). Here rather than beside the redis: settings because
/// redlock stands on the other Redis-based kinds, not they on it.
std::vector<std::string> redis_urls_in_use(const config& cfg);

}  // namespace baton
