// One HTTP client connection: reads a request with a deadline, has the
// listener answer it, writes the response with a deadline, and either waits
// for the next request (keep-alive) or closes gracefully. One timer per
// connection bounds whichever phase it is in, so a client can hold the
// connection only for a bounded time and never block the event loop.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "baton/http_server.hpp"
#include "wire_response.hpp"

namespace baton::http_detail {

class listener;

class connection : public std::enable_shared_from_this<connection> {
 public:
  using tcp = boost::asio::ip::tcp;

  connection(tcp::socket socket, const http_server::limits& limits, listener& server);
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Serve requests until the client or a limit ends the connection.
  void start();
  /// Answer 503 with `message` without reading a request, then close.
  void reject(std::string message);
  /// Close now and stop calling back into the listener. Idempotent.
  void detach();

 private:
  enum class phase { reading, writing, lingering };

  void read_request();
  void on_read(const boost::system::error_code& ec);
  void on_read_timeout();
  void answer();
  /// Send an error response, then close gracefully.
  void fail(unsigned status, std::string body);
  void write(wire_response response, bool close_after);
  void on_write(const boost::system::error_code& ec);
  /// Stop sending and discard what the client still sends until it closes
  /// (bounded), so closing with unread input does not reset the connection
  /// and destroy the response in flight.
  void linger();
  void linger_read();
  void arm_timer(milliseconds timeout);
  void ended(const char* why);

  tcp::socket socket_;
  http_server::limits limits_;
  listener* server_;
  boost::asio::steady_timer timer_;
  std::uint64_t timer_generation_ = 0;  // a fired timer of an earlier phase is ignored
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  wire_response response_;
  std::array<char, 4096> discard_{};
  std::size_t discarded_ = 0;
  phase phase_ = phase::reading;
  bool close_after_write_ = false;
};

}  // namespace baton::http_detail
