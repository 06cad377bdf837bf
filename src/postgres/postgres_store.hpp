// The lease store on PostgreSQL: the `postgres` store kind behind the port
// (baton/lease_store.hpp). One row per election in a lease table; acquire,
// renew and release are single statements on the server's clock (see
// lease_sql.hpp). A second session LISTENs on the table's channel for
// releases and new terms. All I/O is libpq's asynchronous API on the
// daemon's io_context (pg_connection.hpp).
//
// Data gone back is a store reset: the row written on another cluster (its
// system identifier or timeline differ: a restore elsewhere, a promoted
// replica), a row whose token or a server whose WAL position is below what
// this store saw last (a copy put back), or a missing row. The acquire that
// finds one holds every acquisition back for one ttl, in the row itself, so
// candidates that never saw the old server are held back too. A restart
// with its data intact is not a reset: the leader keeps its term and token
// (see lease_sql.hpp).
//
// A switchover's hand-over is a release that leaves a reservation in the
// same row; the candidates register in <table>_candidates from the acquire
// and renew statements they already run (lease_sql.hpp).
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "baton/lease_drift.hpp"
#include "baton/lease_store.hpp"
#include "postgres_error.hpp"

namespace baton {

struct postgres_store_options {
  /// libpq connection string or URI.
  std::string conninfo;
  /// Overrides a password in the conninfo when not empty.
  std::string password;
  /// The lease table: `name` or `schema.name` (see postgres_table_problem).
  std::string table = "baton_lease";
  /// Create the table and its sequence when they are missing (needs CREATE
  /// on the schema); when false, a missing table is an error naming
  /// `baton init-store --print`.
  bool create_schema = true;
  milliseconds connect_timeout{1000};
  /// For one statement; also the session's statement_timeout, so the server
  /// gives up on a stalled statement by itself.
  milliseconds command_timeout{1000};
  /// Election, node id and ttl (> 0); fixed for the store's life.
  store_identity identity;
  /// The lease's drift factor (lease.drift_factor): how much faster than
  /// this host's monotonic clock the database's may run before a jump of it
  /// counts as a step (clock_watch.hpp).
  double drift_factor = default_drift_factor;
  /// First wait before listening again after the listening session broke;
  /// doubles on each failure up to relisten_backoff_max.
  milliseconds relisten_backoff_initial{100};
  milliseconds relisten_backoff_max{5000};
  /// A `SELECT 1` on the listening session this often, to notice a dead
  /// server or a hung connection (0 = never).
  milliseconds listen_ping_interval{5000};
  /// How often a store without the candidates' table (it may neither create
  /// nor use it) looks for it again when asked for the candidates, which a
  /// leader does with every renewal (0 = at every such call).
  milliseconds registry_recheck{60000};
};

/// Errors reach handlers as postgres_errc codes (postgres_error.hpp maps them
/// onto store_errc), or operation_aborted after close().
class postgres_store final : public lease_store {
 public:
  /// Connects lazily. Throws std::invalid_argument for an empty election or
  /// node id, a ttl <= 0, a bad table name or a conninfo libpq cannot parse.
  postgres_store(boost::asio::io_context& io, postgres_store_options options);
  ~postgres_store() override;

  const store_identity& identity() const override;
  void async_acquire(acquire_handler handler) override;
  void async_renew(renew_handler handler) override;
  void async_release(release_handler handler) override;
  void async_hand_over(const std::string& to_node, milliseconds window,
                       release_handler handler) override;
  void async_candidates(candidates_handler handler) override;
  /// Marks this store's registration (lease_sql.hpp); nothing without the
  /// candidates' table.
  void register_cooldown(milliseconds cooldown) override;
  void update_card(std::string card) override;
  void async_look(look_handler handler) override;
  void async_create_record(record_handler handler) override;
  void watch(event_listener listener) override;
  store_status status() const override;
  /// lease.failsafe peers (with identity.peer_address set): the record in
  /// the lease row, lease_sql.hpp and failsafe_sql.hpp.
  failsafe_calls* failsafe() override;
  void close() override;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
