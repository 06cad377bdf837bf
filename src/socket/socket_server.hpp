// The server behind app_socket: owns the listening socket and the client
// sessions, dispatches requests to built-in and registered commands, and fans
// published events out to subscribers. Shared-owned so asynchronous handlers
// that outlive app_socket find it gone instead of dangling.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "baton/app_socket.hpp"
#include "session.hpp"
#include "socket_file.hpp"

namespace baton::socket_detail {

class socket_server : public std::enable_shared_from_this<socket_server> {
 public:
  socket_server(boost::asio::io_context& io, socket_config config,
                app_socket::status_provider status);
  ~socket_server();
  socket_server(const socket_server&) = delete;
  socket_server& operator=(const socket_server&) = delete;

  void add_command(std::string name, app_socket::command_handler handler);
  void open(std::error_code& ec);
  const std::string& last_error() const { return last_error_; }
  void publish(const nlohmann::json& event);
  void close();
  std::size_t client_count() const { return sessions_.size(); }
  std::size_t subscriber_count() const;

  // Called by the accept loop (baton/accept_loop.hpp).
  bool accepting(std::uint64_t generation) const { return open_ && generation == generation_; }
  void accept_failed(const boost::system::error_code& ec);
  void accepted(boost::asio::local::stream_protocol::socket peer);

  // Called by sessions.
  /// Answer one request line.
  void handle_line(session& client, const std::string& line);
  /// The client sent a line over the limit: error reply, then disconnect.
  void line_too_long(session& client);
  /// The session is over (EOF, I/O error, closed after an error): forget it.
  void session_ended(session& client, const char* why);

 private:
  void reject(boost::asio::local::stream_protocol::socket& peer, const peer_info& who);
  nlohmann::json dispatch(session& client, const std::string& cmd,
                          const nlohmann::json& request);
  nlohmann::json status_reply();
  void respond(session& client, const nlohmann::json& reply);
  void drop(session& client, const char* why);
  void remove(session& client);

  socket_config config_;
  app_socket::status_provider status_;
  std::map<std::string, app_socket::command_handler, std::less<>> commands_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;
  std::vector<std::shared_ptr<session>> sessions_;
  file_identity identity_;
  std::string last_error_;
  std::uint64_t generation_ = 0;  // bumped by close(), so stale accepts are ignored
  bool open_ = false;
};

}  // namespace baton::socket_detail
