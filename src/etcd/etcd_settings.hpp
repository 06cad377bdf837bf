// The etcd: section's settings and their accessor.
#pragma once

#include <string>
#include <vector>

#include "baton/config.hpp"

namespace baton {

/// The etcd: section (store.kind etcd): a key on an etcd lease, over etcd's
/// JSON gateway (src/etcd).
struct etcd_settings {
  /// Client URLs of the cluster's members, http:// or https:// (one scheme
  /// for all), no user-info. From a flag or variable, separated by commas or
  /// spaces.
  std::vector<std::string> endpoints;
  /// Put before the election's name in every key: <prefix><election>/lease,
  /// /fence, /record.
  std::string prefix = "baton/";
  /// The etcd user ("" = etcd's auth is off); its password is the first line
  /// of password_file, read at every authentication.
  std::string username;
  std::string password_file;
  /// For https:// endpoints: the members' CA ("" = the system's trust
  /// store), and a client certificate with its key ("" = none).
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  milliseconds connect_timeout{1000};
  /// For one call; 0 = derived: min(1s, lease.renew_interval / 2).
  milliseconds command_timeout{0};
};

/// The settings of the etcd: section in `cfg`.
inline etcd_settings& etcd_settings_of(config& cfg) {
  return cfg.kinds.get<etcd_settings>();
}
inline const etcd_settings& etcd_settings_of(const config& cfg) {
  return cfg.kinds.get<etcd_settings>();
}

}  // namespace baton
