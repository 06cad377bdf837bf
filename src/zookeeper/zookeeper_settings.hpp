// The zookeeper: section's settings and their accessor.
#pragma once

#include <string>
#include <vector>

#include "baton/config.hpp"

namespace baton {

/// The zookeeper: section (store.kind zookeeper): an ephemeral lease node and a
/// record per election (src/zookeeper).
struct zookeeper_settings {
  /// The ensemble's client addresses, host:port each (IPv6 as [addr]:port),
  /// no chroot. From a flag or variable, separated by commas or spaces.
  std::vector<std::string> servers;
  /// The node under which each election has its own: <path>/<election>/lease
  /// and /record.
  std::string path = "/baton";
  /// The session timeout asked for; 0 = lease.ttl. The server must grant at
  /// least the ttl, or the store refuses to lead.
  milliseconds session_timeout{0};
  /// Digest authentication ("" = none); the password is the first line of
  /// password_file.
  std::string username;
  std::string password_file;
  milliseconds connect_timeout{2000};
  /// For one request's answer; 0 = derived: min(1s, lease.renew_interval / 2).
  milliseconds command_timeout{0};
};

/// The settings of the zookeeper: section in `cfg`.
inline zookeeper_settings& zookeeper_settings_of(config& cfg) {
  return cfg.kinds.get<zookeeper_settings>();
}
inline const zookeeper_settings& zookeeper_settings_of(const config& cfg) {
  return cfg.kinds.get<zookeeper_settings>();
}

}  // namespace baton
