// The server behind http_server: owns the listening socket and the client
// connections and calls the handler. Shared-owned so asynchronous handlers
// that outlive http_server find it closed instead of dangling.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "baton/http_server.hpp"

namespace baton::http_detail {

class connection;

class listener : public std::enable_shared_from_this<listener> {
 public:
  using tcp = boost::asio::ip::tcp;

  listener(boost::asio::io_context& io, std::string listen, http_handler handler,
           http_server_limits limits);
  ~listener();
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;

  void open(std::error_code& ec);
  const std::string& last_error() const { return last_error_; }
  tcp::endpoint local_endpoint() const { return endpoint_; }
  void close();
  std::size_t connection_count() const { return connections_.size(); }

  // Called by the accept loop (baton/accept_loop.hpp).
  bool accepting(std::uint64_t generation) const { return open_ && generation == generation_; }
  void accept_failed(const boost::system::error_code& ec);
  void accepted(tcp::socket peer);

  // Called by connections.
  /// The handler's answer to one request; a throwing handler gives 500.
  http_response answer(const http_request_view& request);
  /// The connection is over: forget it.
  void connection_ended(connection& client, const char* why);

 private:
  void fail_open(std::error_code& ec, const boost::system::error_code& cause, const char* step);

  std::string listen_;
  http_handler handler_;
  http_server::limits limits_;
  tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;
  tcp::endpoint endpoint_;
  std::vector<std::shared_ptr<connection>> connections_;
  std::vector<std::shared_ptr<connection>> rejected_;  // being told "too many connections"
  std::string last_error_;
  std::uint64_t generation_ = 0;  // bumped by close(), so stale accepts are ignored
  bool open_ = false;
  bool refusing_ = false;  // at max_connections since the last warning
};

}  // namespace baton::http_detail
