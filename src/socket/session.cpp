// A connected client: see session.hpp.
#include "session.hpp"

#include <boost/asio/error.hpp>
#include <algorithm>
#include <boost/asio/write.hpp>
#include <chrono>
#include <utility>

#include "socket_server.hpp"

namespace baton::socket_detail {
namespace {

// How long a connection being closed after an error reply waits for the
// client to take that reply before it is cut.
constexpr std::chrono::seconds close_linger{2};

// Messages gathered into one write; bounds the iovec array.
constexpr std::size_t max_gather = 64;

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

}  // namespace

session::session(stream socket, peer_info peer, socket_server& server)
    : socket_(std::move(socket)),
      peer_(peer),
      server_(&server),
      linger_timer_(socket_.get_executor()),
      splitter_(app_socket::max_line_bytes) {}

void session::start() { read_more(); }

void session::read_more() {
  socket_.async_read_some(boost::asio::buffer(read_buffer_),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      std::size_t bytes) {
                            self->on_read(ec, bytes);
                          });
}

void session::on_read(const boost::system::error_code& ec, std::size_t bytes) {
  if (server_ == nullptr || closing_) return;
  if (ec) {
    if (ec == boost::asio::error::eof) {
      ended(splitter_.has_partial() ? "disconnected mid-line" : "disconnected");
    } else {
      ended("read failed");
    }
    return;
  }
  splitter_.feed(std::string_view(read_buffer_.data(), bytes));
  // Hold ourselves: a command handler may make the server drop us.
  const auto self = shared_from_this();
  std::string line;
  for (;;) {
    const auto got = splitter_.next(line);
    if (got == line_splitter::status::need_more) break;
    if (got == line_splitter::status::too_long) {
      server_->line_too_long(*this);
      return;
    }
    if (is_blank(line)) continue;
    server_->handle_line(*this, line);
    if (server_ == nullptr || closing_) return;
  }
  read_more();
}

bool session::send(shared_line line) {
  if (server_ == nullptr || closing_) return true;
  // A single message over the byte limit still goes to a client that has
  // nothing queued, so one large status reply does not drop everyone.
  if (!queue_.empty() && (queue_.size() >= app_socket::max_queued_messages ||
                          queued_bytes_ + line->size() > app_socket::max_queued_bytes)) {
    return false;
  }
  queued_bytes_ += line->size();
  queue_.push_back(std::move(line));
  write_more();
  return true;
}

void session::close_after(shared_line line) {
  if (server_ == nullptr || closing_) return;
  closing_ = true;
  subscribed = false;
  queued_bytes_ += line->size();
  queue_.push_back(std::move(line));
  linger_timer_.expires_after(close_linger);
  linger_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec && self->server_ != nullptr) self->ended("did not take its last reply");
  });
  write_more();
}

void session::write_more() {
  if (writing_ || queue_.empty()) return;
  write_buffers_.clear();
  in_flight_ = std::min(queue_.size(), max_gather);
  for (std::size_t i = 0; i < in_flight_; ++i) {
    write_buffers_.push_back(boost::asio::buffer(*queue_[i]));
  }
  writing_ = true;
  boost::asio::async_write(socket_, write_buffers_,
                           [self = shared_from_this()](const boost::system::error_code& ec,
                                                       std::size_t) { self->on_write(ec); });
}

void session::on_write(const boost::system::error_code& ec) {
  writing_ = false;
  if (server_ == nullptr) return;
  if (ec) {
    ended("write failed");
    return;
  }
  for (std::size_t i = 0; i < in_flight_; ++i) {
    queued_bytes_ -= queue_.front()->size();
    queue_.pop_front();
  }
  in_flight_ = 0;
  if (closing_ && queue_.empty()) {
    ended("closed after error");
    return;
  }
  write_more();
}

void session::ended(const char* why) {
  if (server_ != nullptr) server_->session_ended(*this, why);
}

void session::detach() {
  server_ = nullptr;
  subscribed = false;
  linger_timer_.cancel();
  boost::system::error_code ignored;
  socket_.shutdown(stream::shutdown_both, ignored);
  socket_.close(ignored);
  // Release memory now; the queue is not needed once the socket is closed.
  // Buffers of an in-flight write stay alive: the aborted write still refers
  // to them until its handler runs.
  if (!writing_) {
    queue_.clear();
    queued_bytes_ = 0;
  }
}

}  // namespace baton::socket_detail
