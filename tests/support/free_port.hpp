// A free TCP port on 127.0.0.1 for a test server: the kernel picks one for
// a socket bound to port 0, which is then closed. Another process may take
// it before the server binds, so callers retry on a clash.
#pragma once

namespace baton::testing {

/// How many ports a test server tries before giving up: each clash (another
/// process bound the port first) costs one.
inline constexpr int server_port_attempts = 5;

/// Throws std::runtime_error when no socket can be made or bound.
unsigned short free_loopback_port();

}  // namespace baton::testing
