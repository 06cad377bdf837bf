// See listen_address.hpp.
#include "listen_address.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>

#include "baton/listen_address.hpp"
#include "printable.hpp"

namespace baton::http_detail {
namespace {

constexpr std::size_t max_echoed_input = 100;

}  // namespace

// The grammar is the config's (baton/listen_address.hpp), so that what
// check-config accepts is exactly what the server can bind.
bool parse_listen_address(std::string_view text, boost::asio::ip::tcp::endpoint& endpoint,
                          std::string& error) {
  std::string why;
  auto parsed = baton::parse_listen_address(text, why);
  if (!parsed) {
    error = "invalid HTTP listen address '" + printable(text, max_echoed_input) + "': " + why;
    return false;
  }
  endpoint = boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address(parsed->host), parsed->port);
  error.clear();
  return true;
}

std::string to_string(const boost::asio::ip::tcp::endpoint& endpoint) {
  const std::string address = endpoint.address().to_string();
  const std::string port = std::to_string(endpoint.port());
  return endpoint.address().is_v6() ? "[" + address + "]:" + port : address + ":" + port;
}

}  // namespace baton::http_detail
