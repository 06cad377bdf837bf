// Pipe-to-log copying for hook output.
#include "output_pump.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <spdlog/spdlog.h>
#include <utility>

namespace baton::process {

std::shared_ptr<output_pump> output_pump::start(boost::asio::io_context& io, int fd,
                                                std::string name,
                                                spdlog::level::level_enum level) {
  auto pump = std::make_shared<output_pump>(io, fd, std::move(name), level);
  pump->wait();
  return pump;
}

output_pump::output_pump(boost::asio::io_context& io, int fd, std::string name,
                         spdlog::level::level_enum level)
    : pipe_(io, fd), name_(std::move(name)), level_(level) {
  boost::system::error_code ignored;
  // Reads are done by hand after a readiness wait and must never block the loop.
  pipe_.non_blocking(true, ignored);
}

void output_pump::drain() { read_available(64); }

void output_pump::close() {
  if (finished_) return;
  finish();
}

void output_pump::wait() {
  if (finished_) return;
  pipe_.async_wait(boost::asio::posix::descriptor_base::wait_read,
                   [self = shared_from_this()](const boost::system::error_code& ec) {
                     if (ec || self->finished_) return;
                     self->read_available(16);
                     self->wait();
                   });
}

void output_pump::read_available(int max_reads) {
  for (int i = 0; i < max_reads && !finished_; ++i) {
    boost::system::error_code ec;
    std::size_t n = pipe_.read_some(boost::asio::buffer(buffer_), ec);
    if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) return;
    if (ec == boost::asio::error::interrupted) continue;
    if (ec) {
      if (ec != boost::asio::error::eof) {
        spdlog::debug("[{}] output pipe: {}", name_, ec.message());
      }
      finish();
      return;
    }
    consume(buffer_.data(), n);
  }
}

void output_pump::consume(const char* data, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) {
    char c = data[i];
    if (c == '\n') {
      emit_line();
    } else if (line_.size() < max_line_bytes) {
      line_.push_back(c);
    } else {
      truncated_ = true;
    }
  }
}

void output_pump::emit_line() {
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  if (truncated_) {
    spdlog::log(level_, "[{}] {} [line cut at {} bytes]", name_, line_, max_line_bytes);
  } else {
    spdlog::log(level_, "[{}] {}", name_, line_);
  }
  line_.clear();
  truncated_ = false;
}

void output_pump::finish() {
  finished_ = true;
  if (!line_.empty() || truncated_) emit_line();
  boost::system::error_code ignored;
  pipe_.close(ignored);
}

}  // namespace baton::process
