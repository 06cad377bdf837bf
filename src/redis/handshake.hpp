// What a fresh Redis connection says before any caller's command runs, as a
// machine without I/O: AUTH (with a password), SELECT (db other than 0),
// INFO server (when the caller wants the server's run_id) and ROLE (when the
// server must be a master), in that order. The machine decides which commands
// to send, how to read each reply and when the handshake is done or failed,
// with the error code and the words the connection reports; the connection
// only writes what it is told and feeds back the replies.
//
// The commands are sent pipelined (all of them before the first reply), so a
// handshake costs one round trip; the replies come back in the order sent and
// the first refusal ends it, the replies still on their way are not read.
#pragma once

#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "redis_reply.hpp"

namespace baton::redis_detail {

/// What a handshake needs to know, fixed for one connection attempt.
struct handshake_settings {
  /// ACL user for AUTH ("" = the default user: AUTH with the password only).
  std::string username;
  /// The resolved password ("" = no AUTH). Handed out with AUTH and not
  /// kept; never put into an error.
  std::string password;
  /// SELECT this database (0 = none sent: a connection starts in 0).
  int db = 0;
  /// Send `INFO server` and keep the server's run_id (see run_id()).
  bool read_run_id = false;
  /// Send `ROLE` and fail (redis_errc::not_master) unless the server is a master.
  bool confirm_master = false;
  /// "host:port" or the socket path, for ROLE's error details.
  std::string peer;
};

/// One handshake: an action enum, the plan of steps and how far each half
/// (sending, reading) got; one resume per thing that happened.
class handshake {
 public:
  enum class action_type {
    send,         ///< write `command`, then resume()
    await_reply,  ///< every command is written: wait for the next reply
    done,         ///< every reply read: the connection is ready
    failed,       ///< drop the attempt with `ec` and `detail`
  };
  struct action {
    action_type type = action_type::await_reply;
    std::vector<std::string> command;  ///< with send
    std::error_code ec;                ///< with failed
    std::string detail;                ///< with failed
  };

  explicit handshake(handshake_settings settings);

  /// Call first, and again after carrying out each `send`: the next command
  /// to write, or (all written) await_reply, or done when there is nothing
  /// to say at all.
  action resume();
  /// Call with each reply to a handshake command, in the order sent: reads
  /// it, then await_reply (more to come), done, or failed. After done or
  /// failed every call answers the same again.
  action resume(const redis_reply& reply);

  /// The server's run_id from INFO server: "" before its reply, when INFO
  /// was refused other than by the ACL, or when the reply had none.
  const std::string& run_id() const { return run_id_; }

 private:
  enum class step { auth, select, info, role };

  action read(step s, const redis_reply& reply);
  action finish(action outcome);

  handshake_settings settings_;
  std::vector<step> plan_;
  std::size_t sent_ = 0;  // steps whose command was handed out
  std::size_t read_ = 0;  // steps whose reply was read
  std::string run_id_;
  std::optional<action> outcome_;  // done or failed, once decided
};

}  // namespace baton::redis_detail
