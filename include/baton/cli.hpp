// The client side of baton: `baton status`, `baton health`, `baton watch` and
// `baton resign` talk to a running daemon over its Unix socket (see
// app_socket.hpp for the protocol) and turn its answers into text for people
// and exit codes for scripts.
//
// Exit codes, shared by every verb:
//   0  the answer was yes (leader, live or with --ready ready, resigned,
//      watch ended by a signal)
//   1  the daemon cannot be reached, answered garbage or an error, or closed
//      the connection; health: not live (with --ready: not ready)
//   2  usage or configuration error
//   3  this node is not the leader (status; resign refused as "not the leader")
//   4  resign --wait: no other node took the lease within the timeout
//
// The socket is found, first match wins: --socket, socket.path of the file
// given with --config, BATON_SOCKET_PATH, socket.path of the file named by
// BATON_CONFIG, then default_socket_path.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "baton/environment.hpp"

namespace baton {

/// Where the client looks when nothing names the socket.
inline constexpr const char* default_socket_path = "/run/baton/baton.sock";

/// Runs `baton status|watch|resign|health ...` when argv[1] is one of those
/// verbs and returns its exit code; nullopt for any other argv (then main goes on
/// with run/check-config/version). Results go to `out`, diagnostics (one line
/// starting with "baton: ") to `err`. Every wait is bounded by --timeout,
/// except `watch`, which runs until the daemon closes the connection or
/// SIGINT/SIGTERM arrives. Never throws.
///
/// Also answers the hidden verbs that print generated documentation from the
/// program's own tables (the build and the docs tests run them):
///   baton __man                 the baton(1) man page, as roff
///   baton __completion bash     the bash completion script
///   baton __config-reference    docs/configuration-reference.md, as Markdown
///   baton __metrics             every metric family, as metric_list() prints it
std::optional<int> run_client_command(int argc, const char* const* argv, const environment& env,
                                      std::ostream& out, std::ostream& err);

/// "baton 0.1.0 (commit 8fa2c5e)": the version, then the commit the build
/// came from (`git describe --always --dirty` at configure time, "unknown"
/// outside a git checkout). Scripts may rely on the first two words.
std::string version_line();

/// The baton(1) man page as roff: the verbs, every flag of the option table
/// with its variable and default, exit status, files and environment.
std::string man_page();

/// docs/configuration-reference.md: every option of the option table with
/// its flag, variable, default and help, and the store kinds of the registry.
std::string config_reference();

/// Every metric family /metrics serves, one per line: name, type, label
/// names (comma-separated, may be empty) and help, separated by tabs.
std::string metric_list();

/// A bash completion script for baton: the verbs, and for each verb its
/// flags (run and check-config: every flag of the option table).
std::string bash_completion();

}  // namespace baton
