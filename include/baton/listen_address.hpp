// The `ADDR:PORT` syntax of http.listen: an IPv4 address, or an IPv6 address
// in brackets, then a port. Names are not resolved: a listener bound to a name
// would move when DNS does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace baton {

struct listen_address {
  std::string host;  ///< the address without brackets: "127.0.0.1", "::1"
  std::uint16_t port = 0;
};

/// Parses "127.0.0.1:9464", "0.0.0.0:9464", "[::1]:9464". Port 0 is allowed
/// (any free port, for tests). On failure returns nullopt and sets `why` to
/// what would have been accepted.
std::optional<listen_address> parse_listen_address(std::string_view text, std::string& why);

}  // namespace baton
