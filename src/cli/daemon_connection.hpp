// One client connection to the daemon's Unix socket, used synchronously: each
// call drives a private io_context until its operation completes or its
// deadline passes, then cancels whatever is left. So a silent daemon costs the
// caller at most its timeout, never a hang.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <cstddef>
#include <optional>
#include <string>

#include "baton/time.hpp"

namespace baton::cli {

/// No deadline: wait until the operation completes or cancel() is called.
inline constexpr std::optional<time_point> no_deadline = std::nullopt;

/// What a read or write came to.
struct io_result {
  enum class kind {
    done,       ///< the operation completed; `text` is the line read (without '\n')
    closed,     ///< the daemon closed the connection
    timed_out,  ///< the deadline passed first
    cancelled,  ///< cancel() was called (e.g. by a signal handler)
    failed,     ///< anything else; `text` says why, as a phrase
  };
  kind what = kind::failed;
  std::string text;
};

class daemon_connection {
 public:
  /// Longest reply line accepted (16 MiB); longer ones fail the read.
  static constexpr std::size_t max_line_bytes = 16 * 1024 * 1024;

  daemon_connection();
  daemon_connection(const daemon_connection&) = delete;
  daemon_connection& operator=(const daemon_connection&) = delete;

  /// Connects to `path`. Returns "" on success, else why not, as a phrase
  /// for "cannot reach the daemon at <path>: <why>".
  std::string connect(const std::string& path, time_point deadline);

  /// Sends `line` plus '\n'.
  io_result write_line(const std::string& line, std::optional<time_point> deadline);

  /// Reads the next line.
  io_result read_line(std::optional<time_point> deadline);

  /// Makes the pending operation end with kind::cancelled. Only from a
  /// handler running on io().
  void cancel();

  /// For handlers that must run while this connection waits (signals).
  boost::asio::io_context& io() { return io_; }

 private:
  /// Runs io_ until `done` or the deadline; on the deadline, cancels and
  /// drains. Returns false on timeout.
  bool run_until(const bool& done, std::optional<time_point> deadline);

  boost::asio::io_context io_;
  boost::asio::local::stream_protocol::socket socket_;
  std::string input_;
  std::string output_;
  bool cancelled_ = false;
};

}  // namespace baton::cli
