// The lease store on one Redis server, over TCP or a Unix socket. Socket I/O,
// timeouts and reconnects run in asio; hiredis only formats commands and parses
// replies. Acquire, renew and release are Lua scripts (EVALSHA, falling back to
// EVAL after NOSCRIPT) so each is one atomic round trip.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "baton/lease_store.hpp"
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
};

class redis_store final : public lease_store {
 public:
  redis_store(boost::asio::io_context& io, redis_store_options options);
  ~redis_store() override;

  void async_acquire(milliseconds ttl, acquire_handler handler) override;
  void async_renew(milliseconds ttl, renew_handler handler) override;
  void async_release(release_handler handler) override;
  void watch_releases(released_listener listener) override;
  void close() override;

  /// The value this candidate writes into the lease key: `<node_id>:<nonce>`,
  /// the nonce being 128 random bits in hex, fixed for the process's life.
  const std::string& lease_value() const;
  /// "connected", "connecting" or "disconnected", for status output.
  std::string connection_state() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
