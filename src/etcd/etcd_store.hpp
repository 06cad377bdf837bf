// The lease store on etcd: the `etcd` store kind behind the port
// (baton/lease_store.hpp), over etcd's JSON gateway (/v3/...) on HTTP/1.1:
// no gRPC client, one keep-alive connection for the calls and one for the
// watch. The keys, the token and how a restore is found are in
// election_keys.hpp.
//
// - acquire: one read of the election's keys and of the registrations, in a
//   txn that first puts this store's registration when it is due
//   (candidate_registry.hpp); free -> a lease of the
//   ttl rounded up to whole seconds, then one txn that puts the lease key on
//   it only if the lease key, the fence, the record and the reservation are
//   as read (deleting a reservation for this node). Held -> the holder, its
//   token and the time its lease has left; reserved for another node -> the
//   node that handed over, the target and the time the reservation's etcd
//   lease has left. A held answer's outranked_by: the live registrations
//   read, of a higher priority, neither this node nor the holder.
// - renew: a keepalive of the term's lease, then a linearizable read that
//   the lease key still holds this store's value at the term's revision (an
//   operator's delete leaves the lease alive), in a txn that registers when
//   the registration is due, and reads it back.
// - release: a revoke of the term's lease, which deletes the keys on it in
//   the same step (so no standby ever finds the key gone and the lease
//   alive after a release).
// - hand-over: a lease of the window rounded up to whole seconds, then one
//   txn that, only if the lease key is still the term's, deletes the lease
//   and holder keys and puts the reserved key on that lease; then the
//   term's lease is revoked. The window ends when etcd expires that lease.
// - candidates: a read of the registrations, judged by revision against
//   this store's clock and the registrants' (candidate_registry.hpp); the
//   lapsed ones deleted.
// - wake-ups: a watch of the election's keys from the revision of a read +
//   1: a deleted lease key (released or expired) or fence is `released`, a
//   created lease key `acquired`; trusted while the stream is open; a watch
//   cancelled (compaction) or broken is read and watched again, and reports
//   `released` since a release may have been missed.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "baton/lease_store.hpp"
#include "etcd_error.hpp"

namespace baton {

struct etcd_store_options {
  /// Client URLs of the cluster's members ("http://10.0.0.1:2379"); at
  /// least one. The store talks to one at a time and moves to the next
  /// when a connect fails.
  std::vector<std::string> endpoints;
  /// Put before the election's name in every key: <prefix><election>/lease,
  /// /holder, /fence, /record, /released, /reserved, /failsafe (with
  /// lease.failsafe peers), /candidates/<node_id>.
  /// The role baton runs as needs read-write on that prefix.
  std::string prefix = "baton/";
  milliseconds connect_timeout{1000};
  /// For one call (a read, a txn, a keepalive).
  milliseconds command_timeout{1000};
  /// Election, node id and ttl (> 0); fixed for the store's life. The etcd
  /// lease is the ttl rounded up to whole seconds.
  store_identity identity;
  /// First wait before watching again after the watch broke; doubles on each
  /// failure up to rewatch_backoff_max.
  milliseconds rewatch_backoff_initial{100};
  milliseconds rewatch_backoff_max{5000};
  /// A read of the election's keys this often while watching, to notice a
  /// dead server or a hung watch connection (0 = never).
  milliseconds watch_ping_interval{5000};
  /// The etcd user baton authenticates as ("" = none: etcd's auth is off).
  /// Its role needs readwrite on the prefix (README.md, "etcd").
  std::string username;
  /// The user's password: the first line of this file, read at each
  /// authentication (a rotated password is used from the next one on).
  std::string password_file;
  /// For https:// endpoints: the CA that signed the members' certificates
  /// ("" = the system's trust store), and a client certificate and its key
  /// ("" = none). Given with http:// endpoints they are refused.
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
};

namespace etcd_detail {
struct http_options;
/// The connection settings of a store with `options` (endpoints, timeouts,
/// TLS for https endpoints only, the user), as the store and `check-store`
/// use them. Throws std::invalid_argument naming what is wrong.
http_options connection_options(const etcd_store_options& options);
}  // namespace etcd_detail

/// Errors reach handlers as etcd_errc codes (etcd_error.hpp maps them onto
/// store_errc), or operation_aborted after close().
class etcd_store final : public lease_store {
 public:
  /// Connects lazily. Throws std::invalid_argument for an empty election or
  /// node id, a ttl <= 0, no endpoint or a bad one, an empty prefix, TLS
  /// files that cannot be loaded or given for http://, or a user without a
  /// password file.
  etcd_store(boost::asio::io_context& io, etcd_store_options options);
  ~etcd_store() override;

  const store_identity& identity() const override;
  void async_acquire(acquire_handler handler) override;
  void async_renew(renew_handler handler) override;
  void async_release(release_handler handler) override;
  void async_hand_over(const std::string& to_node, milliseconds window,
                       release_handler handler) override;
  void async_candidates(candidates_handler handler) override;
  /// Marks this store's registration (candidate_registry.hpp), when one
  /// stands.
  void register_cooldown(milliseconds cooldown) override;
  void update_card(std::string card) override;
  void async_look(look_handler handler) override;
  void async_create_record(record_handler handler) override;
  void watch(event_listener listener) override;
  store_status status() const override;
  /// lease.failsafe peers (identity.peer_address set): the record
  /// <prefix><election>/failsafe written with every grant, renewal and
  /// resume, the failsafe hold, the register-only acquire and the resume
  /// (docs/stores/etcd.md, "Peer-confirmed leadership").
  failsafe_calls* failsafe() override;
  void close() override;

 private:
  struct impl;
  class failsafe_port;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
