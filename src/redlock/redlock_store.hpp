// The lease on N independent Redis masters (3 to 7, odd; no replication
// between them), granted only by a majority: the `redlock` store kind behind
// the port (baton/lease_store.hpp). Each master is a redis_node (a connection,
// the scripts, its own reset fence) and has its own announcement watch; the
// pure quorum combiner (quorum.hpp) turns their answers into one.
//
// - Acquire: the acquire script in "grant" mode on every master at once; as
//   soon as a majority granted, the token (one more than the largest of their
//   counters) is written back to them, and the grant counts only when that
//   reached a majority while ttl - drift - (time since the first request)
//   was still positive. Otherwise the lease is released on every master and
//   the answer is held, held back, or an error.
// - Renew: on every master; renewed when a majority renewed within validity.
// - Release: on every master; the masters announce it.
// - Hand-over: a release that leaves every master where the lease was ours
//   reserved for the target for the window (the shared release script), so
//   only the target's acquire wins a majority there until it ends.
// - Candidates: every acquire attempt and renewal registers on each master
//   it reaches; the list is the union of the masters' registries
//   (candidate_merge.hpp), once a majority answered.
// - lease.failsafe peers (failsafe()): the record, per master, written by
//   the write-back and the renewals where the lease is ours; a resume round
//   decided as a renewal's (redlock_store_failsafe.cpp).
// A slow or dead minority is never waited for: each round is decided by the
// first majority (or by enough failures that no majority is left).
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "baton/lease_store.hpp"
#include "baton/redis_url.hpp"
#include "redis/transport.hpp"

namespace baton {

struct redlock_store_options {
  /// The masters, 1 to 7 (configurations allow 3, 5 or 7; tests use fewer).
  std::vector<redis_endpoint> masters;
  /// The password of every master ("" = each URL's own, or none).
  std::string password;
  /// When set, every master's password is read from this file again on each
  /// connection attempt, instead of `password`.
  std::string password_file;
  milliseconds connect_timeout{1000};
  /// Per master and command: past it that master counts as failed.
  milliseconds command_timeout{1000};
  store_identity identity;
  /// What validity loses to clock drift (the daemon's lease drift).
  milliseconds drift{0};
  milliseconds resubscribe_backoff_initial{100};
  milliseconds resubscribe_backoff_max{5000};
  milliseconds subscription_ping_interval{5000};
  redis_detail::transport_factory transport;
};

class redlock_store final : public lease_store {
 public:
  /// Connects lazily. Throws std::invalid_argument for no masters, more than
  /// 7, an empty election or node id, or a ttl that is not positive.
  redlock_store(boost::asio::io_context& io, redlock_store_options options);
  ~redlock_store() override;

  const store_identity& identity() const override;
  void async_acquire(acquire_handler handler) override;
  void async_renew(renew_handler handler) override;
  void async_release(release_handler handler) override;
  void async_hand_over(const std::string& to_node, milliseconds window,
                       release_handler handler) override;
  void async_candidates(candidates_handler handler) override;
  void register_cooldown(milliseconds cooldown) override;
  void update_card(std::string card) override;
  void async_look(look_handler handler) override;
  void async_create_record(record_handler handler) override;
  void watch(event_listener listener) override;
  store_status status() const override;
  failsafe_calls* failsafe() override;
  void close() override;

 private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

}  // namespace baton
