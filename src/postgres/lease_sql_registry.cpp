// The candidates' registry (<table>_candidates): the list a leader reads, a
// look that registers, a cool-down, and the parts the lease statements
// write it with (a registration, its rank, the lapsed ones pruned).
#include <string>
#include <string_view>

#include "lease_sql.hpp"
#include "lease_sql_parts.hpp"

namespace baton::postgres_detail {

std::string lease_sql::candidates(bool failsafe) const {
  // The last attempt with the reader's ttl, which the election's nodes
  // share; a row whose end a stepped clock moved reads as just written.
  return "SELECT c.node, c.priority, floor(extract(epoch FROM s.now - c.live_since) * "
         "1000)::bigint,\n"
         "       greatest(0, 2 * $2::bigint - ceil(extract(epoch FROM c.expires_at - s.now) * "
         "1000)::bigint),\n"
         "       greatest(0, " + cooling_until("c") + " - " + std::string(clock_millis) + "),\n"
         "       c.card" +
         (failsafe ? ", coalesce(c.failsafe->>'address', '')" : "") + "\n"
         "FROM " + quoted_candidates_ + " c, (SELECT clock_timestamp() AS now) s\n"
         "WHERE c.election = $1 AND c.expires_at > s.now\n"
         "ORDER BY c.node";
}

// A candidate that may not lead looks instead of trying: its registration,
// as an acquire writes it, and the row's holder while its lease lasts (a
// reservation is nobody's).
std::string lease_sql::look(bool with_registry) const {
  return "WITH s AS (SELECT clock_timestamp() AS now)" +
         (with_registry
              ? ",\n" + registration("s", "$5", "$6", "$4::bigint * interval '1 millisecond'")
              : std::string()) +
         "\nSELECT l.holder, l.token FROM " + quoted_table_ + " l, s\n"
         "WHERE l.election = $1 AND l.expires_at > s.now AND l.holder <> '' AND NOT " +
         reserved("l");
}

// Only the expiry it had is kept: a cool-down is no attempt, and the row
// lapses when the last attempt's registration would have.
std::string lease_sql::cooldown() const {
  return "UPDATE " + quoted_candidates_ + " AS c SET session = $3 || '" +
         std::string(cooling_mark) + "' || (" + std::string(clock_millis) +
         " + greatest($4::bigint, 0))::text\n"
         "FROM (SELECT clock_timestamp() AS now) s\n"
         "WHERE c.election = $1 AND c.node = $2 AND " + session_of("c") +
         " = $3 AND c.expires_at > s.now\n"
         "RETURNING c.node";
}

// This node's registration, written by the statement it is part of: from
// `from` (one row when it is to register), `priority` and `ttl` as SQL. It
// lives two ttls; it began without a gap unless the row found had lapsed or
// was another session's ($3): a restarted daemon is a new candidate, as a
// new server session is to the kinds that tie registrations to one. It
// writes the bare session, which ends a cool-down the row had.
std::string lease_sql::registration(std::string_view from, std::string_view priority,
                                    std::string_view card, std::string_view ttl,
                                    std::string_view failsafe) const {
  // With lease.failsafe peers: its peer address and promise, failsafe_sql.hpp.
  const bool with_failsafe = !failsafe.empty();
  return "registered AS (\n"
         "  INSERT INTO " + quoted_candidates_ +
         " AS c (election, node, session, priority, live_since, expires_at, card" +
         (with_failsafe ? ", failsafe" : "") + ")\n"
         "  SELECT $1, $2, $3, " + std::string(priority) + "::integer, s.now, s.now + 2 * " +
         std::string(ttl) + ", " + std::string(card) + "::text" +
         (with_failsafe ? ",\n         " + std::string(failsafe) : std::string()) + " FROM " +
         std::string(from) + "\n"
         "  ON CONFLICT (election, node) DO UPDATE SET session = excluded.session,\n"
         "    priority = excluded.priority, card = excluded.card," +
         (with_failsafe ? " failsafe = excluded.failsafe," : "") + "\n"
         "    live_since = CASE WHEN c.expires_at <= excluded.live_since OR\n"
         "                           " + session_of("c") + " <> excluded.session\n"
         "                      THEN excluded.live_since ELSE c.live_since END,\n"
         "    expires_at = excluded.expires_at)";
}

// Held: how many live registrations, the lease's holder and this node
// aside, have a higher priority ($9) than this node's. Other outcomes: -1.
std::string lease_sql::outranked(std::string_view a) const {
  const std::string x(a);
  return "CASE WHEN " + x + ".outcome = 'held' THEN (SELECT count(*) FROM " + quoted_candidates_ +
         " c\n"
         "         WHERE c.election = $1 AND c.expires_at > (SELECT now FROM s) AND c.node <> $2\n"
         "           AND c.node <> " + x + ".lease_holder AND c.priority > $9::integer)\n"
         "       ELSE -1 END";
}

// Deletes the election's lapsed registrations, only when `gate` (a CTE that
// wrote the lease row) has a row: this statement holds the lease row's lock
// then, so no other pruner runs at once, and a registration that is being
// written (its row locked) is skipped rather than waited for, so that a
// candidate that registers while it waits for the lease row never deadlocks
// with the pruner that holds it.
std::string lease_sql::prune(std::string_view gate) const {
  const std::string c = quoted_candidates_;
  const std::string g = "EXISTS (SELECT 1 FROM " + std::string(gate) + ")";
  return "pruned AS (\n"
         "  DELETE FROM " + c + " AS c USING s\n"
         "  WHERE c.election = $1 AND c.node <> $2 AND c.expires_at <= s.now AND " + g + "\n"
         "    AND (c.election, c.node) IN (\n"
         "      SELECT x.election, x.node FROM " + c + " x\n"
         "      WHERE x.election = $1 AND x.node <> $2 AND x.expires_at <= (SELECT now FROM s)\n"
         "        AND " + g + "\n"
         "      FOR UPDATE OF x SKIP LOCKED))";
}

}  // namespace baton::postgres_detail
