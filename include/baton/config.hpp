// The effective configuration of one baton daemon: defaults, then the YAML
// file, then BATON_* environment variables, then command-line flags (each
// later source wins). Validated once, at start-up; the rest of the program
// trusts it.
#pragma once

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "baton/kind_settings.hpp"
#include "baton/lease_drift.hpp"
#include "baton/time.hpp"

namespace baton {

/// Which store holds the lease (`store: {kind: ...}`). Each kind has its own
/// section of options, or several, and may read another kind's (its
/// descriptor's `sections`, baton/store_kind.hpp); the kind picks which are
/// used. Fixed at start-up: SIGHUP cannot move a running daemon to another
/// store.
struct store_config {
  /// The store kind, as its descriptor names it (baton/store_kind.hpp).
  /// "" names none: a config that the loader makes (default_config,
  /// baton/config_load.hpp) starts from the registry's default kind.
  std::string kind;
};

/// lease.failsafe: what a leader whose store cannot be reached does
/// (docs/safety.md, "Peer-confirmed leadership").
enum class failsafe_mode {
  off,    ///< stops its app at its renew deadline
  peers,  ///< keeps it running while every listed candidate confirms
};

/// "off" or "peers", as the option spells it.
const char* to_string(failsafe_mode m);
/// The mode `text` names; nullopt for anything else.
std::optional<failsafe_mode> parse_failsafe_mode(std::string_view text);

struct lease_config {
  /// How long a lease lives in the store without renewal.
  milliseconds ttl{10000};
  /// How often the leader renews. 0 = ttl / 3.
  milliseconds renew_interval{0};
  /// How long after the last successful renewal the leader keeps trying
  /// before it stops its app. 0 = ttl * 2 / 3.
  milliseconds renew_deadline{0};
  /// How often a standby retries when it has nothing better to go on.
  /// 0 = min(1s, renew_interval).
  milliseconds retry_interval{0};
  /// Fraction of the ttl assumed lost to clock-rate drift between hosts.
  double drift_factor = default_drift_factor;
  /// After `baton resign`, how long this node stays out of the election so
  /// that another node takes over. 0 = ttl.
  milliseconds resign_cooldown{0};
  /// How long a candidate whose priority is above the leader's must have
  /// been a live candidate before the leader hands over to it. 0 = 3 * ttl.
  milliseconds preempt_delay{0};
  /// off (default) or peers: a leader whose renewals fail because the store
  /// cannot be reached keeps its app running while every candidate it last
  /// listed confirms over the peer channel. Every candidate of an election
  /// must run with the same mode, secret and lease timing.
  failsafe_mode failsafe = failsafe_mode::off;
  /// The peer channel's shared secret: the first line of this file, at
  /// least 32 bytes. Required with peers.
  std::string failsafe_secret_file;
  /// ADDR:PORT the peer port listens on. Required with peers.
  std::string failsafe_listen;
  /// HOST:PORT the other candidates reach this one's peer port at,
  /// published in its registration. "" = failsafe_listen, which must then
  /// name an address other than 0.0.0.0 or [::].
  std::string failsafe_address;
};

/// The margin assumed lost to clock-rate differences between hosts: the one
/// definition in lease_drift.hpp, for the lease's ttl and drift_factor.
inline milliseconds lease_drift(const lease_config& lease) {
  return lease_drift(lease.ttl, lease.drift_factor);
}

struct hooks_config {
  /// argv run when this node becomes leader (empty = none). No shell.
  std::vector<std::string> on_start;
  /// argv run when this node stops leading (empty = none). No shell.
  std::vector<std::string> on_stop;
  /// Longest a hook may run before it is killed (SIGTERM, then SIGKILL).
  milliseconds timeout{30000};
};

enum class child_exit_policy { compete, exit };

struct child_config {
  /// argv of the supervised command (`baton run -- CMD ARGS...`); empty = none.
  std::vector<std::string> command;
  /// Time between SIGTERM and SIGKILL when the stop is voluntary (shutdown,
  /// resign). Capped by the lease's validity in every case.
  milliseconds stop_timeout{10000};
  /// What to do when the command exits by itself: release and compete again,
  /// or release and exit with the command's status.
  child_exit_policy on_exit = child_exit_policy::compete;
  /// A standby keeps the next term's keeper started and the command forked,
  /// waiting before its exec, so that winning the lease costs one exec.
  bool park = true;
};

struct socket_config {
  /// Path of the Unix socket for apps ("" = no socket).
  std::string path;
  /// File mode of the socket.
  unsigned mode = 0660;
  /// When the app must stop, wait for a subscriber's acknowledgement
  /// ({"cmd":"stopped"}) besides the hooks and child, before the lease is
  /// released; never past the stop's kill deadline. Needs `path`.
  bool require_ack = false;
  /// Peer uids (SO_PEERCRED) allowed to send commands that change state
  /// (`stopped`). Empty = the daemon's own effective uid and 0 (root).
  std::vector<unsigned> allowed_uids;
};

/// How log records are written (log.format).
enum class log_format {
  text,  ///< one line per record
  json,  ///< one object per line
};

/// "text" or "json", as the option spells it.
const char* to_string(log_format f);
/// The format `text` names; nullopt for anything else.
std::optional<log_format> parse_log_format(std::string_view text);

struct log_config {
  /// trace, debug, info, warn (or warning), error, critical, off; kept as written.
  std::string level = "info";
  log_format format = log_format::text;
};

struct http_config {
  /// ADDR:PORT for /healthz, /leader, /standby, /status and /metrics
  /// ("" = no HTTP server). [v6]:PORT for IPv6.
  std::string listen;
};

/// `baton once`: the election for one term (baton/one_term.hpp). Set by
/// the verb and its --wait alone: no file key, variable or reload changes it.
struct once_config {
  /// One term only; false for `baton run`.
  bool enabled = false;
  /// How long the lease may be waited for (--wait). 0 = one attempt.
  milliseconds wait{0};
};

struct config {
  /// Name of the election; candidates with the same name compete. Required.
  std::string election;
  /// This candidate's id. "" = hostname plus a short hash that is stable
  /// for one daemon instance (see default_node_id in config_load.hpp).
  std::string node_id;
  /// Who should lead when several can: a leader hands over to a live
  /// candidate of a higher priority (lease.preempt_delay). From -1000 to
  /// 1000.
  int priority = 0;
  /// Where clients reach this node's service when it leads (HOST:PORT or a
  /// URL; "" = none), published in its registration (candidate_card.hpp).
  std::string advertise;
  /// A candidate that never takes the lease (never a successor either).
  bool never_lead = false;
  /// Where `baton drain` is remembered: drained while the file exists.
  /// "" = socket.path with ".drained" appended (drain_file_of).
  std::string drain_file;
  store_config store;
  /// Each store kind's own settings, every kind's whatever store.kind is
  /// (check-config shows them all). A kind reaches its settings through its
  /// accessor, declared beside them in its folder.
  kind_settings kinds;
  lease_config lease;
  hooks_config hooks;
  child_config child;
  socket_config socket;
  http_config http;
  log_config log;
  once_config once;
};

/// A configuration problem, reported as one line and exit code 2.
class config_error : public std::runtime_error {
 public:
  /// `option` is the dotted name (lease.ttl), `value` what was given,
  /// `allowed` what would have been accepted.
  /// what() is `<option>: <value> is not allowed: <allowed>` on one line; an
  /// empty value shows as "", and control characters are escaped.
  config_error(const std::string& option, const std::string& value, const std::string& allowed);
  /// For problems that are not one bad value (an unknown option, a missing
  /// required one, an unreadable file): what() is `message` (made one line).
  static config_error with_message(const std::string& option, const std::string& message);
  const std::string& option() const noexcept { return option_; }

 private:
  struct whole_message {};
  config_error(const std::string& option, const std::string& message, whole_message);
  std::string option_;
};

}  // namespace baton
