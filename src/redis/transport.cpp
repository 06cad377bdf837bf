// TCP and Unix-socket transports. Both are thin wrappers over an asio stream
// socket; the TCP one resolves the host on every connect so a DNS change is
// picked up on reconnect.
#include "transport.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <utility>

namespace baton::redis_detail {
namespace {

namespace asio = boost::asio;

// Shared by both socket kinds: everything but connecting.
template <typename Socket>
class socket_transport : public stream_transport,
                         public std::enable_shared_from_this<socket_transport<Socket>> {
 public:
  socket_transport(asio::io_context& io, std::string peer) : socket_(io), peer_(std::move(peer)) {}

  void async_write(const char* data, std::size_t size, io_handler handler) override {
    asio::async_write(socket_, asio::buffer(data, size),
                      [self = this->shared_from_this(), h = std::move(handler)](
                          const boost::system::error_code& ec, std::size_t n) { h(ec, n); });
  }

  void async_read_some(char* data, std::size_t size, io_handler handler) override {
    socket_.async_read_some(asio::buffer(data, size),
                            [self = this->shared_from_this(), h = std::move(handler)](
                                const boost::system::error_code& ec, std::size_t n) { h(ec, n); });
  }

  void close() override {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

  const std::string& peer() const override { return peer_; }

 protected:
  std::string connect_failure(const boost::system::error_code& ec) const {
    return "connect " + peer_ + ": " + ec.message();
  }

  Socket socket_;
  std::string peer_;
};

class tcp_transport final : public socket_transport<asio::ip::tcp::socket> {
 public:
  tcp_transport(asio::io_context& io, std::string host, unsigned short port)
      : socket_transport(io, format_peer(host, port)),
        resolver_(io),
        host_(std::move(host)),
        port_(port) {}

  void async_connect(connect_handler handler) override {
    resolver_.async_resolve(host_, std::to_string(port_),
                            [self = shared_this(), h = std::move(handler)](
                                const boost::system::error_code& ec,
                                const asio::ip::tcp::resolver::results_type& results) mutable {
                              if (ec) {
                                h(ec, "resolve " + self->host_ + ": " + ec.message());
                                return;
                              }
                              self->connect_to(results, std::move(h));
                            });
  }

  void close() override {
    resolver_.cancel();
    socket_transport::close();
  }

 private:
  static std::string format_peer(const std::string& host, unsigned short port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
  }

  std::shared_ptr<tcp_transport> shared_this() {
    return std::static_pointer_cast<tcp_transport>(shared_from_this());
  }

  void connect_to(const asio::ip::tcp::resolver::results_type& results, connect_handler h) {
    asio::async_connect(socket_, results,
                        [self = shared_this(), h = std::move(h)](
                            const boost::system::error_code& ec, const asio::ip::tcp::endpoint&) {
                          if (ec) {
                            h(ec, self->connect_failure(ec));
                            return;
                          }
                          boost::system::error_code ignored;
                          // Small pipelined commands: do not wait for Nagle.
                          self->socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
                          h({}, {});
                        });
  }

  asio::ip::tcp::resolver resolver_;
  std::string host_;
  unsigned short port_;
};

class unix_transport final : public socket_transport<asio::local::stream_protocol::socket> {
 public:
  unix_transport(asio::io_context& io, std::string path) : socket_transport(io, std::move(path)) {}

  void async_connect(connect_handler handler) override {
    asio::local::stream_protocol::endpoint endpoint;
    try {
      endpoint = asio::local::stream_protocol::endpoint(peer_);
    } catch (const boost::system::system_error& e) {
      // A path longer than sun_path: report it like any connect failure.
      asio::post(socket_.get_executor(),
                 [self = shared_from_this(), this, code = e.code(), h = std::move(handler)] {
                   h(code, connect_failure(code));
                 });
      return;
    }
    socket_.async_connect(endpoint, [self = shared_from_this(), this,
                                     h = std::move(handler)](const boost::system::error_code& ec) {
      if (ec) {
        h(ec, connect_failure(ec));
        return;
      }
      h({}, {});
    });
  }
};

}  // namespace

std::shared_ptr<stream_transport> make_transport(asio::io_context& io,
                                                 const redis_endpoint& endpoint) {
  if (endpoint.kind == redis_endpoint::transport::unix_socket)
    return std::make_shared<unix_transport>(io, endpoint.path);
  return std::make_shared<tcp_transport>(io, endpoint.host, endpoint.port);
}

}  // namespace baton::redis_detail
