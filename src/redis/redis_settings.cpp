// redis_endpoint_for: the one place where the redis: section's user and TLS
// options meet a URL; and redis.replica_ack's words.
#include "baton/redis_settings.hpp"

#include <charconv>

namespace baton {

redis_endpoint redis_endpoint_for(const redis_settings& redis, const std::string& url) {
  redis_endpoint e = parse_redis_url(url);
  if (!redis.username.empty()) e.username = redis.username;
  auto& tls = e.tls_settings;
  tls.ca_file = redis.tls_ca_file;
  tls.ca_dir = redis.tls_ca_dir;
  tls.cert_file = redis.tls_cert_file;
  tls.key_file = redis.tls_key_file;
  tls.server_name = redis.tls_server_name.empty() ? e.host : redis.tls_server_name;
  tls.verify = redis.tls_verify;
  return e;
}

std::optional<int> parse_replica_ack(const std::string& text) {
  if (text == "off") return -1;
  if (text == "all") return 0;
  int n = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc() || ptr != end || n < 1 || n > 64) return std::nullopt;
  return n;
}

}  // namespace baton
