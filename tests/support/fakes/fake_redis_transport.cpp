// The scripted transport: a byte inbox the test fills, a record of the bytes
// the client wrote, and completions posted on the io_context. The command
// parser only knows what redisFormatCommandArgv produces: arrays of bulk
// strings.
#include "support/fakes/fake_redis_transport.hpp"

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

namespace baton::test {
namespace {

namespace asio = boost::asio;

std::error_code aborted() { return boost::system::error_code(asio::error::operation_aborted); }

std::string peer_of(const redis_endpoint& endpoint) {
  if (endpoint.kind == redis_endpoint::transport::unix_socket) return endpoint.path;
  const bool v6 = endpoint.host.find(':') != std::string::npos;
  return (v6 ? "[" + endpoint.host + "]" : endpoint.host) + ":" + std::to_string(endpoint.port);
}

// Reads "<prefix><number>\r\n" at `at`; false when incomplete.
bool read_line_number(const std::string& s, std::size_t& at, char prefix, long long& out) {
  const auto end = s.find("\r\n", at);
  if (end == std::string::npos) return false;
  if (s[at] != prefix) throw std::runtime_error("fake redis: client wrote non-command bytes");
  out = std::stoll(s.substr(at + 1, end - at - 1));
  at = end + 2;
  return true;
}

// One command from `s` at `at`, advancing `at`; false when incomplete.
bool parse_command(const std::string& s, std::size_t& at, std::vector<std::string>& out) {
  std::size_t pos = at;
  long long count = 0;
  if (!read_line_number(s, pos, '*', count)) return false;
  std::vector<std::string> args;
  for (long long i = 0; i < count; ++i) {
    if (pos >= s.size()) return false;
    long long len = 0;
    if (!read_line_number(s, pos, '$', len)) return false;
    const auto n = static_cast<std::size_t>(len);
    if (s.size() < pos + n + 2) return false;
    args.push_back(s.substr(pos, n));
    pos += n + 2;
  }
  at = pos;
  out = std::move(args);
  return true;
}

}  // namespace

namespace resp {
std::string simple(const std::string& s) { return "+" + s + "\r\n"; }
std::string error(const std::string& s) { return "-" + s + "\r\n"; }
std::string integer(long long i) { return ":" + std::to_string(i) + "\r\n"; }
std::string bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}
std::string nil() { return "$-1\r\n"; }
std::string array(const std::vector<std::string>& encoded) {
  std::string out = "*" + std::to_string(encoded.size()) + "\r\n";
  for (const auto& e : encoded) out += e;
  return out;
}
std::string bulk_array(const std::vector<std::string>& strings) {
  std::vector<std::string> encoded;
  for (const auto& s : strings) encoded.push_back(bulk(s));
  return array(encoded);
}
}  // namespace resp

fake_redis_transport::fake_redis_transport(asio::io_context& io, std::string peer,
                                           std::size_t index)
    : io_(io),
      peer_(std::move(peer)),
      index_(index),
      created_at_(std::chrono::steady_clock::now()) {}

void fake_redis_transport::fail_connect(std::error_code ec) {
  connect_mode_ = connect_mode::fail;
  connect_error_ = ec;
}

void fake_redis_transport::hang_connect() { connect_mode_ = connect_mode::hang; }

void fake_redis_transport::fail_writes(std::error_code ec) { write_error_ = ec; }

void fake_redis_transport::set_responder(responder r) { responder_ = std::move(r); }

void fake_redis_transport::set_read_chunk(std::size_t n) { read_chunk_ = n; }

void fake_redis_transport::feed(const std::string& bytes) {
  inbox_ += bytes;
  maybe_deliver();
}

void fake_redis_transport::close_with_eof() {
  close_with_error(boost::system::error_code(asio::error::eof));
}

void fake_redis_transport::close_with_error(std::error_code ec) {
  end_ = ec;
  maybe_deliver();
}

std::vector<std::string> fake_redis_transport::command_names() const {
  std::vector<std::string> names;
  for (const auto& c : commands_) names.push_back(c.empty() ? "" : c.front());
  return names;
}

void fake_redis_transport::abandon() {
  pending_connect_ = nullptr;
  pending_read_ = nullptr;
  responder_ = nullptr;
}

void fake_redis_transport::async_connect(connect_handler handler) {
  connect_called_ = true;
  if (closed_) {
    asio::post(io_, [self = shared_from_this(), h = std::move(handler)] {
      h(aborted(), "connect " + self->peer_ + ": closed");
    });
    return;
  }
  switch (connect_mode_) {
    case connect_mode::succeed:
      asio::post(io_, [self = shared_from_this(), h = std::move(handler)] {
        if (self->closed_) {
          h(aborted(), "connect " + self->peer_ + ": closed");
          return;
        }
        self->connected_ = true;
        h({}, {});
      });
      break;
    case connect_mode::fail:
      asio::post(io_, [self = shared_from_this(), h = std::move(handler)] {
        h(self->connect_error_, "connect " + self->peer_ + ": " + self->connect_error_.message());
      });
      break;
    case connect_mode::hang:
      pending_connect_ = std::move(handler);
      break;
  }
}

void fake_redis_transport::async_write(const char* data, std::size_t size, io_handler handler) {
  if (closed_) {
    asio::post(io_, [self = shared_from_this(), h = std::move(handler)] { h(aborted(), 0); });
    return;
  }
  if (write_error_) {
    asio::post(io_, [self = shared_from_this(), h = std::move(handler)] {
      h(self->write_error_, 0);
    });
    return;
  }
  written_.append(data, size);
  const auto before = commands_.size();
  parse_written();
  asio::post(io_, [self = shared_from_this(), h = std::move(handler), size] { h({}, size); });
  for (auto i = before; i < commands_.size(); ++i) {
    asio::post(io_, [self = shared_from_this(), c = commands_[i]] {
      if (self->closed_ || !self->responder_) return;
      auto r = self->responder_;  // a copy: it may replace itself
      r(*self, c);
    });
  }
}

void fake_redis_transport::async_read_some(char* data, std::size_t size, io_handler handler) {
  if (pending_read_) throw std::logic_error("fake redis: two reads outstanding");
  read_data_ = data;
  read_size_ = size;
  pending_read_ = std::move(handler);
  maybe_deliver();
}

void fake_redis_transport::close() {
  if (closed_) return;
  closed_ = true;
  if (pending_connect_) {
    asio::post(io_, [self = shared_from_this(), h = std::move(pending_connect_)] {
      h(aborted(), "connect " + self->peer_ + ": closed");
    });
    pending_connect_ = nullptr;
  }
  maybe_deliver();
}

void fake_redis_transport::maybe_deliver() {
  if (!pending_read_ || delivery_posted_) return;
  if (inbox_.empty() && !end_ && !closed_) return;
  delivery_posted_ = true;
  asio::post(io_, [self = shared_from_this()] {
    self->delivery_posted_ = false;
    auto h = std::move(self->pending_read_);
    self->pending_read_ = nullptr;
    if (!h) return;  // abandoned
    if (self->closed_) {
      h(aborted(), 0);
      return;
    }
    if (!self->inbox_.empty()) {
      auto n = std::min(self->read_size_, self->inbox_.size());
      if (self->read_chunk_ > 0) n = std::min(n, self->read_chunk_);
      std::memcpy(self->read_data_, self->inbox_.data(), n);
      self->inbox_.erase(0, n);
      h({}, n);
      return;
    }
    h(self->end_, 0);
  });
}

void fake_redis_transport::parse_written() {
  std::vector<std::string> c;
  while (parsed_ < written_.size() && parse_command(written_, parsed_, c)) {
    commands_.push_back(std::move(c));
  }
}

fake_redis_factory::state::~state() {
  // Pending handlers hold their connection, which holds its transport: let
  // go of them so a test that ends with an attempt in flight leaks nothing.
  for (auto& t : transports) t->abandon();
}

fake_redis_factory::fake_redis_factory() : state_(std::make_shared<state>()) {}

void fake_redis_factory::on_create(setup s) { state_->on_create = std::move(s); }

redis_detail::transport_factory fake_redis_factory::factory() const {
  // Weak: the connection keeps its options (and so this function) alive, and
  // must not keep the record alive in turn.
  return [weak = std::weak_ptr<state>(state_)](asio::io_context& io,
                                               const redis_endpoint& endpoint)
             -> std::shared_ptr<redis_detail::stream_transport> {
    auto s = weak.lock();
    if (!s) throw std::logic_error("fake redis: the factory's record is gone");
    auto t = std::make_shared<fake_redis_transport>(io, peer_of(endpoint), s->transports.size());
    s->transports.push_back(t);
    s->endpoints.push_back(endpoint);
    if (s->on_create) s->on_create(*t, t->index());
    return t;
  };
}

std::size_t fake_redis_factory::count() const { return state_->transports.size(); }

fake_redis_transport& fake_redis_factory::at(std::size_t i) const {
  return *state_->transports.at(i);
}

fake_redis_transport& fake_redis_factory::last() const {
  if (state_->transports.empty()) throw std::out_of_range("fake redis: no transport yet");
  return *state_->transports.back();
}

const std::vector<std::shared_ptr<fake_redis_transport>>& fake_redis_factory::transports() const {
  return state_->transports;
}

const std::vector<redis_endpoint>& fake_redis_factory::endpoints() const {
  return state_->endpoints;
}

bool run_until(asio::io_context& io, const std::function<bool()>& done,
               std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (io.stopped()) io.restart();
    if (io.run_one_for(std::chrono::milliseconds(10)) == 0 && io.stopped()) {
      // Out of work: nothing can change until the deadline.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return true;
}

void run_for(asio::io_context& io, std::chrono::milliseconds d) {
  io.restart();
  io.run_for(d);
}

}  // namespace baton::test
