// The release watcher: a second connection SUBSCRIBEd to the election's events
// channel. When it breaks it resubscribes with capped exponential backoff, and
// tells the listener once after each resubscribe, because a release may have
// been published while it was away. A periodic PING (allowed in subscribed
// mode) notices a server that stopped answering. It never logs: Redis being
// down is the lead's to report; state() says where it is.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "redis_reply.hpp"
#include "baton/time.hpp"
#include "connection.hpp"

namespace baton::redis_detail {

struct subscriber_options {
  connection_options connection;
  std::string channel;
  /// Our own lease value: releases announced with it are ignored.
  std::string own_value;
  milliseconds backoff_initial{100};
  milliseconds backoff_max{5000};
  /// PING interval while subscribed; 0 = no health check.
  milliseconds ping_interval{5000};
  /// Redis Cluster: SSUBSCRIBE to the shard channel (announcements are
  /// SPUBLISHed within the election's slot). When the slot moves, the server
  /// ends the subscription itself; the subscriber then starts over on a new
  /// connection, which finds the slot's new owner.
  bool sharded = false;
  /// Asked before the listener hears of a foreign release, with the
  /// announcement's text (`released <value> <token>`); false = not worth
  /// telling (optional: the Redlock store hears each release from several
  /// masters and tells the first).
  std::function<bool(std::string_view message)> release_filter;
  /// Told of every announced new term (optional).
  std::function<void(const announced_term&)> on_acquired;
  /// Told true on entering the subscribed state and false on every failure
  /// that leads to a retry, subscribed before or not (last_failure() says
  /// why). Optional; not after stop(). It may stop the subscriber.
  std::function<void(bool subscribed)> on_subscribed_change;
};

class subscriber : public std::enable_shared_from_this<subscriber> {
 public:
  enum class state { idle, subscribing, subscribed, waiting, stopped };

  static std::shared_ptr<subscriber> create(boost::asio::io_context& io, subscriber_options options,
                                            std::function<void()> listener);
  /// Starts subscribing (once; later calls do nothing).
  void start();
  /// Final: closes the connection and cancels timers; the listener is
  /// dropped without being called again.
  void stop();
  /// Starts over on a new connection (the master changed: `why`), as after a
  /// failure; does nothing before start() or after stop().
  void restart(const std::string& why);

  /// Listens on `channel` from now on (a large election's back runners have
  /// a channel of their own): a new connection subscribes to it at once,
  /// and the listener is told once it has, as after a resubscribe. Does
  /// nothing when it is the channel already; before start(), only notes it.
  void move_to(const std::string& channel);
  /// The channel listened on (or to be).
  const std::string& channel() const { return options_.channel; }
  state current_state() const { return state_; }
  /// Why the subscription last failed ("" = it never did).
  const std::string& last_failure() const { return last_failure_; }

 private:
  subscriber(boost::asio::io_context& io, subscriber_options options,
             std::function<void()> listener);

  void make_connection();
  void subscribe();
  void on_subscribed(const command_result& r);
  void on_failure(std::string why);
  void schedule_ping();
  void on_message(const redis_reply& message);
  void notify();
  void tell_subscribed(bool subscribed);

  boost::asio::io_context& io_;
  subscriber_options options_;
  std::function<void()> listener_;
  std::shared_ptr<connection> connection_;
  boost::asio::steady_timer timer_;  // backoff wait, or the next PING
  state state_ = state::idle;
  milliseconds backoff_;
  bool ever_subscribed_ = false;
  // Counts connections made: a reply or a disconnect from an older one is
  // ignored.
  std::uint64_t generation_ = 0;
  std::string last_failure_;
};

}  // namespace baton::redis_detail
