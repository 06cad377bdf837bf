// Where Redis is and how to log in: parsed from redis.url. TCP, TLS over TCP
// (rediss://) or a Unix socket. The TLS settings come from the redis.tls_*
// options, not from the URL; the store factory puts them beside it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "baton/config.hpp"

namespace baton {

/// How a TLS connection checks the server (redis.tls_verify).
enum class tls_verify {
  full,  ///< the chain up to a trusted CA, and the server's name or IP address
  ca,    ///< the chain only: for managed certificates that name no usable host
  none,  ///< nothing: encryption without authentication (must be spelled out)
};

/// The redis.tls_* options. Files are read on every connection attempt, so a
/// rotated certificate or CA is picked up at the next reconnect.
struct redis_tls_settings {
  std::string ca_file;      ///< PEM bundle of trusted CAs ("" = see ca_dir)
  std::string ca_dir;       ///< directory of hashed CA certificates ("" = see ca_file)
  std::string cert_file;    ///< client certificate (PEM), for servers that demand one
  std::string key_file;     ///< its private key (PEM)
  std::string server_name;  ///< the name to verify and send as SNI ("" = the URL's host)
  tls_verify verify = tls_verify::full;
  // Neither ca_file nor ca_dir: the system's default trust store.

  /// The options that set (or would set) the files above, for error
  /// messages: the sentinels' files are sentinel.* or inherited redis.* ones.
  struct option_names {
    std::string ca_file = "redis.tls_ca_file";
    std::string cert_file = "redis.tls_cert_file";
    std::string key_file = "redis.tls_key_file";
  };
  option_names options;
};

struct redis_endpoint {
  enum class transport { tcp, unix_socket };
  transport kind = transport::tcp;
  std::string host = "127.0.0.1";  ///< tcp only
  unsigned short port = 6379;      ///< tcp only
  bool tls = false;                ///< tcp only: rediss://
  redis_tls_settings tls_settings; ///< used when tls
  std::string path;                ///< unix_socket only
  int db = 0;                      ///< SELECT db after connecting (0 = none sent)
  std::string username;            ///< ACL user from the URL ("" = default user)
  std::string password;            ///< secret from the URL user-info ("" = none)

  /// The URL with any password replaced by "***", for logs and check-config.
  std::string redacted() const;
};

/// "full", "ca" or "none".
const char* to_string(tls_verify v);
/// redis.tls_verify as written: full, ca or none (exactly); nullopt otherwise.
std::optional<tls_verify> parse_tls_verify(std::string_view text);

/// Parses `redis://[[user]:password@]host[:port][/db]`, the same with
/// `rediss://` (TLS), and `unix:///path[?db=N]`. Throws config_error naming redis.url on bad input.
redis_endpoint parse_redis_url(const std::string& url);

}  // namespace baton
