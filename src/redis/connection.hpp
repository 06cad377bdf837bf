// One pipelined Redis connection. Commands are written as they come and their
// replies matched first-in first-out. The connection opens lazily on the first
// command, and again on the first command after a failure; connect_timeout
// covers connect + the handshake (AUTH, SELECT, INFO server, ROLE: as much of
// it as the options ask for; handshake.hpp decides what is said and how each
// reply is read). Each command has command_timeout to get its reply; on a
// timeout the connection is closed and every pending command fails, since a
// late reply would otherwise be matched to the wrong command.
//
// Completions are always posted (never run inline, never inside the read
// loop), so a completion may freely issue commands or close the connection.
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "baton/lease_store.hpp"
#include "baton/redis_url.hpp"
#include "baton/time.hpp"
#include "handshake.hpp"
#include "redis_reply.hpp"
#include "resp.hpp"
#include "transport.hpp"

namespace baton::redis_detail {

struct connection_options {
  /// Where to connect and how to log in (the password already resolved).
  redis_endpoint endpoint;
  /// When set, the password is this file's first line, read again before
  /// every AUTH: a secret rotated in place is used from the next reconnect on.
  std::string password_file;
  /// The option that names password_file, for error messages.
  std::string password_file_option = "redis.password_file";
  milliseconds connect_timeout{1000};
  milliseconds command_timeout{1000};
  /// When set, the handshake also sends `INFO server`, and this is called with
  /// the server's run_id ("" when INFO failed or had none) once the handshake
  /// is done and before any queued command is sent: commands it issues run
  /// ahead of them. Called inline from the read path; it may issue commands
  /// or close the connection.
  std::function<void(const std::string& run_id)> on_ready;
  /// When set, the handshake also sends `ROLE` and fails the attempt
  /// (redis_errc::not_master) unless the server answers that it is a master:
  /// a server named by Sentinel or a slot map may have been demoted since.
  bool confirm_master = false;
  /// Makes the transport of each attempt; empty = make_transport.
  transport_factory transport;
};

/// The outcome of one command: a transport-level failure (`ec`, `detail`), or
/// a reply, which may itself be an error reply.
struct command_result {
  std::error_code ec;
  std::string detail;
  redis_reply reply;
};

class connection : public std::enable_shared_from_this<connection> {
 public:
  enum class state { disconnected, connecting, connected, closed };
  using completion = std::function<void(command_result)>;
  using push_handler = std::function<void(redis_reply)>;
  using disconnect_handler = std::function<void(std::error_code, std::string detail)>;

  static std::shared_ptr<connection> create(boost::asio::io_context& io,
                                            connection_options options);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Sends `args` as one command; connects first when needed. `done` runs
  /// exactly once, posted. After close() it gets operation_aborted.
  void async_exec(std::vector<std::string> args, completion done);
  /// Receives pub/sub messages (arrays starting with "message"), posted.
  void set_push_handler(push_handler handler);
  /// Told (posted) when an established connection breaks.
  void set_disconnect_handler(disconnect_handler handler);
  /// Final: fails everything pending with operation_aborted and drops the
  /// handlers; later commands fail the same way.
  void close();
  /// Drops the current connection (pending commands fail with
  /// connection_lost and `why`); the next command connects again. For a
  /// server that answered as a replica would (READONLY, MOVED) although the
  /// socket is healthy.
  void reconnect(const std::string& why);
  /// Changes with every connection attempt and every drop: two calls that
  /// see the same value ran on the same connection.
  std::uint64_t generation() const { return generation_; }
  /// Where the current (or last) attempt connects: "host:port", or "" before
  /// the first one.
  const std::string& peer() const { return peer_; }

  state current_state() const { return state_; }

 private:
  struct command {
    std::string wire;
    completion done;
    bool internal = false;  // handshake: run inline, never reported to callers
    time_point deadline = time_point::max();
  };

  connection(boost::asio::io_context& io, connection_options options);

  void start_connect();
  void on_transport_connected();
  void carry_out(handshake::action next);
  void finish_handshake();
  void send(command c, time_point deadline);
  void flush();
  void start_read();
  void on_read(std::uint64_t generation, std::error_code ec, std::size_t n);
  void dispatch(redis_reply reply);
  void arm_command_timer();
  void on_command_timer(std::uint64_t generation);
  void drop(std::error_code ec, const std::string& detail);
  void tear_down(state next, std::error_code ec, const std::string& detail);
  void fail_all(std::error_code ec, const std::string& detail);
  void complete(command& c, command_result result);

  boost::asio::io_context& io_;
  connection_options options_;
  state state_ = state::disconnected;
  // Bumped on every (re)connect and drop so stale I/O completions are ignored.
  std::uint64_t generation_ = 0;
  std::shared_ptr<stream_transport> transport_;
  resp_reader reader_;
  std::deque<command> waiting_;  // not sent yet: the connection is being set up
  std::deque<command> pending_;  // sent, awaiting replies in order
  std::string outbox_;           // formatted, not yet handed to the transport
  bool writing_ = false;
  std::optional<handshake> handshake_;  // this attempt's; reset by start_connect
  std::string peer_;
  std::array<char, 16 * 1024> read_buffer_{};
  boost::asio::steady_timer connect_timer_;
  boost::asio::steady_timer command_timer_;
  push_handler on_push_;
  disconnect_handler on_disconnect_;
};

/// A connection's state as the store's status says it.
link_state link_of(connection::state s);

}  // namespace baton::redis_detail
