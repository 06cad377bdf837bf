// The table itself (see option_table.hpp for why it exists). The order is
// check-config's; flags and variables are the public names documented in
// config/baton.yaml and the README, so they never change once released.
#include "option_table.hpp"

#include "baton/store_kind.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace baton {
namespace {

// constexpr: built by the compiler, so no static initializer can see it
// half-made. child.command has no variable and no flag: on the command line
// it is the words after `--` (parse_invocation). The password has no flag on
// purpose: argv is visible to every user of the host.
constexpr option_spec table[] = {
    {.key = "election", .env = "BATON_ELECTION", .flag = "--election", .placeholder = "NAME",
     .help = "Election name; candidates with the same name compete (required)",
     .field = text_field{[](config& c) -> auto& { return c.election; }}},
    {.key = "node_id", .env = "BATON_NODE_ID", .flag = "--node-id", .placeholder = "ID",
     .help = "This candidate's id (default: hostname-<6 hex of a hash of election, socket, "
             "http.listen and uid>)",
     .field = text_field{[](config& c) -> auto& { return c.node_id; }}},

    {.key = "store.kind", .env = "BATON_STORE_KIND", .flag = "--store-kind", .placeholder = "KIND",
     .help = "Which store holds the lease: redis, sentinel, cluster, redlock or postgres "
             "(default redis)",
     .field = text_field{[](config& c) -> auto& { return c.store.kind; }}},

    {.key = "redis.url", .env = "BATON_REDIS_URL", .flag = "--redis-url", .placeholder = "URL",
     .help = "redis://host[:port][/db], rediss://... (TLS) or unix:///path[?db=N] (default "
             "redis://127.0.0.1:6379); no password",
     .field = redis_url_field{[](config& c) -> auto& { return c.redis.url; }}},
    {.key = "redis.password", .env = "BATON_REDIS_PASSWORD",
     .help = "use BATON_REDIS_PASSWORD or redis.password_file",
     .field = text_field{[](config& c) -> auto& { return c.redis.password; }},
     .secret = true},
    {.key = "redis.password_file", .env = "BATON_REDIS_PASSWORD_FILE",
     .flag = "--redis-password-file", .placeholder = "FILE",
     .help = "File whose first line is the Redis password",
     .field = text_field{[](config& c) -> auto& { return c.redis.password_file; }}},
    {.key = "redis.username", .env = "BATON_REDIS_USERNAME", .flag = "--redis-username",
     .placeholder = "USER",
     .help = "ACL user to log in as (default: the URL's user, or Redis's default user)",
     .field = text_field{[](config& c) -> auto& { return c.redis.username; }}},
    {.key = "redis.tls_verify", .env = "BATON_REDIS_TLS_VERIFY", .flag = "--redis-tls-verify",
     .placeholder = "MODE",
     .help = "rediss:// only: full (chain and server name, default), ca (chain only) or none",
     .field = tls_verify_field{[](config& c) -> auto& { return c.redis.tls_verify; }}},
    {.key = "redis.tls_ca_file", .env = "BATON_REDIS_TLS_CA_FILE", .flag = "--redis-tls-ca-file",
     .placeholder = "FILE",
     .help = "PEM file of the CAs to trust (default: the system's trust store)",
     .field = text_field{[](config& c) -> auto& { return c.redis.tls_ca_file; }}},
    {.key = "redis.tls_ca_dir", .env = "BATON_REDIS_TLS_CA_DIR", .flag = "--redis-tls-ca-dir",
     .placeholder = "DIR",
     .help = "Directory of hashed CA certificates to trust (c_rehash)",
     .field = text_field{[](config& c) -> auto& { return c.redis.tls_ca_dir; }}},
    {.key = "redis.tls_cert_file", .env = "BATON_REDIS_TLS_CERT_FILE",
     .flag = "--redis-tls-cert-file", .placeholder = "FILE",
     .help = "Client certificate (PEM), for servers that demand one; needs redis.tls_key_file",
     .field = text_field{[](config& c) -> auto& { return c.redis.tls_cert_file; }}},
    {.key = "redis.tls_key_file", .env = "BATON_REDIS_TLS_KEY_FILE",
     .flag = "--redis-tls-key-file", .placeholder = "FILE",
     .help = "The client certificate's private key (PEM, unencrypted)",
     .field = text_field{[](config& c) -> auto& { return c.redis.tls_key_file; }}},
    {.key = "redis.tls_server_name", .env = "BATON_REDIS_TLS_SERVER_NAME",
     .flag = "--redis-tls-server-name", .placeholder = "NAME",
     .help = "Name (or IP address) the server's certificate must carry, also sent as SNI "
             "(default: the URL's host)",
     .field = text_field{[](config& c) -> auto& { return c.redis.tls_server_name; }}},
    {.key = "redis.connect_timeout", .env = "BATON_REDIS_CONNECT_TIMEOUT",
     .flag = "--redis-connect-timeout", .placeholder = "DURATION",
     .help = "Time allowed to connect, the TLS handshake, AUTH and SELECT (default 1s)",
     .field = duration_field{[](config& c) -> auto& { return c.redis.connect_timeout; }}},
    {.key = "redis.command_timeout", .env = "BATON_REDIS_COMMAND_TIMEOUT",
     .flag = "--redis-timeout", .placeholder = "DURATION",
     .help = "Time allowed for one reply (default min(1s, renew interval / 2))",
     .field = duration_field{[](config& c) -> auto& { return c.redis.command_timeout; }},
     .zero_derives = true},

    {.key = "redis.replica_ack", .env = "BATON_REDIS_REPLICA_ACK", .flag = "--redis-replica-ack",
     .placeholder = "N",
     .help = "Replicas that must acknowledge (WAIT) each grant and renewal: off (default), a "
             "number, or all (every replica the master had when baton connected)",
     .field = replica_ack_field{[](config& c) -> auto& { return c.redis.replica_ack; }}},
    {.key = "redis.replica_ack_timeout", .env = "BATON_REDIS_REPLICA_ACK_TIMEOUT",
     .flag = "--redis-replica-ack-timeout", .placeholder = "DURATION",
     .help = "How long the replicas' acknowledgement may take (default redis.command_timeout / 2)",
     .field = duration_field{[](config& c) -> auto& { return c.redis.replica_ack_timeout; }},
     .zero_derives = true},

    {.key = "sentinel.addresses", .env = "BATON_SENTINEL_ADDRESSES", .flag = "--sentinel-addresses",
     .placeholder = "URLS",
     .help = "store.kind sentinel: the sentinels, redis:// or rediss:// URLs separated by commas "
             "(no password: sentinel.password_file)",
     .field = url_list_field{[](config& c) -> auto& { return c.sentinel.addresses; }},
     .may_carry_credentials = true},
    {.key = "sentinel.master_name", .env = "BATON_SENTINEL_MASTER_NAME",
     .flag = "--sentinel-master-name", .placeholder = "NAME",
     .help = "The name the sentinels monitor the master under",
     .field = text_field{[](config& c) -> auto& { return c.sentinel.master_name; }}},
    {.key = "sentinel.username", .env = "BATON_SENTINEL_USERNAME", .flag = "--sentinel-username",
     .placeholder = "USER", .help = "ACL user on the sentinels (default: Redis's default user)",
     .field = text_field{[](config& c) -> auto& { return c.sentinel.username; }}},
    {.key = "sentinel.password_file", .env = "BATON_SENTINEL_PASSWORD_FILE",
     .flag = "--sentinel-password-file", .placeholder = "FILE",
     .help = "File whose first line is the sentinels' password",
     .field = text_field{[](config& c) -> auto& { return c.sentinel.password_file; }}},
    {.key = "sentinel.tls_ca_file", .env = "BATON_SENTINEL_TLS_CA_FILE",
     .flag = "--sentinel-tls-ca-file", .placeholder = "FILE",
     .help = "CAs to trust for the sentinels (default: redis.tls_ca_file)",
     .field = text_field{[](config& c) -> auto& { return c.sentinel.tls_ca_file; }}},
    {.key = "sentinel.tls_cert_file", .env = "BATON_SENTINEL_TLS_CERT_FILE",
     .flag = "--sentinel-tls-cert-file", .placeholder = "FILE",
     .help = "Client certificate for the sentinels (default: redis.tls_cert_file)",
     .field = text_field{[](config& c) -> auto& { return c.sentinel.tls_cert_file; }}},
    {.key = "sentinel.tls_key_file", .env = "BATON_SENTINEL_TLS_KEY_FILE",
     .flag = "--sentinel-tls-key-file", .placeholder = "FILE",
     .help = "Its private key (default: redis.tls_key_file)",
     .field = text_field{[](config& c) -> auto& { return c.sentinel.tls_key_file; }}},
    {.key = "sentinel.check_interval", .env = "BATON_SENTINEL_CHECK_INTERVAL",
     .flag = "--sentinel-check-interval", .placeholder = "DURATION",
     .help = "How often the master's address is asked again besides switch messages (default "
             "1s; 0 = never)",
     .field = duration_field{[](config& c) -> auto& { return c.sentinel.check_interval; }}},

    {.key = "cluster.nodes", .env = "BATON_CLUSTER_NODES", .flag = "--cluster-nodes",
     .placeholder = "URLS",
     .help = "store.kind cluster: some of the cluster's nodes, redis:// or rediss:// URLs "
             "separated by commas (no password, no db)",
     .field = url_list_field{[](config& c) -> auto& { return c.cluster.nodes; }},
     .may_carry_credentials = true},

    {.key = "redlock.masters", .env = "BATON_REDLOCK_MASTERS", .flag = "--redlock-masters",
     .placeholder = "URLS",
     .help = "store.kind redlock: the 3, 5 or 7 independent Redis masters, redis:// or unix:// "
             "URLs separated by commas (no password: redis.password_file serves them all)",
     .field = url_list_field{[](config& c) -> auto& { return c.redlock.masters; }},
     .may_carry_credentials = true},

    {.key = "postgres.url", .env = "BATON_POSTGRES_URL", .flag = "--postgres-url",
     .placeholder = "URL",
     .help = "libpq connection string or URI (default postgresql://127.0.0.1:5432/postgres); "
             "no password",
     .field = postgres_url_field{[](config& c) -> auto& { return c.postgres.url; }}},
    {.key = "postgres.password", .env = "BATON_POSTGRES_PASSWORD",
     .help = "use BATON_POSTGRES_PASSWORD or postgres.password_file",
     .field = text_field{[](config& c) -> auto& { return c.postgres.password; }},
     .secret = true},
    {.key = "postgres.password_file", .env = "BATON_POSTGRES_PASSWORD_FILE",
     .flag = "--postgres-password-file", .placeholder = "FILE",
     .help = "File whose first line is the PostgreSQL password",
     .field = text_field{[](config& c) -> auto& { return c.postgres.password_file; }}},
    {.key = "postgres.table", .env = "BATON_POSTGRES_TABLE", .flag = "--postgres-table",
     .placeholder = "NAME", .help = "Lease table, name or schema.name (default baton_lease)",
     .field = text_field{[](config& c) -> auto& { return c.postgres.table; }}},
    {.key = "postgres.create_schema", .env = "BATON_POSTGRES_CREATE_SCHEMA",
     .flag = "--postgres-create-schema",
     .help = "Create the lease table and sequence on first use when missing (default true)",
     .field = boolean_field{[](config& c) -> auto& { return c.postgres.create_schema; }}},
    {.key = "postgres.connect_timeout", .env = "BATON_POSTGRES_CONNECT_TIMEOUT",
     .flag = "--postgres-connect-timeout", .placeholder = "DURATION",
     .help = "Time allowed to connect, authenticate and set the session up (default 1s)",
     .field = duration_field{[](config& c) -> auto& { return c.postgres.connect_timeout; }}},
    {.key = "postgres.command_timeout", .env = "BATON_POSTGRES_COMMAND_TIMEOUT",
     .flag = "--postgres-timeout", .placeholder = "DURATION",
     .help = "Time allowed for one statement (default min(1s, renew interval / 2))",
     .field = duration_field{[](config& c) -> auto& { return c.postgres.command_timeout; }},
     .zero_derives = true},

    {.key = "lease.ttl", .env = "BATON_LEASE_TTL", .flag = "--ttl", .placeholder = "DURATION",
     .help = "Lease lifetime without renewal (default 10s)",
     .field = duration_field{[](config& c) -> auto& { return c.lease.ttl; }}},
    {.key = "lease.renew_interval", .env = "BATON_LEASE_RENEW_INTERVAL", .flag = "--renew-interval",
     .placeholder = "DURATION", .help = "How often the leader renews (default ttl / 3)",
     .field = duration_field{[](config& c) -> auto& { return c.lease.renew_interval; }},
     .zero_derives = true},
    {.key = "lease.renew_deadline", .env = "BATON_LEASE_RENEW_DEADLINE", .flag = "--renew-deadline",
     .placeholder = "DURATION",
     .help = "How long the leader tries to renew before stopping its app (default ttl * 2 / 3)",
     .field = duration_field{[](config& c) -> auto& { return c.lease.renew_deadline; }},
     .zero_derives = true},
    {.key = "lease.retry_interval", .env = "BATON_LEASE_RETRY_INTERVAL", .flag = "--retry-interval",
     .placeholder = "DURATION", .help = "How often a standby retries (default min(1s, renew interval))",
     .field = duration_field{[](config& c) -> auto& { return c.lease.retry_interval; }},
     .zero_derives = true},
    {.key = "lease.drift_factor", .env = "BATON_LEASE_DRIFT_FACTOR", .flag = "--drift-factor",
     .placeholder = "FRACTION",
     .help = "Share of the ttl assumed lost to clock drift, 0 to <0.5 (default 0.01)",
     .field = number_field{[](config& c) -> auto& { return c.lease.drift_factor; }}},
    // Read when the next stop begins.
    {.key = "lease.resign_cooldown", .env = "BATON_LEASE_RESIGN_COOLDOWN", .flag = "--resign-cooldown",
     .placeholder = "DURATION",
     .help = "After `baton resign`, how long this node stays out of the election (default ttl)",
     .field = duration_field{[](config& c) -> auto& { return c.lease.resign_cooldown; }},
     .reloadable = true,
     .zero_derives = true},

    // Hooks are read when they next run.
    {.key = "hooks.on_start", .env = "BATON_HOOKS_ON_START", .flag = "--on-start", .placeholder = "ARGV",
     .help = "Command run on becoming leader: JSON array of strings or words (no shell)",
     .field = argv_field{[](config& c) -> auto& { return c.hooks.on_start; }},
     .reloadable = true},
    {.key = "hooks.on_stop", .env = "BATON_HOOKS_ON_STOP", .flag = "--on-stop", .placeholder = "ARGV",
     .help = "Command run on ceasing to lead: JSON array of strings or words (no shell)",
     .field = argv_field{[](config& c) -> auto& { return c.hooks.on_stop; }},
     .reloadable = true},
    {.key = "hooks.timeout", .env = "BATON_HOOKS_TIMEOUT", .flag = "--hook-timeout",
     .placeholder = "DURATION", .help = "Longest a hook may run (default 30s)",
     .field = duration_field{[](config& c) -> auto& { return c.hooks.timeout; }},
     .reloadable = true},

    {.key = "child.command", .help = "The supervised command: baton run [options] -- CMD ARGS...",
     .field = argv_field{[](config& c) -> auto& { return c.child.command; }}},
    // Read when the next stop begins.
    {.key = "child.stop_timeout", .env = "BATON_CHILD_STOP_TIMEOUT", .flag = "--stop-timeout",
     .placeholder = "DURATION", .help = "Time between SIGTERM and SIGKILL for the child (default 10s)",
     .field = duration_field{[](config& c) -> auto& { return c.child.stop_timeout; }},
     .reloadable = true},
    {.key = "child.on_exit", .env = "BATON_CHILD_ON_EXIT", .flag = "--on-child-exit",
     .placeholder = "compete|exit",
     .help = "When the child exits by itself: compete again, or exit with its status (default compete)",
     .field = exit_policy_field{[](config& c) -> auto& { return c.child.on_exit; }}},
    {.key = "child.park", .env = "BATON_CHILD_PARK", .flag = "--park",
     .help = "While standing by, keep the next term's keeper started and the command forked, "
             "waiting before its exec, so winning costs one exec (default true; "
             "--park=false turns it off)",
     .field = boolean_field{[](config& c) -> auto& { return c.child.park; }}},

    {.key = "socket.path", .env = "BATON_SOCKET_PATH", .flag = "--socket", .placeholder = "PATH",
     .help = "Unix socket for apps (default: none)",
     .field = text_field{[](config& c) -> auto& { return c.socket.path; }}},
    {.key = "socket.mode", .env = "BATON_SOCKET_MODE", .flag = "--socket-mode", .placeholder = "MODE",
     .help = "Octal file mode of the socket (default 0660)",
     .field = file_mode_field{[](config& c) -> auto& { return c.socket.mode; }}},
    {.key = "socket.require_ack", .env = "BATON_SOCKET_REQUIRE_ACK", .flag = "--require-ack",
     .help = "Wait for a socket subscriber's {\"cmd\":\"stopped\"} before releasing the lease "
             "(bounded by the kill deadline)",
     .field = boolean_field{[](config& c) -> auto& { return c.socket.require_ack; }}},
    {.key = "socket.allowed_uids", .env = "BATON_SOCKET_ALLOWED_UIDS", .flag = "--allowed-uid",
     .placeholder = "UID[,UID...]",
     .help = "uid allowed to send state-changing socket commands; repeat it or give a comma list "
             "(default: the daemon's uid and 0)",
     .field = uid_list_field{[](config& c) -> auto& { return c.socket.allowed_uids; }},
     .empty_note = "the daemon's own uid and 0"},

    {.key = "http.listen", .env = "BATON_HTTP_LISTEN", .flag = "--http-listen",
     .placeholder = "ADDR:PORT",
     .help = "Serve /healthz (liveness, also /livez), /readyz, /leader, /standby, /status and "
             "/metrics, e.g. 127.0.0.1:9464 (default: off)",
     .field = text_field{[](config& c) -> auto& { return c.http.listen; }},
     .empty_note = "off"},

    // The level applies from the next log line; the format is fixed at start-up.
    {.key = "log.level", .env = "BATON_LOG_LEVEL", .flag = "--log-level", .placeholder = "LEVEL",
     .help = "trace, debug, info, warn (or warning), error, critical or off (default info)",
     .field = text_field{[](config& c) -> auto& { return c.log.level; }},
     .reloadable = true},
    {.key = "log.format", .env = "BATON_LOG_FORMAT", .flag = "--log-format", .placeholder = "text|json",
     .help = "Log line format (default text)",
     .field = log_format_field{[](config& c) -> auto& { return c.log.format; }}},
};

}  // namespace

std::span<const option_spec> option_table() { return table; }

const option_spec* find_option(std::string_view key) {
  for (const auto& spec : table) {
    if (spec.key == key) return &spec;
  }
  return nullptr;
}

bool option_spec::value_is_secret(std::string_view value) const {
  if (secret) return true;
  if (!may_carry_credentials && kind() != value_kind::redis_url &&
      kind() != value_kind::postgres_url) {
    return false;
  }
  // user:password@ in a URL, or password=... in a libpq string or a URI's
  // query. Either spelling in any case: libpq keywords are lower case, but a
  // wrong guess here only costs the app a variable it has no use for.
  std::string lower(value);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find('@') != std::string::npos || lower.find("password") != std::string::npos;
}

bool store_reads_section(std::string_view kind, std::string_view section) {
  bool some_store_reads_it = false;
  for (const store_kind* each : store_kinds()) {
    for (auto read : each->sections) {
      if (read != section) continue;
      if (each->name == kind) return true;
      some_store_reads_it = true;
    }
  }
  // lease:, hooks:, ...: every election reads them.
  return !some_store_reads_it;
}

bool is_option_section(std::string_view name) {
  for (const auto& spec : table) {
    if (!name.empty() && spec.section() == name) return true;
  }
  return false;
}

}  // namespace baton
