#include "tcp_connect.hpp"

#include <boost/asio/connect.hpp>
#include <memory>
#include <utility>

namespace baton::redis_detail {

namespace asio = boost::asio;

std::string tcp_peer_name(const std::string& host, unsigned short port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

void async_connect_tcp(asio::ip::tcp::resolver& resolver, asio::ip::tcp::socket& socket,
                       const std::string& host, unsigned short port, const std::string& peer,
                       std::function<void(std::error_code, std::string)> done) {
  resolver.async_resolve(
      host, std::to_string(port),
      [&socket, host, peer, done = std::move(done)](
          const boost::system::error_code& ec,
          const asio::ip::tcp::resolver::results_type& results) mutable {
        if (ec) {
          done(ec, "resolve " + host + ": " + ec.message());
          return;
        }
        asio::async_connect(socket, results,
                            [&socket, peer, done = std::move(done)](
                                const boost::system::error_code& ec2, const asio::ip::tcp::endpoint&) {
                              if (ec2) {
                                done(ec2, "connect " + peer + ": " + ec2.message());
                                return;
                              }
                              boost::system::error_code ignored;
                              // Small pipelined commands: do not wait for Nagle.
                              socket.set_option(asio::ip::tcp::no_delay(true), ignored);
                              done({}, {});
                            });
      });
}

}  // namespace baton::redis_detail
