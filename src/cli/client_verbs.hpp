// The client verbs, after their flags were parsed and the socket found. Each
// returns the process exit code (see baton/cli.hpp) and never throws past
// run_client_command.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "baton/environment.hpp"
#include "baton/time.hpp"

namespace baton::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_not_leader = 3;
inline constexpr int exit_no_successor = 4;

/// Bound on connecting plus one reply, unless --timeout says otherwise.
inline constexpr milliseconds default_request_timeout{5000};
/// How long `resign --wait` waits for a successor, unless --timeout says otherwise.
inline constexpr milliseconds default_resign_wait{30'000};
/// How often `resign --wait` asks for the status.
inline constexpr milliseconds resign_poll_interval{100};

struct client_settings {
  std::string socket_path;
  /// --timeout, or the verb's default.
  milliseconds timeout = default_request_timeout;
  bool json = false;     ///< status, watch, leader: JSON lines instead of text
  bool wait = false;     ///< resign: wait for a successor
  bool verbose = false;  ///< health: say so on success
  bool ready = false;    ///< health: readiness instead of liveness
  std::string to;        ///< switchover: the node to hand over to
  /// switchover: how long the lease stays reserved for it (default: the
  /// daemon's ttl).
  std::optional<milliseconds> window;
  /// switchover: hand over even to a node that a live candidate outranks.
  bool force = false;
};

/// One flag of a client verb, for the man page and the completion.
struct client_flag_doc {
  std::string names;        ///< as CLI11 takes them: "-c,--config"
  std::string placeholder;  ///< "PATH"; "" for a switch
  std::string help;
};

/// A client verb (status, health, watch, resign, switchover) as its --help describes it.
struct client_verb_doc {
  std::string name;
  std::string description;
  std::vector<client_flag_doc> flags;
};

/// The client verbs and their flags, from the same strings their --help shows.
std::vector<client_verb_doc> client_verb_docs();

/// How the client finds the socket, durations and exit codes (--help's footer).
extern const char* const client_footer;

int run_status(const client_settings& settings, std::ostream& out, std::ostream& err);
int run_health(const client_settings& settings, std::ostream& out, std::ostream& err);
int run_watch(const client_settings& settings, std::ostream& out, std::ostream& err);
int run_resign(const client_settings& settings, std::ostream& out, std::ostream& err);
int run_switchover(const client_settings& settings, std::ostream& out, std::ostream& err);
int run_leader(const client_settings& settings, std::ostream& out, std::ostream& err);
int run_drain(const client_settings& settings, std::ostream& out, std::ostream& err);
int run_undrain(const client_settings& settings, std::ostream& out, std::ostream& err);

/// The socket path, first match wins: `socket_flag`, socket.path of the file
/// `config_flag`, BATON_SOCKET_PATH, socket.path of the file named by
/// BATON_CONFIG, baton::default_socket_path. Empty values count as unset.
/// Throws config_error when a config file cannot be read or is invalid.
std::string find_socket_path(const std::string& socket_flag, const std::string& config_flag,
                             const environment& env);

}  // namespace baton::cli
