// zookeeper.servers, "host:port,host:port", read once: each server's host
// and port, whether the host is a numeric address already, and the list as
// the C client takes it once every name was resolved. The client resolves
// names itself with a blocking getaddrinfo (at start and again on
// reconnects), which would stall the daemon's loop on a slow DNS server, so
// the store resolves names off the loop first and hands the client numeric
// addresses only.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton::zookeeper_detail {

struct server_address {
  std::string host;  ///< as written, without IPv6 brackets
  unsigned short port = 0;
  bool numeric = false;  ///< an IPv4 or IPv6 address, nothing to resolve
};

struct server_list {
  std::vector<server_address> servers;
  std::string error;  ///< "" = parsed
};

/// Parses "host:port,host:port" ("[::1]:2181" for IPv6). A chroot suffix
/// ("/app") is refused: zookeeper.path says where the nodes live.
server_list parse_servers(std::string_view text);

/// "ip:port,ip:port" for zookeeper_init, from numeric addresses.
std::string client_hosts(const std::vector<server_address>& numeric);

/// One address the client may connect to, and the server of
/// zookeeper.servers it stands for (its index there): the server itself when
/// it was given as an address, or one of the addresses its name resolved to.
struct server_address_of {
  server_address address;  ///< numeric
  std::size_t server = 0;
};

/// Which server of zookeeper.servers `connected` is: the client names the
/// server it is connected to as "ip:port" or "[ip6]:port". Addresses are
/// compared as addresses ("::1" and "0:0::1" are one); nullopt when none of
/// `known` is that one, or `connected` is not an address.
std::optional<std::size_t> server_of(const std::vector<server_address_of>& known,
                                     std::string_view connected);

}  // namespace baton::zookeeper_detail
