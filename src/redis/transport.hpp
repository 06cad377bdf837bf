// The byte stream under a Redis connection: TCP, TLS over TCP (asio::ssl) or
// a Unix stream socket, without the connection noticing which. A transport is one connection attempt: the connection
// makes a fresh one for every reconnect and closes the old one.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <system_error>

#include "baton/redis_url.hpp"

namespace baton::redis_detail {

class stream_transport {
 public:
  /// `detail` names the peer and the cause on failure, e.g.
  /// "connect 127.0.0.1:6390: Connection refused".
  using connect_handler = std::function<void(std::error_code, std::string detail)>;
  using io_handler = std::function<void(std::error_code, std::size_t)>;

  virtual ~stream_transport() = default;

  /// Resolves (TCP) and connects. Completes through asio, never inline.
  virtual void async_connect(connect_handler handler) = 0;
  /// Writes all of [data, data + size); the buffer must outlive the operation.
  virtual void async_write(const char* data, std::size_t size, io_handler handler) = 0;
  /// Reads at least one byte into [data, data + size).
  virtual void async_read_some(char* data, std::size_t size, io_handler handler) = 0;
  /// Cancels outstanding operations (they complete with operation_aborted).
  virtual void close() = 0;
  /// "host:port" or the socket path, for error details.
  virtual const std::string& peer() const = 0;
  /// A read or write error in words; TLS says what an alert means and which
  /// option to look at.
  virtual std::string explain(std::error_code ec) const { return ec.message(); }
  /// Appended to "connect <peer>: timed out after N ms": where the attempt
  /// stood, when the transport knows more than "connecting".
  virtual std::string timeout_hint() const { return {}; }
};

/// A transport for the endpoint's kind. Handlers keep the transport alive
/// until they have run.
std::shared_ptr<stream_transport> make_transport(boost::asio::io_context& io,
                                                 const redis_endpoint& endpoint);

/// Makes one transport per connection attempt; tests substitute a fake. An
/// empty factory means make_transport.
using transport_factory = std::function<std::shared_ptr<stream_transport>(
    boost::asio::io_context& io, const redis_endpoint& endpoint)>;

}  // namespace baton::redis_detail
