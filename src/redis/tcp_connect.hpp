// Resolve and connect one TCP socket: shared by the plain and the TLS
// transports. The host is resolved on every attempt, so a DNS change is
// picked up at the next reconnect.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <string>
#include <system_error>

namespace baton::redis_detail {

/// "host:port", with IPv6 addresses in brackets.
std::string tcp_peer_name(const std::string& host, unsigned short port);

/// Resolves `host`, connects `socket` to the first address that answers and
/// turns Nagle off. `done` gets ({}, "") or the error and a detail naming the
/// step and `peer` ("connect 127.0.0.1:6390: Connection refused"). The caller
/// keeps `resolver` and `socket` alive until `done` has run.
void async_connect_tcp(boost::asio::ip::tcp::resolver& resolver,
                       boost::asio::ip::tcp::socket& socket, const std::string& host,
                       unsigned short port, const std::string& peer,
                       std::function<void(std::error_code, std::string)> done);

}  // namespace baton::redis_detail
