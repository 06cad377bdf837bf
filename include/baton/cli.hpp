// The client side of baton: `baton status`, `baton health`, `baton watch` and
// `baton resign` talk to a running daemon over its Unix socket (see
// app_socket.hpp for the protocol) and turn its answers into text for people
// and exit codes for scripts.
//
// Exit codes, shared by every verb:
//   0  the answer was yes (leader, healthy, resigned, watch ended by a signal)
//   1  the daemon cannot be reached, answered garbage or an error, or closed
//      the connection; health: unhealthy
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
std::optional<int> run_client_command(int argc, const char* const* argv, const environment& env,
                                      std::ostream& out, std::ostream& err);

}  // namespace baton
