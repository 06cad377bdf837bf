// One connection to one etcd endpoint, plain TCP or TLS, for http_client and
// watch_stream: resolve, connect and (for https) the TLS handshake with the
// member's certificate checked against its host name, under one timeout.
// stream() is the stream to read and write on, whichever it is, as one type
// (any_stream.hpp).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <functional>
#include <memory>
#include <string>

#include "any_stream.hpp"
#include "baton/lease_store.hpp"
#include "endpoint.hpp"

namespace baton::etcd_detail {

class link final : private byte_channel {
 public:
  /// `tls` is required for an https endpoint, ignored for http.
  link(boost::asio::io_context& io, std::shared_ptr<boost::asio::ssl::context> tls);

  /// Connects to `where` (dropping any earlier connection) within `timeout`;
  /// `done` gets an etcd_errc error naming the endpoint, or none. `what`
  /// names the connection in messages ("etcd", "etcd watch").
  void async_connect(const endpoint& where, milliseconds timeout, std::string what,
                     std::function<void(store_error)> done);
  void close();

  /// What a failure of this connection means (tls_failure_text): the
  /// reason, with the option that cures it where a TLS alert tells.
  std::string failure_text(const boost::system::error_code& ec) const;

  /// The TCP layer (its expiry is the timeout of each step).
  boost::beast::tcp_stream& tcp();
  /// The stream to read and write: over the TLS stream for https, the TCP
  /// stream for http.
  any_stream& stream() { return stream_; }

 private:
  bool has_client_certificate() const;
  boost::asio::any_io_executor channel_executor() override;
  void read_some(boost::asio::mutable_buffer into, erased_completion done) override;
  void write_some(std::vector<boost::asio::const_buffer> from, erased_completion done) override;

  boost::asio::io_context& io_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::beast::tcp_stream plain_;
  std::unique_ptr<boost::beast::ssl_stream<boost::beast::tcp_stream>> tls_stream_;
  // Completions of a connection that was closed meanwhile find a larger
  // number here and do nothing.
  std::shared_ptr<std::uint64_t> generation_ = std::make_shared<std::uint64_t>(0);
  any_stream stream_{*this};
};

}  // namespace baton::etcd_detail
