// The SQL of the PostgreSQL lease store, for one lease table. Pure text: no
// libpq here, so unit tests and `baton init-store --print` read it as is.
//
// One row per election, created once and never deleted. Every statement is a
// single statement that reads the server's clock (clock_timestamp()), so no
// candidate's clock matters and a stalled statement decides with the time at
// which it runs, not the time at which it was sent:
// - acquire takes the row only when it has expired (or is ours), not held
//   back, and written under the same server epoch; a row that lapsed
//   unreleased only when the server's clock is not beyond the latest time the
//   candidate can expect (a step forward may have cut it short:
//   clock_watch.hpp); the new token is the next
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
// - release expires our term in place, clears its session (the mark of a
//   released row, which any candidate may take at once) and announces it,
//   only when it matched.
// - hand-over (a switchover) does what release does and leaves a reservation
//   in the same row: the holder column reads "reserved for <target> by
//   <node>", a value no node id can have, and expires_at ends the window.
//   Only a candidate whose node id is the target may take the row before
//   then (a new term, the next token); the others are told it is reserved.
//   A reservation is no term: a restart holds it back as a free lease.
//
// The candidates' registry is a second table (<table>_candidates): one row
// per election and node id, written by every acquire and every renewal that
// took, in the same statement; it lapses two ttls after it was written, and
// the statements that wrote the lease row delete the lapsed ones. A row
// written by another session (a restarted daemon) begins anew. A store
// whose role cannot have that table runs the statements without it
// (with_registry = false) and lists no candidates.
//
// A cool-down (a node that gave the lease up makes no attempt for a while)
// rides in the registration's session column, so that a table created
// before it needs no new column: "<session> cooling_until_ms=<end>", the
// end in milliseconds since 1970 on the server's clock. The node's next
// registration writes its bare session again, which ends it; a row without
// it reads as no cool-down, and a daemon from before it never reads the
// column. A registration's last attempt is read off its expiry: it was
// written to last two ttls.
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
  /// The part of ddl() that creates the candidates' registry, for a store
  /// whose lease table predates it ("" without has_registry()).
  std::string registry_ddl() const;
  /// False when the registry's name, cut to PostgreSQL's 63 bytes, is the
  /// table's or the sequence's (a table name of 62): then there is none.
  bool has_registry() const;
  /// The DDL and the grants a baton role needs (the role named `baton`), for
  /// a DBA to apply (`baton init-store --print`).
  std::string ddl_for_people() const;
  /// $1 table, $2 sequence, $3 registry (as to_regclass reads them) -> one
  /// row: the table and sequence exist (t/f); the registry: "ok" (exists,
  /// with every privilege the statements use and the card column), "old"
  /// (made by a version before the card), "missing" or "denied"; and
  /// whether the lease table and the registry (if it exists) have the
  /// column lease.failsafe peers needs (t/f).
  std::string schema_exists() const;
  /// Adds the column lease.failsafe peers needs to a lease table and a
  /// registry made before it.
  std::string failsafe_ddl() const;
  /// Params: $1 election, $2 node id, $3 session, $4 ttl ms, $5 channel,
  /// and what this node saw last: $6 cluster ("sysid/timeline", "" = none),
  /// $7 WAL flush position ("0/0" = none), $8 token (0 = none); with the
  /// registry, $9 priority and $10 card; last ($9, or $11 with the
  /// registry), the latest server time this node can expect, microseconds
  /// since 1970 (0 = it cannot tell: it takes no row that lapsed unreleased;
  /// clock_watch.hpp).
  /// One row: outcome (acquired / held / held_back), reset (t/f), missing
  /// (t/f), new_term (t/f), holder, token, remaining_ms, epoch
  /// ("sysid/timeline/start"), announced, restarted (t/f: this statement
  /// found a restart), the WAL flush position, why data went back (NULL
  /// unless reset and not missing), the microseconds until free (-1 =
  /// unknown), the node a reservation keeps it for ("" = none), and, held,
  /// how many live candidates other than the holder outrank this one (-1 =
  /// unknown: not held, or no registry), the server's time the statement
  /// read (microseconds since 1970), and whether the lease was free and left
  /// only because the clock was beyond what this node expected (t/f).
  ///
  /// With lease.failsafe peers (`failsafe`; failsafe_sql.hpp), after those:
  /// whether this node may win (boolean), the highest token it cleared, its
  /// peer address, the list a grant writes (a jsonb array of {"node",
  /// "address"}) and its number, and its promise (leader, token, ms left;
  /// "", 0, 0 = none). A grant writes the record; a free lease the record or
  /// a live registered promise holds is left, as is one this node may not
  /// win; two more columns: the hold (jsonb text, NULL = none) and whether
  /// the caller only registered (t/f).
  std::string acquire(bool with_registry, bool failsafe = false) const;
  /// $1 election, $2 node id, $3 session, $4 token, $5 ttl ms; with the
  /// registry, $6 priority and $7 card -> one row when renewed, none when
  /// not ours. With lease.failsafe peers, after those: the term's token,
  /// the list's number, the peer address and the list, which it writes
  /// into the record when its number is above the record's.
  std::string renew(bool with_registry, bool failsafe = false) const;
  /// $1 election, $2 node id, $3 session, $4 token, $5 channel -> one row
  /// when released, none when not ours. With lease.failsafe peers it
  /// clears the record too.
  std::string release(bool failsafe = false) const;
  /// As release, and $6 the target's node id (no space), $7 the window in
  /// ms: one row when handed over, none when not ours.
  std::string hand_over(bool failsafe = false) const;
  /// lease.failsafe peers (F8): $1 election, $2 node id, $3 session, $4 the
  /// term's token, $5 ttl ms, $6 channel, $7 the list's number, $8 the peer
  /// address, $9 the list; with the registry $10 priority and $11 card. Takes
  /// this session's term up again only if nobody else holds the lease and
  /// the record holds that term or nothing (or the row is gone): the row's
  /// token lifted to at least $4, a lease that lapsed announced -> one row
  /// (the row's token) when resumed, none when another term exists.
  std::string resume(bool with_registry) const;
  /// $1 election, $2 ttl ms -> the live registrations: node, priority,
  /// live_for ms, ms since its last attempt (two ttls less the time left
  /// until it lapses), ms left of its cool-down (0 = none), card; with
  /// lease.failsafe peers, its peer address ("" = none).
  std::string candidates(bool failsafe = false) const;
  /// $1 election, and with the registry $2 node id, $3 session, $4 ttl ms,
  /// $5 priority, $6 card: registers this node without an attempt -> the
  /// holder and token of a lease that lasts (a reservation is none), or no
  /// row.
  std::string look(bool with_registry) const;
  /// $1 election, $2 node id, $3 session, $4 cool-down ms: this session's
  /// live registration cools down until $4 ms from now; none when it has
  /// lapsed or another session wrote it.
  std::string cooldown() const;
  /// $1 election -> one row when created, none when it existed.
  std::string create_record() const;
  /// LISTEN on the channel.
  std::string listen() const;

  /// The table as written ("baton_lease", "ops.baton_lease"); also the
  /// notification channel's name.
  const std::string& table() const { return table_; }
  /// The sequence's name, written the same way ("baton_lease_token").
  const std::string& sequence() const { return sequence_; }
  /// The registry's name, written the same way ("baton_lease_candidates").
  const std::string& candidates_table() const { return candidates_; }

 private:
  std::string released_announcement() const;
  std::string registration(std::string_view from, std::string_view priority,
                           std::string_view card, std::string_view ttl,
                           std::string_view failsafe = {}) const;
  std::string prune(std::string_view gate) const;
  std::string outranked(std::string_view answer) const;

  std::string table_;
  std::string sequence_;
  std::string candidates_;
  std::string quoted_table_;
  std::string quoted_sequence_;
  std::string quoted_candidates_;
};

}  // namespace baton::postgres_detail
