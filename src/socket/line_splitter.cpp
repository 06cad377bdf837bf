// Line framing for socket clients: see line_splitter.hpp.
#include "line_splitter.hpp"

namespace baton::socket_detail {

line_splitter::line_splitter(std::size_t max_line) : max_line_(max_line) {}

void line_splitter::feed(std::string_view bytes) {
  if (too_long_) return;
  // Drop consumed lines first, so the buffer holds only the unfinished one.
  if (start_ > 0) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  buffer_.append(bytes);
}

line_splitter::status line_splitter::next(std::string& line) {
  if (too_long_) return status::too_long;
  const std::size_t newline = buffer_.find('\n', start_ + scanned_);
  if (newline == std::string::npos) {
    scanned_ = buffer_.size() - start_;
    // One byte of slack: it may be the '\r' of a "\r\n" still to come.
    if (scanned_ > max_line_ + 1) {
      too_long_ = true;
      buffer_.clear();
      buffer_.shrink_to_fit();
      start_ = scanned_ = 0;
      return status::too_long;
    }
    return status::need_more;
  }
  std::size_t length = newline - start_;
  const std::size_t next_start = newline + 1;
  if (length > 0 && buffer_[start_ + length - 1] == '\r') --length;
  if (length > max_line_) {
    too_long_ = true;
    buffer_.clear();
    buffer_.shrink_to_fit();
    start_ = scanned_ = 0;
    return status::too_long;
  }
  line.assign(buffer_, start_, length);
  start_ = next_start;
  scanned_ = 0;
  return status::line;
}

}  // namespace baton::socket_detail
