// Synchronous-with-deadline operations on one Unix stream socket, built from
// asio's asynchronous ones: start the operation, run the io_context one
// handler at a time until it completes or the deadline passes, and on timeout
// cancel it and run until its handler has seen the cancellation (so no
// handler outlives the buffers it writes to).
#include "daemon_connection.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <system_error>

namespace baton::cli {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

std::string connect_failure(const error_code& ec) {
  switch (ec.value()) {
    case ENOENT:
      return "no such socket file (is the daemon running with a socket? name it with --socket "
             "or --config)";
    case ECONNREFUSED:
      return "connection refused (no daemon listens there; it may have stopped)";
    case EACCES:
    case EPERM:
      return "permission denied (the socket's mode or directory does not let this user in)";
    case ENOTDIR:
      return "a component of the path is not a directory";
    default:
      return ec.message();
  }
}

bool is_closed(const error_code& ec) {
  return ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe;
}

}  // namespace

daemon_connection::daemon_connection() : socket_(io_) {}

bool daemon_connection::run_until(const bool& done, std::optional<time_point> deadline) {
  io_.restart();
  // Each pass runs one handler; the count bound is only a backstop.
  for (long passes = 0; !done && passes < 100'000'000; ++passes) {
    const std::size_t ran = deadline ? io_.run_one_until(*deadline) : io_.run_one();
    if (ran == 0) break;  // deadline passed, or nothing left to run
  }
  if (done) return true;
  error_code ignored;
  socket_.cancel(ignored);
  io_.restart();
  // Cancelled operations complete promptly with operation_aborted.
  for (int passes = 0; !done && passes < 1000; ++passes) {
    if (io_.run_one_for(std::chrono::seconds(1)) == 0) break;
  }
  return false;
}

std::string daemon_connection::connect(const std::string& path, time_point deadline) {
  asio::local::stream_protocol::endpoint endpoint;
  try {
    endpoint = asio::local::stream_protocol::endpoint(path);
  } catch (const std::exception&) {
    return "the path is too long for a Unix socket (at most 107 bytes)";
  }
  bool done = false;
  error_code result;
  socket_.async_connect(endpoint, [&](const error_code& ec) {
    result = ec;
    done = true;
  });
  if (!run_until(done, deadline)) return "no answer while connecting (the daemon may be stuck)";
  if (result) return connect_failure(result);
  return "";
}

io_result daemon_connection::write_line(const std::string& line,
                                        std::optional<time_point> deadline) {
  output_ = line + '\n';
  bool done = false;
  error_code result;
  asio::async_write(socket_, asio::buffer(output_), [&](const error_code& ec, std::size_t) {
    result = ec;
    done = true;
  });
  if (!run_until(done, deadline)) return {io_result::kind::timed_out, ""};
  if (cancelled_) return {io_result::kind::cancelled, ""};
  if (!result) return {io_result::kind::done, ""};
  if (is_closed(result)) return {io_result::kind::closed, ""};
  return {io_result::kind::failed, result.message()};
}

io_result daemon_connection::read_line(std::optional<time_point> deadline) {
  bool done = false;
  error_code result;
  std::size_t length = 0;
  asio::async_read_until(socket_, asio::dynamic_buffer(input_, max_line_bytes), '\n',
                         [&](const error_code& ec, std::size_t n) {
                           result = ec;
                           length = n;
                           done = true;
                         });
  if (!run_until(done, deadline)) return {io_result::kind::timed_out, ""};
  if (cancelled_) return {io_result::kind::cancelled, ""};
  if (result == asio::error::not_found) {
    return {io_result::kind::failed, "a reply line is longer than 16 MiB"};
  }
  if (is_closed(result)) return {io_result::kind::closed, ""};
  if (result) return {io_result::kind::failed, result.message()};
  std::string line = input_.substr(0, length - 1);
  input_.erase(0, length);
  return {io_result::kind::done, std::move(line)};
}

void daemon_connection::cancel() {
  cancelled_ = true;
  error_code ignored;
  socket_.cancel(ignored);
}

}  // namespace baton::cli
