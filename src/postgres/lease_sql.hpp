// The SQL of the PostgreSQL lease store, for one lease table. Pure text: no
// libpq here, so unit tests and `baton init-store --print` read it as is.
//
// One row per election, created once and never deleted. Every statement is a
// single statement that reads the server's clock (clock_timestamp()), so no
// candidate's clock matters and a stalled statement decides with the time at
// which it runs, not the time at which it was sent:
// - acquire takes the row only when it has expired (or is ours), not held
//   back, and written under the same server epoch; the new token is the next
//   of a sequence and above the row's last one, computed under the row lock;
//   a new term is announced (pg_notify) in the same statement.
// - data gone back is a store reset: the row was written on another cluster
//   (system identifier / timeline: a restore into a new cluster, a promoted
//   replica), or its token is below the one this node saw, or (same token)
//   the server's WAL flush position is behind the one this node saw. The row
//   is held back for one ttl and its token lifted above everything seen,
//   to the server's clock in microseconds, so tokens never go backwards.
// - a restart alone (only the postmaster's start time differs) keeps every
//   term: a held lease lasts at least one ttl from then, so its leader
//   renews on; a free one is held back one ttl (a term the server lost,
//   had it come back from a copy nobody else saw, may still be at work).
// - a missing row is a first start or lost data: it is created held back.
// - renew extends only our own unexpired term (holder, session and token).
// - release expires our term in place and announces it, only when it matched.
#pragma once

#include <string>
#include <string_view>

namespace baton::postgres_detail {

class lease_sql {
 public:
  /// `table` must pass postgres_table_problem (baton/postgres_conninfo.hpp).
  explicit lease_sql(std::string table);

  /// The DDL: CREATE TABLE / SEQUENCE IF NOT EXISTS, with comments. Safe to
  /// run again; several statements, for the simple-query protocol.
  std::string ddl() const;
  /// The DDL and the grants a baton role needs (the role named `baton`), for
  /// a DBA to apply (`baton init-store --print`).
  std::string ddl_for_people() const;
  /// $1 table, $2 sequence (as to_regclass reads them) -> one row: t/f.
  std::string schema_exists() const;
  /// Params: $1 election, $2 node id, $3 session, $4 ttl ms, $5 channel,
  /// and what this node saw last: $6 cluster ("sysid/timeline", "" = none),
  /// $7 WAL flush position ("0/0" = none), $8 token (0 = none).
  /// One row: outcome (acquired / held / held_back), reset (t/f), missing
  /// (t/f), new_term (t/f), holder, token, remaining_ms, epoch
  /// ("sysid/timeline/start"), announced, restarted (t/f: this statement
  /// found a restart), the WAL flush position, and why data went back (NULL
  /// unless reset and not missing).
  std::string acquire() const;
  /// $1 election, $2 node id, $3 session, $4 token, $5 ttl ms -> one row
  /// when renewed, none when not ours.
  std::string renew() const;
  /// $1 election, $2 node id, $3 session, $4 token, $5 channel -> one row
  /// when released, none when not ours.
  std::string release() const;
  /// $1 election -> one row when created, none when it existed.
  std::string create_record() const;
  /// LISTEN on the channel.
  std::string listen() const;

  /// The table as written ("baton_lease", "ops.baton_lease"); also the
  /// notification channel's name.
  const std::string& table() const { return table_; }
  /// The sequence's name, written the same way ("baton_lease_token").
  const std::string& sequence() const { return sequence_; }

 private:
  std::string table_;
  std::string sequence_;
  std::string quoted_table_;
  std::string quoted_sequence_;
};

}  // namespace baton::postgres_detail
