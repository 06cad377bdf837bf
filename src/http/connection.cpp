// A client connection: see connection.hpp.
#include "connection.hpp"

#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <spdlog/spdlog.h>
#include <string_view>
#include <utility>

#include "listener.hpp"

namespace baton::http_detail {
namespace {

namespace http = boost::beast::http;

// How long a closing connection keeps discarding client input (at most the
// read timeout), and how much of it, before it is cut anyway.
constexpr milliseconds max_linger{2000};
constexpr std::size_t max_linger_bytes = 256 * 1024;

// Room for one request's header and body plus what a pipelining client sent
// after it; the parser's own limits answer first.
std::size_t buffer_limit(const http_server::limits& limits) {
  return limits.max_header_bytes + limits.max_body_bytes + 64 * 1024;
}

std::string_view view_of(boost::beast::string_view text) { return {text.data(), text.size()}; }

http_response plain(unsigned status, std::string body) {
  http_response response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

}  // namespace

connection::connection(tcp::socket socket, const http_server::limits& limits, listener& server)
    : socket_(std::move(socket)),
      limits_(limits),
      server_(&server),
      timer_(socket_.get_executor()),
      buffer_(buffer_limit(limits)) {}

void connection::start() { read_request(); }

void connection::reject(std::string message) { fail(503, std::move(message)); }

void connection::read_request() {
  phase_ = phase::reading;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(
      std::min<std::size_t>(limits_.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  parser_->body_limit(limits_.max_body_bytes);
  arm_timer(limits_.read_timeout);
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                     self->on_read(ec);
                   });
}

void connection::on_read(const boost::system::error_code& ec) {
  // A read cancelled by its timeout completes after the timeout took over.
  if (server_ == nullptr || phase_ != phase::reading) return;
  if (!ec) {
    answer();
    return;
  }
  if (ec == http::error::end_of_stream) {
    ended("closed by the client");
  } else if (ec == http::error::partial_message) {
    ended("closed by the client in the middle of a request");
  } else if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    fail(431, "request header too large (limit " + std::to_string(limits_.max_header_bytes) +
                  " bytes)\n");
  } else if (ec == http::error::body_limit) {
    fail(413, "request body too large (limit " + std::to_string(limits_.max_body_bytes) +
                  " bytes)\n");
  } else if (ec.category() == make_error_code(http::error::bad_method).category()) {
    // Every other parser error: the bytes are not an HTTP/1 request.
    fail(400, "bad request: " + ec.message() + "\n");
  } else {
    ended("read failed");
  }
}

void connection::on_read_timeout() {
  // Something of a request came: tell the client why it is cut off. An idle
  // kept-alive connection is simply closed.
  const bool partial = buffer_.size() > 0 || (parser_ && parser_->got_some());
  boost::system::error_code ignored;
  socket_.cancel(ignored);
  if (partial) {
    spdlog::debug("http: request not complete within {}ms", limits_.read_timeout.count());
    fail(408, "request timeout\n");
  } else {
    ended("idle");
  }
}

void connection::answer() {
  const auto& request = parser_->get();
  const std::string_view method = view_of(request.method_string());
  const bool keep_alive = request.keep_alive();
  const http_response response =
      server_->answer(http_request_view{method, view_of(request.target()), request.body()});
  // The handler may have closed the server.
  if (server_ == nullptr) return;
  write(make_wire_response(response, request.version(), keep_alive, method == "HEAD"),
        !keep_alive);
}

void connection::fail(unsigned status, std::string body) {
  // An error response ends the connection: the rest of the input cannot be
  // trusted to start at a request boundary.
  write(make_wire_response(plain(status, std::move(body)), 11, false, false), true);
}

void connection::write(wire_response response, bool close_after) {
  phase_ = phase::writing;
  close_after_write_ = close_after;
  response_ = std::move(response);
  arm_timer(limits_.write_timeout);
  http::async_write(socket_, response_,
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      self->on_write(ec);
                    });
}

void connection::on_write(const boost::system::error_code& ec) {
  if (server_ == nullptr || phase_ != phase::writing) return;
  if (ec) {
    ended("write failed");
    return;
  }
  response_ = {};
  if (close_after_write_) {
    linger();
  } else {
    read_request();
  }
}

void connection::linger() {
  phase_ = phase::lingering;
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  arm_timer(std::min(limits_.read_timeout, max_linger));
  linger_read();
}

void connection::linger_read() {
  socket_.async_read_some(
      boost::asio::buffer(discard_),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t bytes) {
        if (self->server_ == nullptr || self->phase_ != phase::lingering) return;
        self->discarded_ += bytes;
        if (ec) {
          self->ended("closed");
        } else if (self->discarded_ > max_linger_bytes) {
          self->ended("kept sending after the last response");
        } else {
          self->linger_read();
        }
      });
}

void connection::arm_timer(milliseconds timeout) {
  const std::uint64_t generation = ++timer_generation_;
  timer_.expires_after(timeout);
  timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& ec) {
    if (ec || self->server_ == nullptr || generation != self->timer_generation_) return;
    switch (self->phase_) {
      case phase::reading:
        self->on_read_timeout();
        break;
      case phase::writing:
        self->ended("did not take its response in time");
        break;
      case phase::lingering:
        self->ended("closed after linger");
        break;
    }
  });
}

void connection::ended(const char* why) {
  if (server_ == nullptr) return;
  listener* const server = server_;
  detach();
  server->connection_ended(*this, why);
}

void connection::detach() {
  if (server_ == nullptr) return;
  server_ = nullptr;
  ++timer_generation_;
  timer_.cancel();
  boost::system::error_code ignored;
  socket_.close(ignored);
}

}  // namespace baton::http_detail
