// The release watcher's state machine: idle -> subscribing -> subscribed, and
// on any failure -> waiting (backoff) -> subscribing again. Events from a
// connection that has already failed are ignored while waiting, so one
// failure schedules exactly one retry.
#include "subscriber.hpp"

#include <algorithm>
#include <utility>

namespace baton::redis_detail {

std::shared_ptr<subscriber> subscriber::create(boost::asio::io_context& io,
                                               subscriber_options options,
                                               std::function<void()> listener) {
  return std::shared_ptr<subscriber>(new subscriber(io, std::move(options), std::move(listener)));
}

subscriber::subscriber(boost::asio::io_context& io, subscriber_options options,
                       std::function<void()> listener)
    : io_(io),
      options_(std::move(options)),
      listener_(std::move(listener)),
      timer_(io),
      backoff_(options_.backoff_initial) {}

void subscriber::start() {
  if (state_ != state::idle) return;
  make_connection();
  subscribe();
}

void subscriber::make_connection() {
  if (connection_) connection_->close();
  connection_ = connection::create(io_, options_.connection);
  std::weak_ptr<subscriber> weak = shared_from_this();
  // What a connection reports after it was replaced (closing it posts its
  // disconnect, and aborts a SUBSCRIBE in flight) is not about ours.
  const auto current = ++generation_;
  connection_->set_push_handler([weak, current](redis_reply message) {
    auto self = weak.lock();
    if (self && self->generation_ == current) self->on_message(message);
  });
  connection_->set_disconnect_handler([weak, current](std::error_code, std::string detail) {
    auto self = weak.lock();
    if (self && self->generation_ == current) self->on_failure(std::move(detail));
  });
}

void subscriber::stop() {
  if (state_ == state::stopped) return;
  state_ = state::stopped;
  timer_.cancel();
  if (connection_) connection_->close();
  listener_ = nullptr;
}

void subscriber::restart(const std::string& why) {
  if (state_ == state::idle || state_ == state::stopped) return;
  make_connection();
  if (state_ == state::waiting) return;  // a retry is scheduled already
  on_failure(why);
}

void subscriber::move_to(const std::string& channel) {
  if (channel == options_.channel) return;
  options_.channel = channel;
  if (state_ == state::idle || state_ == state::stopped) return;
  make_connection();
  // Waiting: the scheduled retry subscribes the new channel.
  if (state_ == state::waiting) return;
  timer_.cancel();  // the next PING's, on the old connection
  subscribe();
}

void subscriber::subscribe() {
  state_ = state::subscribing;
  connection_->async_exec({options_.sharded ? "SSUBSCRIBE" : "SUBSCRIBE", options_.channel},
                          [weak = weak_from_this(), current = generation_](command_result r) {
                            auto self = weak.lock();
                            if (self && self->generation_ == current) self->on_subscribed(r);
                          });
}

void subscriber::on_subscribed(const command_result& r) {
  if (state_ != state::subscribing) return;
  const auto& e = r.reply.elements;
  const bool ok = !r.ec && r.reply.kind == redis_reply::type::array && e.size() == 3 &&
                  e[0].kind == redis_reply::type::string &&
                  e[0].str == (options_.sharded ? "ssubscribe" : "subscribe");
  if (!ok) {
    const std::string verb = options_.sharded ? "SSUBSCRIBE " : "SUBSCRIBE ";
    // A MOVED: this node no longer serves the slot; a new connection asks
    // the cluster where it went.
    if (!r.ec && options_.sharded) make_connection();
    on_failure(r.ec ? r.detail
               : r.reply.kind == redis_reply::type::error
                   ? verb + options_.channel + ": " + r.reply.str
                   : verb + options_.channel + ": unexpected reply " + describe_reply(r.reply));
    return;
  }
  state_ = state::subscribed;
  backoff_ = options_.backoff_initial;
  tell_subscribed(true);
  if (state_ != state::subscribed) return;  // stopped by the callback
  schedule_ping();
  const bool resubscribed = ever_subscribed_;
  ever_subscribed_ = true;
  if (resubscribed) notify();
}

void subscriber::on_failure(std::string why) {
  if (state_ == state::waiting || state_ == state::stopped || state_ == state::idle) return;
  last_failure_ = std::move(why);
  state_ = state::waiting;
  timer_.expires_after(backoff_);
  backoff_ = std::min(backoff_ * 2, options_.backoff_max);
  timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->state_ != state::waiting) return;
    self->subscribe();
  });
  // Told on every failure, not only when a subscription ended: a watch that
  // never got subscribed (an ACL without SUBSCRIBE) must be heard too.
  tell_subscribed(false);
}

void subscriber::schedule_ping() {
  if (options_.ping_interval <= milliseconds::zero()) return;
  timer_.expires_after(options_.ping_interval);
  timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->state_ != state::subscribed) return;
    self->connection_->async_exec({"PING"}, [weak, current = self->generation_](command_result r) {
      auto me = weak.lock();
      if (!me || me->state_ != state::subscribed || me->generation_ != current) return;
      if (r.ec) {
        // The connection has dropped itself (timeout or broken socket).
        me->on_failure(r.detail);
        return;
      }
      // In subscribed mode PING answers ["pong", ""]; anything else means the
      // connection is not subscribed after all, so start over on a new one.
      if (r.reply.kind != redis_reply::type::array) {
        me->make_connection();
        me->on_failure("PING on the subscription: " + describe_reply(r.reply));
        return;
      }
      me->schedule_ping();
    });
  });
}

void subscriber::on_message(const redis_reply& message) {
  if (state_ != state::subscribed) return;
  const auto& e = message.elements;
  if (!e.empty() && e[0].str == "sunsubscribe") {
    // The election's slot moved to another node (or this one lost it).
    make_connection();
    on_failure("the shard channel's slot moved away from the subscribed node");
    return;
  }
  if (e.size() != 3 || e[1].kind != redis_reply::type::string || e[1].str != options_.channel ||
      e[2].kind != redis_reply::type::string)
    return;
  if (is_foreign_release(e[2].str, options_.own_value)) {
    if (options_.release_filter && !options_.release_filter(e[2].str)) return;
    notify();
  } else if (auto term = parse_acquired_announcement(e[2].str); term && options_.on_acquired) {
    auto on_acquired = options_.on_acquired;  // a copy, as in notify()
    on_acquired(*term);
  }
}

void subscriber::tell_subscribed(bool subscribed) {
  // A copy, as for the listener: the callback may stop us.
  if (auto call = options_.on_subscribed_change) call(subscribed);
}

void subscriber::notify() {
  // A copy: the listener may stop us (and so reset listener_) while it runs.
  if (auto listener = listener_) listener();
}

}  // namespace baton::redis_detail
