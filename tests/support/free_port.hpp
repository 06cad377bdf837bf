// A free TCP port on 127.0.0.1 for a test server: the kernel picks one for
// a socket bound to port 0, which is then closed. Another process may take
// it before the server binds, so callers retry on a clash.
#pragma once

namespace baton::testing {

/// Throws std::runtime_error when no socket can be made or bound.
unsigned short free_loopback_port();

}  // namespace baton::testing
