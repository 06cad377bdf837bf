// The redis:, sentinel: and cluster: rows of the option table. Flags and
// variables are public names (config/baton.yaml, README): they never change
// once released. constexpr: built by the compiler, so no static initializer
// can see them half-made.
#include "redis_option_rows.hpp"

#include <optional>

#include "baton/redis_url.hpp"
#include "baton/redis_settings.hpp"

namespace baton::redis_detail {
namespace {

// redis.url as check-config shows it: the password masked; an unparseable
// URL is never echoed (it might hold a password).
std::string redacted_redis_url(const std::string& url) {
  try {
    return parse_redis_url(url).redacted();
  } catch (const std::exception&) {
    return "<invalid URL>";
  }
}

// The URL's password; none when it cannot be parsed (the rules say so).
std::string password_in_redis_url(const std::string& url) {
  try {
    return parse_redis_url(url).password;
  } catch (const config_error&) {
    return {};
  }
}

tls_verify& tls_verify_of(config& c) { return redis_settings_of(c).tls_verify; }
std::string_view spelled_tls_verify(const tls_verify& v) { return to_string(v); }

replica_ack_setting& replica_ack_of(config& c) { return redis_settings_of(c).replica_ack; }
std::optional<replica_ack_setting> read_replica_ack(const std::string& text) {
  const auto replicas = parse_replica_ack(text);
  if (!replicas) return std::nullopt;
  return replica_ack_setting{*replicas};
}
std::string spelled_replica_ack(const replica_ack_setting& ack) { return ack.text(); }

constexpr option_spec redis_rows[] = {
    {.key = "redis.url", .env = "BATON_REDIS_URL", .flag = "--redis-url", .placeholder = "URL",
     .help = "redis://host[:port][/db], rediss://... (TLS) or unix:///path[?db=N] (default "
             "redis://127.0.0.1:6379); no password",
     .field = secret_text_field{
         [](config& c) -> auto& { return redis_settings_of(c).url; }, redacted_redis_url,
         password_in_redis_url,
         "use BATON_REDIS_PASSWORD or redis.password_file"}},
    {.key = "redis.password", .env = "BATON_REDIS_PASSWORD",
     .help = "use BATON_REDIS_PASSWORD or redis.password_file",
     .field = text_field{[](config& c) -> auto& { return redis_settings_of(c).password; }},
     .secret = true},
    {.key = "redis.password_file", .env = "BATON_REDIS_PASSWORD_FILE",
     .flag = "--redis-password-file", .placeholder = "FILE",
     .help = "File whose first line is the Redis password",
     .field = text_field{[](config& c) -> auto& { return redis_settings_of(c).password_file; }}},
    {.key = "redis.username", .env = "BATON_REDIS_USERNAME", .flag = "--redis-username",
     .placeholder = "USER",
     .help = "ACL user to log in as (default: the URL's user, or Redis's default user)",
     .field = text_field{[](config& c) -> auto& { return redis_settings_of(c).username; }}},
    {.key = "redis.tls_verify", .env = "BATON_REDIS_TLS_VERIFY", .flag = "--redis-tls-verify",
     .placeholder = "MODE",
     .help = "rediss:// only: full (chain and server name, default), ca (chain only) or none",
     .field = word_field_of<tls_verify_of, parse_tls_verify, spelled_tls_verify>(
         "must be full (chain and server name), ca (chain only) or none")},
    {.key = "redis.tls_ca_file", .env = "BATON_REDIS_TLS_CA_FILE", .flag = "--redis-tls-ca-file",
     .placeholder = "FILE",
     .help = "PEM file of the CAs to trust (default: the system's trust store)",
     .field = text_field{[](config& c) -> auto& { return redis_settings_of(c).tls_ca_file; }}},
    {.key = "redis.tls_ca_dir", .env = "BATON_REDIS_TLS_CA_DIR", .flag = "--redis-tls-ca-dir",
     .placeholder = "DIR",
     .help = "Directory of hashed CA certificates to trust (c_rehash)",
     .field = text_field{[](config& c) -> auto& { return redis_settings_of(c).tls_ca_dir; }}},
    {.key = "redis.tls_cert_file", .env = "BATON_REDIS_TLS_CERT_FILE",
     .flag = "--redis-tls-cert-file", .placeholder = "FILE",
     .help = "Client certificate (PEM), for servers that demand one; needs redis.tls_key_file",
     .field = text_field{[](config& c) -> auto& { return redis_settings_of(c).tls_cert_file; }}},
    {.key = "redis.tls_key_file", .env = "BATON_REDIS_TLS_KEY_FILE",
     .flag = "--redis-tls-key-file", .placeholder = "FILE",
     .help = "The client certificate's private key (PEM, unencrypted)",
     .field = text_field{[](config& c) -> auto& { return redis_settings_of(c).tls_key_file; }}},
    {.key = "redis.tls_server_name", .env = "BATON_REDIS_TLS_SERVER_NAME",
     .flag = "--redis-tls-server-name", .placeholder = "NAME",
     .help = "Name (or IP address) the server's certificate must carry, also sent as SNI "
             "(default: the URL's host)",
     .field = text_field{[](config& c) -> auto& { return redis_settings_of(c).tls_server_name; }}},
    {.key = "redis.connect_timeout", .env = "BATON_REDIS_CONNECT_TIMEOUT",
     .flag = "--redis-connect-timeout", .placeholder = "DURATION",
     .help = "Time allowed to connect, the TLS handshake, AUTH and SELECT (default 1s)",
     .field = duration_field{
         [](config& c) -> auto& { return redis_settings_of(c).connect_timeout; }}},
    {.key = "redis.command_timeout", .env = "BATON_REDIS_COMMAND_TIMEOUT",
     .flag = "--redis-timeout", .placeholder = "DURATION",
     .help = "Time allowed for one reply (default min(1s, renew interval / 2))",
     .field = duration_field{
         [](config& c) -> auto& { return redis_settings_of(c).command_timeout; }},
     .zero_derives = true},

    {.key = "redis.replica_ack", .env = "BATON_REDIS_REPLICA_ACK", .flag = "--redis-replica-ack",
     .placeholder = "N",
     .help = "Replicas that must acknowledge (WAIT) each grant and renewal: off (default), a "
             "number, or all (every replica the master had when baton connected)",
     .field = word_field_of<replica_ack_of, read_replica_ack, spelled_replica_ack>(
         "must be off, all, or a number of replicas from 1 to 64")},
    {.key = "redis.replica_ack_timeout", .env = "BATON_REDIS_REPLICA_ACK_TIMEOUT",
     .flag = "--redis-replica-ack-timeout", .placeholder = "DURATION",
     .help = "How long the replicas' acknowledgement may take (default redis.command_timeout / 2)",
     .field = duration_field{
         [](config& c) -> auto& { return redis_settings_of(c).replica_ack_timeout; }},
     .zero_derives = true},
};

constexpr option_spec sentinel_rows[] = {
    {.key = "sentinel.addresses", .env = "BATON_SENTINEL_ADDRESSES", .flag = "--sentinel-addresses",
     .placeholder = "URLS",
     .help = "store.kind sentinel: the sentinels, redis:// or rediss:// URLs separated by commas "
             "(no password: sentinel.password_file)",
     .field = url_list_field{[](config& c) -> auto& { return sentinel_settings_of(c).addresses; }},
     .may_carry_credentials = true},
    {.key = "sentinel.master_name", .env = "BATON_SENTINEL_MASTER_NAME",
     .flag = "--sentinel-master-name", .placeholder = "NAME",
     .help = "The name the sentinels monitor the master under",
     .field = text_field{[](config& c) -> auto& { return sentinel_settings_of(c).master_name; }}},
    {.key = "sentinel.username", .env = "BATON_SENTINEL_USERNAME", .flag = "--sentinel-username",
     .placeholder = "USER", .help = "ACL user on the sentinels (default: Redis's default user)",
     .field = text_field{[](config& c) -> auto& { return sentinel_settings_of(c).username; }}},
    {.key = "sentinel.password_file", .env = "BATON_SENTINEL_PASSWORD_FILE",
     .flag = "--sentinel-password-file", .placeholder = "FILE",
     .help = "File whose first line is the sentinels' password",
     .field = text_field{[](config& c) -> auto& { return sentinel_settings_of(c).password_file; }}},
    {.key = "sentinel.tls_ca_file", .env = "BATON_SENTINEL_TLS_CA_FILE",
     .flag = "--sentinel-tls-ca-file", .placeholder = "FILE",
     .help = "CAs to trust for the sentinels (default: redis.tls_ca_file)",
     .field = text_field{[](config& c) -> auto& { return sentinel_settings_of(c).tls_ca_file; }}},
    {.key = "sentinel.tls_cert_file", .env = "BATON_SENTINEL_TLS_CERT_FILE",
     .flag = "--sentinel-tls-cert-file", .placeholder = "FILE",
     .help = "Client certificate for the sentinels (default: redis.tls_cert_file)",
     .field = text_field{[](config& c) -> auto& { return sentinel_settings_of(c).tls_cert_file; }}},
    {.key = "sentinel.tls_key_file", .env = "BATON_SENTINEL_TLS_KEY_FILE",
     .flag = "--sentinel-tls-key-file", .placeholder = "FILE",
     .help = "Its private key (default: redis.tls_key_file)",
     .field = text_field{[](config& c) -> auto& { return sentinel_settings_of(c).tls_key_file; }}},
    {.key = "sentinel.check_interval", .env = "BATON_SENTINEL_CHECK_INTERVAL",
     .flag = "--sentinel-check-interval", .placeholder = "DURATION",
     .help = "How often the master's address is asked again besides switch messages (default "
             "1s; 0 = never)",
     .field = duration_field{
         [](config& c) -> auto& { return sentinel_settings_of(c).check_interval; }}},
};

constexpr option_spec cluster_rows[] = {
    {.key = "cluster.nodes", .env = "BATON_CLUSTER_NODES", .flag = "--cluster-nodes",
     .placeholder = "URLS",
     .help = "store.kind cluster: some of the cluster's nodes, redis:// or rediss:// URLs "
             "separated by commas (no password, no db)",
     .field = url_list_field{[](config& c) -> auto& { return cluster_settings_of(c).nodes; }},
     .may_carry_credentials = true},
};

}  // namespace

std::span<const option_spec> redis_option_rows() { return redis_rows; }
std::span<const option_spec> sentinel_option_rows() { return sentinel_rows; }
std::span<const option_spec> cluster_option_rows() { return cluster_rows; }

}  // namespace baton::redis_detail
