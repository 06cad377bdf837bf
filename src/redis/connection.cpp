// The pipelined connection: lazy connect with handshake, a write queue, a read
// loop feeding the RESP reader, FIFO reply matching and the per-command
// deadline. See connection.hpp for the contract.
#include "connection.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <utility>

#include "baton/secret_file.hpp"
#include "redis_error.hpp"

namespace baton::redis_detail {
namespace {

namespace asio = boost::asio;

std::error_code aborted() { return boost::system::error_code(asio::error::operation_aborted); }

// Pub/sub pushes: messages, sharded messages (Cluster), and the server's own
// sunsubscribe when a shard channel's slot moved away; baton never sends
// SUNSUBSCRIBE, so one arriving is always the server's.
bool is_push(const redis_reply& r) {
  if (r.kind != redis_reply::type::array || r.elements.size() < 3 ||
      r.elements[0].kind != redis_reply::type::string) {
    return false;
  }
  const auto& what = r.elements[0].str;
  return what == "message" || what == "smessage" || what == "sunsubscribe";
}

std::string ms(milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

std::shared_ptr<connection> connection::create(asio::io_context& io, connection_options options) {
  return std::shared_ptr<connection>(new connection(io, std::move(options)));
}

connection::connection(asio::io_context& io, connection_options options)
    : io_(io), options_(std::move(options)), connect_timer_(io), command_timer_(io) {}

connection::~connection() {
  if (transport_) transport_->close();
}

void connection::set_push_handler(push_handler handler) { on_push_ = std::move(handler); }

void connection::set_disconnect_handler(disconnect_handler handler) {
  on_disconnect_ = std::move(handler);
}

void connection::async_exec(std::vector<std::string> args, completion done) {
  command c;
  c.done = std::move(done);
  if (state_ == state::closed) {
    complete(c, {aborted(), "connection closed", {}});
    return;
  }
  c.wire = format_command(args);
  switch (state_) {
    case state::disconnected:
      waiting_.push_back(std::move(c));
      start_connect();
      break;
    case state::connecting:
      waiting_.push_back(std::move(c));
      break;
    case state::connected:
      send(std::move(c), mono_clock::now() + options_.command_timeout);
      break;
    case state::closed:
      break;
  }
}

void connection::close() {
  if (state_ == state::closed) return;
  tear_down(state::closed, aborted(), "connection closed");
  on_push_ = nullptr;
  on_disconnect_ = nullptr;
}

void connection::reconnect(const std::string& why) {
  drop(redis_errc::connection_lost, why);
}

void connection::start_connect() {
  state_ = state::connecting;
  const auto generation = ++generation_;
  transport_ = options_.transport ? options_.transport(io_, options_.endpoint)
                                  : make_transport(io_, options_.endpoint);
  reader_ = resp_reader();
  outbox_.clear();
  writing_ = false;
  handshake_.reset();
  peer_ = transport_->peer();

  connect_timer_.expires_after(options_.connect_timeout);
  connect_timer_.async_wait(
      [self = shared_from_this(), generation](const boost::system::error_code& ec) {
        if (ec || generation != self->generation_ || self->state_ != state::connecting) return;
        self->drop(redis_errc::connect_failed, "connect " + self->transport_->peer() +
                                                   ": timed out after " +
                                                   ms(self->options_.connect_timeout) +
                                                   self->transport_->timeout_hint());
      });
  transport_->async_connect(
      [self = shared_from_this(), generation](std::error_code ec, std::string detail) {
        if (generation != self->generation_) return;
        if (ec) {
          // A transport that knows better (TLS) says which of our codes.
          self->drop(ec.category() == redis_category() ? ec : redis_errc::connect_failed, detail);
          return;
        }
        // A transport that found its server first (Sentinel, a slot map)
        // knows its address only now.
        self->peer_ = self->transport_->peer();
        self->on_transport_connected();
      });
}

void connection::on_transport_connected() {
  start_read();
  const auto& ep = options_.endpoint;
  std::string password = ep.password;
  if (!options_.password_file.empty()) {
    try {
      password = read_secret_file(options_.password_file);
    } catch (const std::runtime_error& e) {
      drop(redis_errc::auth_failed,
           options_.password_file_option + " " + options_.password_file + ": " + e.what());
      return;
    }
  }
  handshake_.emplace(handshake_settings{ep.username, std::move(password), ep.db,
                                        static_cast<bool>(options_.on_ready),
                                        options_.confirm_master, peer_});
  carry_out(handshake_->resume());
}

// The one loop of the handshake: write what the machine names, hand it each
// reply, and finish or drop when it says so.
void connection::carry_out(handshake::action next) {
  for (;;) {
    switch (next.type) {
      case handshake::action_type::send: {
        command c;
        c.wire = format_command(next.command);
        c.internal = true;
        c.done = [this](command_result r) { carry_out(handshake_->resume(r.reply)); };
        send(std::move(c), time_point::max());
        next = handshake_->resume();
        continue;
      }
      case handshake::action_type::await_reply:
        return;
      case handshake::action_type::done:
        finish_handshake();
        return;
      case handshake::action_type::failed:
        drop(next.ec, next.detail);
        return;
    }
  }
}

void connection::finish_handshake() {
  connect_timer_.cancel();
  state_ = state::connected;
  if (options_.on_ready) {
    const auto generation = generation_;
    auto ready = options_.on_ready;
    ready(handshake_->run_id());
    // It may have closed or dropped us; then the queue was failed already.
    if (generation != generation_ || state_ != state::connected) return;
  }
  auto waiting = std::move(waiting_);
  waiting_.clear();
  const auto deadline = mono_clock::now() + options_.command_timeout;
  for (auto& c : waiting) send(std::move(c), deadline);
}

void connection::send(command c, time_point deadline) {
  c.deadline = deadline;
  outbox_ += c.wire;
  c.wire.clear();
  c.wire.shrink_to_fit();
  pending_.push_back(std::move(c));
  if (pending_.size() == 1) arm_command_timer();
  flush();
}

void connection::flush() {
  if (writing_ || outbox_.empty() || !transport_) return;
  writing_ = true;
  // The buffer lives in the handler, so a drop cannot free it under the write.
  auto buffer = std::make_shared<std::string>(std::move(outbox_));
  outbox_.clear();
  transport_->async_write(buffer->data(), buffer->size(),
                          [self = shared_from_this(), generation = generation_, buffer](
                              std::error_code ec, std::size_t) {
                            if (generation != self->generation_) return;
                            self->writing_ = false;
                            if (ec) {
                              self->drop(
                                  redis_errc::connection_lost,
                                  "write to " + self->transport_->peer() + ": " + self->transport_->explain(ec));
                              return;
                            }
                            self->flush();
                          });
}

void connection::start_read() {
  transport_->async_read_some(
      read_buffer_.data(), read_buffer_.size(),
      [self = shared_from_this(), generation = generation_](std::error_code ec, std::size_t n) {
        self->on_read(generation, ec, n);
      });
}

void connection::on_read(std::uint64_t generation, std::error_code ec, std::size_t n) {
  if (generation != generation_) return;
  if (ec) {
    const bool eof = ec == std::error_code(boost::system::error_code(asio::error::eof));
    drop(redis_errc::connection_lost,
         eof ? "connection closed by " + transport_->peer()
             : "read from " + transport_->peer() + ": " + transport_->explain(ec));
    return;
  }
  reader_.feed(read_buffer_.data(), n);
  for (;;) {
    redis_reply reply;
    std::string error_text;
    const auto r = reader_.next(reply, error_text);
    if (r == resp_reader::result::error) {
      drop(redis_errc::protocol_error,
           "protocol error from " + transport_->peer() + ": " + error_text);
      return;
    }
    if (r == resp_reader::result::need_more) break;
    dispatch(std::move(reply));
    // A handshake step may have dropped the connection.
    if (generation != generation_) return;
  }
  start_read();
}

void connection::dispatch(redis_reply reply) {
  if (on_push_ && is_push(reply)) {
    asio::post(io_, [h = on_push_, r = std::move(reply)]() mutable { h(std::move(r)); });
    return;
  }
  if (pending_.empty()) {
    drop(redis_errc::protocol_error,
         "unsolicited reply from " + transport_->peer() + ": " + describe_reply(reply));
    return;
  }
  command c = std::move(pending_.front());
  pending_.pop_front();
  arm_command_timer();
  complete(c, {{}, {}, std::move(reply)});
}

void connection::arm_command_timer() {
  if (pending_.empty() || pending_.front().deadline == time_point::max()) {
    command_timer_.cancel();
    return;
  }
  command_timer_.expires_at(pending_.front().deadline);
  command_timer_.async_wait(
      [self = shared_from_this(), generation = generation_](const boost::system::error_code& ec) {
        if (ec) return;  // re-armed or cancelled
        self->on_command_timer(generation);
      });
}

void connection::on_command_timer(std::uint64_t generation) {
  if (generation != generation_ || pending_.empty()) return;
  const auto deadline = pending_.front().deadline;
  if (deadline == time_point::max()) return;
  if (mono_clock::now() < deadline) {
    arm_command_timer();
    return;
  }
  drop(redis_errc::timeout,
       "no reply from " + transport_->peer() + " within " + ms(options_.command_timeout));
}

void connection::drop(std::error_code ec, const std::string& detail) {
  if (state_ == state::disconnected || state_ == state::closed) return;
  const bool was_connected = state_ == state::connected;
  tear_down(state::disconnected, ec, detail);
  if (was_connected && on_disconnect_) {
    asio::post(io_, [h = on_disconnect_, ec, detail] { h(ec, detail); });
  }
}

// Shared by close() and drop(): the generation bump makes every completion of
// the old transport and timers a no-op, then every command still owed a reply
// fails with `ec`.
void connection::tear_down(state next, std::error_code ec, const std::string& detail) {
  state_ = next;
  ++generation_;
  if (transport_) transport_->close();
  transport_.reset();
  connect_timer_.cancel();
  command_timer_.cancel();
  outbox_.clear();
  writing_ = false;
  fail_all(ec, detail);
}

void connection::fail_all(std::error_code ec, const std::string& detail) {
  auto pending = std::move(pending_);
  auto waiting = std::move(waiting_);
  pending_.clear();
  waiting_.clear();
  for (auto& c : pending) complete(c, {ec, detail, {}});
  for (auto& c : waiting) complete(c, {ec, detail, {}});
}

void connection::complete(command& c, command_result result) {
  if (c.internal) {
    // Handshake steps only matter to the attempt they belong to.
    if (!result.ec) c.done(std::move(result));
    return;
  }
  asio::post(io_,
             [done = std::move(c.done), r = std::move(result)]() mutable { done(std::move(r)); });
}

link_state link_of(connection::state s) {
  switch (s) {
    case connection::state::connected: return link_state::connected;
    case connection::state::connecting: return link_state::connecting;
    default: return link_state::disconnected;
  }
}

}  // namespace baton::redis_detail
