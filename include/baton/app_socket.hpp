// The Unix socket through which co-located apps follow the election:
// newline-delimited JSON, one object per line both ways. Subscribers get every
// event in order; a client that stops reading is dropped when its bounded queue
// fills, never allowed to block the daemon.
//
// ## Protocol
//
// Transport: a SOCK_STREAM Unix socket at `socket.path`, file mode
// `socket.mode`. Every message, in both directions, is one JSON object on one
// line, terminated by "\n". In requests a "\r" before the "\n" is ignored,
// blank lines are skipped, and strings must be valid UTF-8. In replies and
// events, invalid UTF-8 (from the daemon's data) is replaced by U+FFFD.
//
// Requests: `{"cmd": "<name>", ...}`. If a request carries an "id" (a
// string, number, boolean or null), its reply, error replies included, carries
// the same "id". Replies to one client come in the order of its requests,
// interleaved with events in the order they were published.
//
//   {"cmd":"ping"}       -> {"type":"pong"}
//   {"cmd":"status"}     -> {"type":"status", <fields of the status object>}
//                           The daemon's status object is merged into the
//                           reply at top level ("type", and "id" when the
//                           request has one, win over fields of that name).
//                           A non-object status is nested as "status".
//   {"cmd":"subscribe"}  -> {"type":"subscribed"}, then every event published
//                           after it, in order, for as long as the connection
//                           stays open. Subscribing twice is harmless. A
//                           subscriber may still send any command.
//   {"cmd":"<other>"}    -> commands the daemon registered with add_command():
//                           the handler's object, "type" defaulting to the
//                           command name; a non-object result is sent as
//                           {"type":"<other>","result":<value>}.
//
// Errors (the connection stays open unless said otherwise):
//   invalid JSON        -> {"type":"error","error":"invalid JSON: <parser message>"}
//   not an object       -> {"type":"error","error":"request must be a JSON object"}
//   no string "cmd"     -> {"type":"error","error":"request has no \"cmd\" string"}
//   unknown command     -> {"type":"error","error":"unknown command 'x'"}
//   command refused     -> {"type":"error","error":"<what the handler threw>"}
//   status failed       -> {"type":"error","error":"status unavailable: <why>"}
//   line over 64 KiB    -> {"type":"error","error":"line too long (limit 65536 bytes)"},
//                          then the server closes the connection (after at
//                          most 2 s if the client does not take the reply).
//   too many clients    -> {"type":"error","error":"too many clients (limit 256)"},
//                          sent at accept, then the connection is closed.
//
// Events: whatever the daemon publishes, as-is, e.g.
//   {"type":"event","event":"start",...}
//
// Back-pressure: each client has an outgoing queue of at most 1024 messages or
// 1 MiB, whichever fills first. A client whose queue is full (it does not
// read) is disconnected, with a warning in the daemon's log; the daemon never
// waits for a client.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <type_traits>

#include "baton/config.hpp"

namespace baton {

/// Failures of app_socket::open() that have no errno of their own. Other
/// failures are system errors (e.g. no_such_file_or_directory when the parent
/// directory of the path does not exist).
enum class socket_errc {
  path_too_long = 1,  ///< the path does not fit in sockaddr_un (107 bytes)
  in_use,             ///< another process is listening on the path
  not_a_socket,       ///< the path exists and is not a socket (never deleted)
};

/// Category of socket_errc ("baton.socket").
const std::error_category& socket_category() noexcept;
std::error_code make_error_code(socket_errc e) noexcept;

/// Who is on the other end of a client connection (SO_PEERCRED at accept).
struct peer_info {
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  pid_t pid = -1;  ///< -1 when unknown
};

class app_socket {
 public:
  /// Builds the reply object of the `status` command.
  using status_provider = std::function<nlohmann::json()>;
  /// Handles one request of a registered command. Returns the reply object;
  /// "type" defaults to the command name, a non-object result is sent as
  /// {"type": name, "result": value}. Throwing std::exception sends
  /// {"type":"error","error": what()} (e.g. to refuse a peer by uid).
  /// Runs on the io_context; it may call publish() or close().
  using command_handler =
      std::function<nlohmann::json(const nlohmann::json& request, const peer_info& peer)>;

  /// Longest request line accepted, newline excluded (64 KiB).
  static constexpr std::size_t max_line_bytes = 64 * 1024;
  /// Most clients connected at once; more are told so and closed.
  static constexpr std::size_t max_clients = 256;
  /// Outgoing queue limits per client; the client is dropped when either is
  /// hit. One message larger than the byte limit still goes to a client with
  /// an empty queue.
  static constexpr std::size_t max_queued_messages = 1024;
  static constexpr std::size_t max_queued_bytes = 1024 * 1024;

  app_socket(boost::asio::io_context& io, socket_config config, status_provider status);
  /// Calls close().
  ~app_socket();
  app_socket(const app_socket&) = delete;
  app_socket& operator=(const app_socket&) = delete;

  /// Register command `name` (replacing an earlier handler of that name).
  /// The built-in names ping, status and subscribe are reserved: throws
  /// std::invalid_argument. May be called before or after open().
  void add_command(std::string name, command_handler handler);

  /// Create the socket file (replacing a stale one, refusing a live one or a
  /// non-socket file), set its mode, start accepting. The parent directory
  /// must exist. An empty config path opens nothing and succeeds. On failure
  /// `ec` is set and last_error() says what happened, naming the path.
  void open(std::error_code& ec);
  /// As open(ec), but throws std::system_error whose what() is last_error().
  void open();
  /// One line describing the last open() failure ("" if none), e.g.
  /// "another process is listening on /run/baton/app.sock".
  const std::string& last_error() const;

  /// Send `event` (one JSON object) to every subscriber, in order. Never
  /// blocks: it only queues; writes complete on the io_context.
  void publish(const nlohmann::json& event);
  /// Stop accepting, close every client, remove the socket file if it is
  /// still the one open() created (same inode). Idempotent.
  void close();
  /// Number of connected clients.
  std::size_t client_count() const;
  /// Number of connected clients that sent `subscribe`.
  std::size_t subscriber_count() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton

template <>
struct std::is_error_code_enum<baton::socket_errc> : std::true_type {};
