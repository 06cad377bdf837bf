// The table itself (see option_table.hpp for why it exists). The order is
// check-config's; flags and variables are the public names documented in
// config/baton.yaml and the README, so they never change once released.
#include "option_table.hpp"

#include "baton/store_registry.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>
#include <vector>

namespace baton {
namespace {

failsafe_mode& failsafe_mode_of(config& c) { return c.lease.failsafe; }
const char* spelled_failsafe_mode(const failsafe_mode& m) { return to_string(m); }

// constexpr: built by the compiler, so no static initializer can see it
// half-made. child.command has no variable and no flag: on the command line
// it is the words after `--` (parse_invocation). A secret (a password) has
// no flag on purpose: argv is visible to every user of the host.
constexpr option_spec common_before_stores[] = {
    {.key = "election", .env = "BATON_ELECTION", .flag = "--election", .placeholder = "NAME",
     .help = "Election name; candidates with the same name compete (required)",
     .field = text_field{[](config& c) -> auto& { return c.election; }}},
    {.key = "node_id", .env = "BATON_NODE_ID", .flag = "--node-id", .placeholder = "ID",
     .help = "This candidate's id (default: hostname-<6 hex of a hash of election, socket, "
             "http.listen and uid>)",
     .field = text_field{[](config& c) -> auto& { return c.node_id; }}},
    {.key = "priority", .env = "BATON_PRIORITY", .flag = "--priority", .placeholder = "N",
     .help = "Who should lead: a leader hands over to a live candidate of a higher priority, "
             "-1000 to 1000 (default 0)",
     .field = integer_field{[](config& c) -> auto& { return c.priority; }, -1000, 1000}},
    {.key = "advertise", .env = "BATON_ADVERTISE", .flag = "--advertise", .placeholder = "ADDRESS",
     .help = "Where clients reach this node's service when it leads (HOST:PORT or a URL), "
             "published in its registration: `baton leader`, /leader and the status show the "
             "leader's",
     .field = text_field{[](config& c) -> auto& { return c.advertise; }},
     .empty_note = "none"},
    {.key = "never_lead", .env = "BATON_NEVER_LEAD", .flag = "--never-lead",
     .help = "This node never takes the lease: it watches and reports, and is never a "
             "switchover's or a preemption's target (default false)",
     .field = boolean_field{[](config& c) -> auto& { return c.never_lead; }}},
    {.key = "drain_file", .env = "BATON_DRAIN_FILE", .flag = "--drain-file", .placeholder = "FILE",
     .help = "Where `baton drain` is remembered across restarts: the node is drained while the "
             "file exists (default: socket.path with .drained appended)",
     .field = text_field{[](config& c) -> auto& { return c.drain_file; }},
     .empty_note = "socket.path + .drained"},

    {.key = "store.kind", .env = "BATON_STORE_KIND", .flag = "--store-kind", .placeholder = "KIND",
     // .help: the kinds the registry holds (store_kind_help, below).
     .field = text_field{[](config& c) -> auto& { return c.store.kind; }}},

};

// After the store kinds' options, which each kind declares in its own
// folder (its descriptor's options, store_kind.hpp).
constexpr option_spec common_after_stores[] = {
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
    {.key = "lease.preempt_delay", .env = "BATON_LEASE_PREEMPT_DELAY", .flag = "--preempt-delay",
     .placeholder = "DURATION",
     .help = "How long a candidate of a higher priority than the leader's must have been live "
             "before the leader hands over to it (default 3 * ttl)",
     .field = duration_field{[](config& c) -> auto& { return c.lease.preempt_delay; }},
     .zero_derives = true},
    // Peer-confirmed leadership (docs/safety.md): every candidate runs with
    // the same mode and secret, so none of it changes at runtime.
    {.key = "lease.failsafe", .env = "BATON_LEASE_FAILSAFE", .flag = "--failsafe",
     .placeholder = "off|peers",
     .help = "When the store cannot be reached: off (the leader stops its app at its renew "
             "deadline, default) or peers (it keeps its app while every candidate confirms over "
             "the peer port)",
     .field = word_field_of<failsafe_mode_of, parse_failsafe_mode, spelled_failsafe_mode>(
         "must be off or peers")},
    {.key = "lease.failsafe_secret_file", .env = "BATON_LEASE_FAILSAFE_SECRET_FILE",
     .flag = "--failsafe-secret-file", .placeholder = "FILE",
     .help = "lease.failsafe peers: file whose first line (at least 32 bytes) is the secret every "
             "candidate of the election shares for the peer port",
     .field = text_field{[](config& c) -> auto& { return c.lease.failsafe_secret_file; }}},
    {.key = "lease.failsafe_listen", .env = "BATON_LEASE_FAILSAFE_LISTEN",
     .flag = "--failsafe-listen", .placeholder = "ADDR:PORT",
     .help = "lease.failsafe peers: where the peer port listens, e.g. 0.0.0.0:9465",
     .field = text_field{[](config& c) -> auto& { return c.lease.failsafe_listen; }},
     .empty_note = "none"},
    {.key = "lease.failsafe_address", .env = "BATON_LEASE_FAILSAFE_ADDRESS",
     .flag = "--failsafe-address", .placeholder = "HOST:PORT",
     .help = "lease.failsafe peers: where the other candidates reach this one's peer port, "
             "published in its registration (default: lease.failsafe_listen)",
     .field = text_field{[](config& c) -> auto& { return c.lease.failsafe_address; }},
     .empty_note = "lease.failsafe_listen"},

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

// store.kind's help names every kind the registry holds and its default
// one, so a new kind needs no edit here.
std::string_view store_kind_help() {
  static const std::string help = [] {
    std::string text = "Which store holds the lease: ";
    const auto kinds = store_kinds();
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      if (i > 0) text += i + 1 == kinds.size() ? " or " : ", ";
      text += kinds[i]->name;
    }
    return text + " (default " + std::string(default_store_kind().name) + ")";
  }();
  return help;
}

// The whole table, in check-config's order: built once, on first use (after
// every static initializer: the descriptors are constant-initialized).
const std::vector<option_spec>& whole_table() {
  static const std::vector<option_spec> table = [] {
    std::vector<option_spec> rows(std::begin(common_before_stores), std::end(common_before_stores));
    for (auto& row : rows) {
      if (row.key == "store.kind") row.help = store_kind_help();
    }
    for (const store_kind* kind : store_kinds()) {
      const auto own = kind->options();
      rows.insert(rows.end(), own.begin(), own.end());
    }
    rows.insert(rows.end(), std::begin(common_after_stores), std::end(common_after_stores));
    return rows;
  }();
  return table;
}

}  // namespace

std::span<const option_spec> option_table() { return whole_table(); }

const option_spec* find_option(std::string_view key) {
  for (const auto& spec : whole_table()) {
    if (spec.key == key) return &spec;
  }
  return nullptr;
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
  for (const auto& spec : whole_table()) {
    if (!name.empty() && spec.section() == name) return true;
  }
  return false;
}

}  // namespace baton
