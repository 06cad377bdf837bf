// The `listen` setting of the HTTP endpoint, "ADDR:PORT", turned into an
// endpoint. Only numeric addresses: resolving a host name could block the
// event loop and pick an address nobody meant.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string>
#include <string_view>

namespace baton::http_detail {

/// Parse "1.2.3.4:9464" or "[::1]:9464" (port 0..65535; 0 = any free port).
/// False with `error` set to a one-line message naming the input otherwise.
bool parse_listen_address(std::string_view text, boost::asio::ip::tcp::endpoint& endpoint,
                          std::string& error);

/// "1.2.3.4:9464" or "[::1]:9464".
std::string to_string(const boost::asio::ip::tcp::endpoint& endpoint);

}  // namespace baton::http_detail
