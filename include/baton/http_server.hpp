// A small HTTP/1.1 server for probes and metrics (Boost.Beast), running on the
// daemon's own event loop. It never stalls that loop: every read and write is
// asynchronous and each connection is bounded in time and size, so a slow,
// stuck or hostile client costs at most one file descriptor for a few seconds.
//
// ## Behaviour
//
// - GET and HEAD are answered by the handler; HEAD gets the same headers as
//   GET (Content-Length included) and no body. The handler decides about
//   other methods (see http_routes.hpp).
// - Every response carries `Server: baton`, `Content-Length`,
//   `Cache-Control: no-store` and the handler's content type and headers.
// - Keep-alive (HTTP/1.1 default, HTTP/1.0 with `Connection: keep-alive`):
//   the connection serves requests one after the other; an idle connection
//   is closed after `read_timeout`.
// - A request body is read up to max_body_bytes (4 KiB unless the limits
//   say otherwise) and handed to the handler; a larger one gets 413 and the
//   connection is closed.
// - Errors, each followed by closing the connection:
//     malformed request          -> 400 "bad request: <parser message>"
//     header over the limit      -> 431 "request header too large"
//     body over 4 KiB            -> 413 "request body too large"
//     request not complete after read_timeout -> 408 (best effort)
//     max_connections reached    -> 503 "too many connections (limit N)"
//     response not taken within write_timeout -> the connection is cut
// - The handler runs on the io_context. If it throws, the answer is 500 with
//   the exception's message.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "baton/time.hpp"

namespace baton {

/// The parts of a request a handler sees. Valid only during the call.
struct http_request_view {
  std::string_view method;  ///< as sent, e.g. "GET"
  std::string_view target;  ///< origin form with query, e.g. "/leader?x=1"
  std::string_view body;    ///< as sent, at most the limits' max_body_bytes
};

struct http_response {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  ///< extra headers, e.g. Allow
};

/// Answers one request. Runs on the io_context; must not block.
using http_handler = std::function<http_response(const http_request_view&)>;

namespace http_detail {
class listener;
}

/// Bounds on each client of http_server (http_server::limits). Declared
/// outside the class so it can be a defaulted constructor argument there.
struct http_server_limits {
  /// Request line plus headers; larger -> 431, then close.
  std::size_t max_header_bytes = 8 * 1024;
  /// The whole request must arrive within this time, counted from accept
  /// or, on a kept-alive connection, from the end of the previous
  /// response; otherwise the connection is closed (after a 408 if part of
  /// a request came). It is also the keep-alive idle timeout.
  milliseconds read_timeout{5000};
  /// A response must be taken by the client within this time; a client
  /// that does not read is dropped.
  milliseconds write_timeout{5000};
  /// Connections served at once; beyond, 503 "too many connections" and close.
  std::size_t max_connections = 64;
  /// A request body; larger -> 413, then close.
  std::size_t max_body_bytes = 4 * 1024;
};

class http_server {
 public:
  /// See http_server_limits.
  using limits = http_server_limits;

  /// `listen` is "ADDR:PORT": an IPv4 address, or an IPv6 address in
  /// brackets ("[::1]:9464"). Port 0 picks any free port (for tests). Nothing
  /// is checked or opened until open().
  http_server(boost::asio::io_context& io, std::string listen, http_handler handler,
              limits l = {});
  /// Calls close().
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// Bind, listen and start accepting. On failure `ec` is set and
  /// last_error() says what happened, e.g. "cannot listen on
  /// 127.0.0.1:9464: Address already in use" or "invalid HTTP listen
  /// address 'nope': expected ADDR:PORT ...". Never throws for bad input.
  /// Calling it again while open does nothing.
  void open(std::error_code& ec);
  /// One line describing the last open() failure ("" if none).
  const std::string& last_error() const;
  /// The bound address (the real port when 0 was asked). Only after a
  /// successful open(); a default endpoint otherwise.
  boost::asio::ip::tcp::endpoint local_endpoint() const;
  /// Stop accepting and close every connection. Idempotent; open() may be
  /// called again afterwards.
  void close();
  /// Connections being served (rejected ones excluded).
  std::size_t connection_count() const;

 private:
  std::shared_ptr<http_detail::listener> listener_;
};

}  // namespace baton
