// TCP and Unix-socket transports, thin wrappers over an asio stream socket,
// and the choice between them and TLS (tls_transport.hpp).
#include "transport.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <utility>

#include "tcp_connect.hpp"
#include "tls_transport.hpp"

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
      : socket_transport(io, tcp_peer_name(host, port)),
        resolver_(io),
        host_(std::move(host)),
        port_(port) {}

  void async_connect(connect_handler handler) override {
    async_connect_tcp(resolver_, socket_, host_, port_, peer_,
                      [self = shared_from_this(), h = std::move(handler)](
                          std::error_code ec, std::string detail) { h(ec, std::move(detail)); });
  }

  void close() override {
    resolver_.cancel();
    socket_transport::close();
  }

 private:
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
  if (endpoint.tls) return make_tls_transport(io, endpoint);
  return std::make_shared<tcp_transport>(io, endpoint.host, endpoint.port);
}

}  // namespace baton::redis_detail
