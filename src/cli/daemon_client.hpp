// The daemon's socket as the verbs see it: JSON objects in, JSON objects out,
// and failures already worded for "baton: cannot reach the daemon at <path>:
// <why>".
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "baton/time.hpp"
#include "daemon_connection.hpp"

namespace baton::cli {

/// One message from the daemon, or why there is none.
struct message {
  io_result::kind what = io_result::kind::failed;
  /// kind::done: the object received.
  nlohmann::json object;
  /// kind::done: the line as received (for --json output).
  std::string line;
  /// kind::failed and kind::timed_out: why, as a phrase.
  std::string why;

  bool ok() const { return what == io_result::kind::done; }
};

class daemon_client {
 public:
  /// `timeout` only words the timeout messages ("no reply within 5s").
  daemon_client(std::string path, milliseconds timeout);

  const std::string& path() const { return path_; }

  /// Connects; "" on success, else why not.
  std::string connect(time_point deadline);

  /// Sends `request` and reads the next message (its reply, when no events
  /// were subscribed to). A line that is not a JSON object is kind::failed.
  message ask(const nlohmann::json& request, std::optional<time_point> deadline);

  /// Sends `request` without waiting for anything.
  message send(const nlohmann::json& request, std::optional<time_point> deadline);

  /// Reads the next message.
  message next(std::optional<time_point> deadline);

  /// "baton: cannot reach the daemon at <path>: <why>".
  std::string unreachable(const std::string& why) const;
  /// The same for a message that is not ok().
  std::string unreachable(const message& m) const;

  daemon_connection& connection() { return connection_; }

 private:
  std::string path_;
  milliseconds timeout_;
  daemon_connection connection_;
};

}  // namespace baton::cli
