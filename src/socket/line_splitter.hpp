// Splits a byte stream from one client into lines, with a hard cap on line
// length so a client that never sends "\n" cannot make the daemon buffer
// without bound. Pure: no I/O, testable on its own.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace baton::socket_detail {

class line_splitter {
 public:
  enum class status {
    line,       ///< a complete line was returned
    need_more,  ///< no complete line buffered yet
    too_long,   ///< a line exceeds the limit; the splitter stays in this state
  };

  /// `max_line` is the longest line accepted, in bytes, newline excluded.
  explicit line_splitter(std::size_t max_line);

  /// Append received bytes. Call next() until need_more before feeding again,
  /// so at most max_line + one read stays buffered.
  void feed(std::string_view bytes);
  /// Take the next complete line into `line`, without "\n" or a trailing "\r".
  status next(std::string& line);
  /// True if bytes of an unfinished line are buffered.
  bool has_partial() const { return start_ < buffer_.size(); }

 private:
  std::size_t max_line_;
  std::string buffer_;
  std::size_t start_ = 0;    // first byte of the current line in buffer_
  std::size_t scanned_ = 0;  // bytes from start_ already known to hold no '\n'
  bool too_long_ = false;
};

}  // namespace baton::socket_detail
