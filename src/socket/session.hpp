// One connected client: reads request lines and hands them to the server,
// writes replies and events from a bounded queue with asynchronous writes, so
// a slow or stuck client costs memory up to the bound and never time.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <array>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "baton/app_socket.hpp"
#include "line_splitter.hpp"

namespace baton::socket_detail {

class socket_server;

/// An encoded protocol line, shared by every client it is queued to.
using shared_line = std::shared_ptr<const std::string>;

class session : public std::enable_shared_from_this<session> {
 public:
  using stream = boost::asio::local::stream_protocol::socket;

  session(stream socket, peer_info peer, socket_server& server);
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// Start reading requests.
  void start();
  /// Queue `line` for writing. False when the queue is full (the caller drops
  /// the client); a closing or detached session accepts and discards it.
  bool send(shared_line line);
  /// Send `line` as the last message, stop reading, and end the session once
  /// it is written or after a grace period.
  void close_after(shared_line line);
  /// Close the connection now and stop calling back into the server.
  /// Idempotent; pending asynchronous operations end quietly.
  void detach();

  const peer_info& peer() const { return peer_; }
  bool attached() const { return server_ != nullptr; }
  /// Sent `subscribe`: receives published events.
  bool subscribed = false;

 private:
  void read_more();
  void on_read(const boost::system::error_code& ec, std::size_t bytes);
  void write_more();
  void on_write(const boost::system::error_code& ec);
  void ended(const char* why);

  stream socket_;
  peer_info peer_;
  socket_server* server_;
  boost::asio::steady_timer linger_timer_;
  line_splitter splitter_;
  std::array<char, 8192> read_buffer_{};
  std::deque<shared_line> queue_;
  std::size_t queued_bytes_ = 0;
  std::vector<boost::asio::const_buffer> write_buffers_;
  std::size_t in_flight_ = 0;  // messages at the queue head being written
  bool writing_ = false;
  bool closing_ = false;
};

}  // namespace baton::socket_detail
