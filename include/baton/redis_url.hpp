// Where Redis is and how to log in: parsed from redis.url. TCP today, a Unix
// socket, and room for TLS (rediss://) later without changing callers.
#pragma once

#include <string>

namespace baton {

struct redis_endpoint {
  enum class transport { tcp, unix_socket };
  transport kind = transport::tcp;
  std::string host = "127.0.0.1";  ///< tcp only
  unsigned short port = 6379;      ///< tcp only
  std::string path;                ///< unix_socket only
  int db = 0;                      ///< SELECT db after connecting (0 = none sent)
  std::string username;            ///< ACL user from the URL ("" = default user)
  std::string password;            ///< secret from the URL user-info ("" = none)

  /// The URL with any password replaced by "***", for logs and check-config.
  std::string redacted() const;
};

/// Parses `redis://[[user]:password@]host[:port][/db]` and
/// `unix:///path[?db=N]`. Throws config_error naming redis.url on bad input.
redis_endpoint parse_redis_url(const std::string& url);

}  // namespace baton
