// The lease store on one Redis server, over TCP or a Unix socket. Socket I/O,
// timeouts and reconnects run in asio; hiredis only formats commands and parses
// replies. Acquire, renew and release are Lua scripts (EVALSHA, falling back to
// EVAL after NOSCRIPT) so each is one atomic round trip.
//
// Redis that forgets: when the election's token counter is missing, or the
// server's run_id differs from the one this store saw before (a restart or a
// failover), every acquisition is held back for one ttl by the fence key
// (see lease_keys.hpp and src/redis/scripts.hpp); acquires answer busy with
// the fence's remaining time meanwhile.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>

#include "baton/lease_store.hpp"
#include "baton/redis_error.hpp"
#include "baton/redis_url.hpp"

namespace baton {

struct redis_store_options {
  redis_endpoint endpoint;
  /// Overrides endpoint.password when not empty (from a file or the environment).
  std::string password;
  milliseconds connect_timeout{1000};
  milliseconds command_timeout{1000};
  std::string election;
  std::string node_id;
  /// First wait before resubscribing after the watch connection broke;
  /// doubles on every failed attempt up to resubscribe_backoff_max.
  milliseconds resubscribe_backoff_initial{100};
  milliseconds resubscribe_backoff_max{5000};
  /// PING on the watch connection this often to notice a dead server
  /// (each PING gets command_timeout); 0 = never.
  milliseconds subscription_ping_interval{5000};
};

/// Errors reach handlers as redis_errc codes (see redis_error.hpp), or as
/// operation_aborted (== std::errc::operation_canceled) after close(), or
/// std::errc::invalid_argument for a ttl of 0 or less.
/// Handlers run on `io`, never inline, and never after the store is destroyed.
class redis_store final : public lease_store {
 public:
  /// Connects lazily (nothing happens until the first call). Throws
  /// std::invalid_argument when election or node_id is empty.
  redis_store(boost::asio::io_context& io, redis_store_options options);
  ~redis_store() override;

  void async_acquire(milliseconds ttl, acquire_handler handler) override;
  void async_renew(milliseconds ttl, renew_handler handler) override;
  void async_release(release_handler handler) override;
  void watch_releases(released_listener listener) override;
  /// Told, on the io_context, of every new term announced on the events
  /// channel (our own included), while watch_releases() is subscribed.
  using acquired_listener_type = std::function<void(const std::string& holder, std::uint64_t token)>;
  void watch_acquisitions(acquired_listener_type listener);
  /// Final: pending handlers complete with operation_aborted, the watch stops,
  /// and later calls complete with operation_aborted too.
  void close() override;

  /// Told, on the io_context, when this store found that Redis lost its data
  /// and set the hold-back fence: `why` is "token counter missing" or
  /// "run_id changed from <old> to <new>".
  using reset_listener_type = std::function<void(const std::string& why)>;
  void on_store_reset(reset_listener_type listener);
  /// The `why` of the latest such finding ("" if none).
  std::string last_reset() const;

  /// The value this candidate writes into the lease key: `<node_id>:<nonce>`,
  /// the nonce being 128 random bits in hex, fixed for the process's life.
  const std::string& lease_value() const;
  /// "connected", "connecting" or "disconnected", for status output.
  std::string connection_state() const;
  /// The release watch: "off" (not watching or closed), "connecting",
  /// "subscribed" or "disconnected" (waiting to retry).
  std::string subscription_state() const;
  /// Detail of the most recent failure reported to a handler, e.g.
  /// "connect 127.0.0.1:6390: Connection refused" or "acquire: ERR ...";
  /// "" until one happens. Kept (not cleared) after later successes. Never
  /// contains the password.
  std::string last_error() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
