// The lease store on one Redis server, over TCP or a Unix socket: the `redis`
// store kind behind the port (baton/lease_store.hpp). Socket I/O, timeouts and
// reconnects run in asio; hiredis only formats commands and parses replies.
// Acquire, renew and release are Lua scripts (EVALSHA, falling back to EVAL
// after NOSCRIPT) so each is one atomic round trip; so are a switchover's
// hand-over (the release script leaving the lease key reserved for the
// target) and the candidates' list (a registry every acquire and renewal
// script updates as it runs).
//
// Redis that forgets: when the election's token counter is missing, or the
// server's run_id differs from the one this store saw before (a restart or a
// failover), every acquisition is held back for one ttl by the fence key
// (see lease_keys.hpp and scripts.hpp); acquires answer held_back with the
// fence's remaining time meanwhile, and watchers hear store_events::reset.
// The one exception: on Sentinel with redis.replica_ack all, a promoted
// replica that shows it followed the old master live has every acknowledged
// grant and renewal, and is not held back (acknowledged_promotion).
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "baton/lease_store.hpp"
#include "baton/redis_url.hpp"
#include "master_locator.hpp"
#include "redis_error.hpp"
#include "transport.hpp"

namespace baton {

/// How many replicas must acknowledge each grant and renewal (WAIT, sent
/// right behind the script on the same connection) before it counts. The
/// scripts check first that the master has that many connected: a grant
/// they refuse spends no token, and no grant is announced before WAIT
/// counted its replicas.
struct replica_ack {
  /// -1 = off; 0 = all: the most replicas the election's master has had
  /// connected, kept in Redis (replicas_key) so that every candidate and
  /// every reconnect counts them, one fewer after a failover, and never
  /// fewer than one; N > 0 = at least N replicas.
  int replicas = -1;
  /// How long WAIT may take; below the command timeout.
  milliseconds timeout{100};

  bool on() const { return replicas >= 0; }
};

struct redis_store_options {
  redis_endpoint endpoint;
  /// Overrides endpoint.password when not empty (from a file or the environment).
  std::string password;
  /// When set, the password is read from this file's first line again on
  /// every connection attempt (rotated secrets), instead of `password`.
  std::string password_file;
  milliseconds connect_timeout{1000};
  milliseconds command_timeout{1000};
  /// Election, node id and ttl (> 0); fixed for the store's life.
  store_identity identity;
  /// First wait before resubscribing after the watch connection broke;
  /// doubles on every failed attempt up to resubscribe_backoff_max.
  milliseconds resubscribe_backoff_initial{100};
  milliseconds resubscribe_backoff_max{5000};
  /// PING on the watch connection this often to notice a dead server
  /// (each PING gets command_timeout); 0 = never.
  milliseconds subscription_ping_interval{5000};
  /// An election is large above this many candidates listening for its
  /// announcements: its back runners then try one step after its front
  /// runners and stay out of the registry of candidates, which holds no more
  /// lines than this (lua_parts.hpp, BATON_MAX_CANDIDATES). Tests lower it.
  int large_election = 128;
  /// Makes the byte stream of every connection (tests pass a fake); empty =
  /// TCP or Unix socket per the endpoint.
  redis_detail::transport_factory transport;

  /// Sentinel and Cluster: where the master is. With it, `endpoint` is a
  /// template (user, TLS settings) whose address is located on every
  /// connection attempt, each command connection confirms with ROLE that it
  /// reached a master, and `transport` is ignored.
  std::shared_ptr<redis_detail::master_locator> locator;
  /// A replicated store: the record keeps the run_id of the server that
  /// wrote it, so that every candidate notices a failover (a reset), and
  /// tokens are at least the server's clock in microseconds.
  bool replicated = false;
  /// Redis Cluster: announcements over sharded pub/sub (SPUBLISH,
  /// SSUBSCRIBE), which stays within the election's slot.
  bool sharded_pubsub = false;
  replica_ack ack;
  /// Sentinel with ack "all": every grant and renewal records the master's
  /// replication ID and time (acked_key), and a failover to a replica that
  /// followed that master live (its previous replication ID is the one
  /// recorded, and it has run since one ttl before the write) is not held
  /// back: it has every acknowledged write, the lease among them. Any other
  /// server switch still is. Needs `replicated` and ack.replicas == 0.
  bool acknowledged_promotion = false;
  /// How status() names the kind: "redis" / "Redis", "sentinel" / "Redis
  /// Sentinel", "cluster" / "Redis Cluster".
  std::string kind = "redis";
  std::string label = "Redis";
};

/// Errors reach handlers as redis_errc codes (see redis_error.hpp, which maps
/// them onto store_errc), or as operation_aborted
/// (== std::errc::operation_canceled) after close().
/// Handlers run on `io`, never inline, and never after the store is destroyed.
class redis_store final : public lease_store {
 public:
  /// Connects lazily (nothing happens until the first call). Throws
  /// std::invalid_argument when the election or node id is empty or the ttl
  /// is not positive.
  redis_store(boost::asio::io_context& io, redis_store_options options);
  ~redis_store() override;

  const store_identity& identity() const override;
  void async_acquire(acquire_handler handler) override;
  void async_renew(renew_handler handler) override;
  void async_release(release_handler handler) override;
  void async_hand_over(const std::string& to_node, milliseconds window,
                       release_handler handler) override;
  void async_candidates(candidates_handler handler) override;
  /// Every renewal reads the registry anyway: it answers the list too.
  bool lists_with_renewals() const override { return true; }
  void register_cooldown(milliseconds cooldown) override;
  void update_card(std::string card) override;
  void async_look(look_handler handler) override;
  void async_create_record(record_handler handler) override;
  void watch(event_listener listener) override;
  store_status status() const override;
  /// lease.failsafe peers: the record beside the lease key (failsafe_key in
  /// lease_keys.hpp), written by grants, renewals and resumes.
  failsafe_calls* failsafe() override;
  void close() override;

  /// The value this candidate writes into the lease key: `<node_id>:<nonce>`,
  /// the nonce being 128 random bits in hex, fixed for the process's life.
  const std::string& lease_value() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
