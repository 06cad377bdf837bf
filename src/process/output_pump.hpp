// Copies one pipe from a hook (its stdout or stderr) into the log, line by
// line, each line prefixed with the hook's name: "[on_start] text". A line
// longer than max_line_bytes is cut there instead of being buffered without
// bound; a final line without a newline is logged at end of file.
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstddef>
#include <memory>
#include <spdlog/common.h>
#include <string>

namespace baton::process {

class output_pump : public std::enable_shared_from_this<output_pump> {
 public:
  /// Longest line logged; the rest of a longer line is dropped.
  static constexpr std::size_t max_line_bytes = 4096;

  /// Takes ownership of `fd` (the read end of a pipe) and starts reading it.
  /// The pump keeps itself alive until end of file or close(): a hook's
  /// background children may hold the pipe open after the hook exits.
  static std::shared_ptr<output_pump> start(boost::asio::io_context& io, int fd,
                                            std::string name, spdlog::level::level_enum level);

  /// Logs everything already in the pipe, without waiting for more. Called
  /// when the hook has exited, so its last lines are logged before its result.
  void drain();
  /// Stops reading and closes the pipe; a pending partial line is logged.
  void close();

  output_pump(boost::asio::io_context& io, int fd, std::string name,
              spdlog::level::level_enum level);

 private:
  void wait();
  // Reads until the pipe is empty, at end of file, or after max_reads reads.
  void read_available(int max_reads);
  void consume(const char* data, std::size_t size);
  void emit_line();
  void finish();

  boost::asio::posix::stream_descriptor pipe_;
  std::string name_;
  spdlog::level::level_enum level_;
  std::string line_;
  bool truncated_ = false;
  bool finished_ = false;
  std::array<char, 8192> buffer_{};
};

}  // namespace baton::process
