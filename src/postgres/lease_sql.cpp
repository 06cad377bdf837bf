// The statements themselves. Identifiers are validated (postgres_table_problem)
// and double-quoted; every value travels as a parameter.
#include "lease_sql.hpp"

#include "failsafe_sql.hpp"

namespace baton::postgres_detail {
namespace {

std::string quote(std::string_view name) {
  const auto dot = name.find('.');
  if (dot == std::string_view::npos) return "\"" + std::string(name) + "\"";
  return "\"" + std::string(name.substr(0, dot)) + "\".\"" + std::string(name.substr(dot + 1)) +
         "\"";
}

// The server's identity in two parts. The cluster: its system identifier and
// the timeline of the current WAL position; a restore into a new cluster
// changes the first, a promoted replica or a point-in-time recovery the
// second. And the postmaster's start time, which any restart changes, a
// restart with every committed write intact included. All are readable by
// any role. The row keeps "cluster/start" as it was last written.
constexpr std::string_view cluster_expression =
    "(SELECT system_identifier FROM pg_control_system())::text || '/' || "
    "substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)";
constexpr std::string_view start_expression =
    "(extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint::text";

// The parts of a row's epoch: "sysid/timeline/start", then "/R" when a reset
// lifted the row's token to R, until the next term. The mark tells every
// candidate, not only the one that found the reset, that one happened ('/'
// and '//' for an empty epoch, which matches no server).
constexpr std::string_view row_cluster =
    "split_part(l.server_epoch, '/', 1) || '/' || split_part(l.server_epoch, '/', 2)";
constexpr std::string_view row_epoch =
    "split_part(l.server_epoch, '/', 1) || '/' || split_part(l.server_epoch, '/', 2) || '/' || "
    "split_part(l.server_epoch, '/', 3)";
constexpr std::string_view row_reset_mark =
    "CASE WHEN split_part(l.server_epoch, '/', 4) = '' THEN '' ELSE '/' || "
    "split_part(l.server_epoch, '/', 4) END";

// Microseconds since 1970 on the server's clock: the floor of tokens issued
// after a reset, as the Redis stores do with TIME.
constexpr std::string_view clock_micros = "(extract(epoch FROM s.now) * 1000000)::bigint";

// A registration's cool-down, after its session (lease_sql.hpp): the mark
// written, and its end read back (0 when the row has none, or one written
// by hand in another form: a preference, never an error).
constexpr std::string_view cooling_mark = " cooling_until_ms=";
constexpr std::string_view clock_millis = "(extract(epoch FROM s.now) * 1000)::bigint";
std::string cooling_until(std::string_view r) {
  return "coalesce(substring(" + std::string(r) + ".session from '" + std::string(cooling_mark) +
         "([0-9]{1,15})$')::bigint, 0)";
}
// The session a registration was written by, without its cool-down.
std::string session_of(std::string_view r) {
  return "split_part(" + std::string(r) + ".session, ' ', 1)";
}

// A switchover's reservation lives in the row itself, so that it needs no new
// column: holder reads "reserved for <target> by <the node that handed over>"
// and expires_at is the window's end. A node id has no space (the config
// allows A-Z a-z 0-9 . _ @ -, and postgres_store refuses a space), so no real
// holder reads like that. A daemon from before switchovers sees a lease held
// until the window's end by a node that never renews it: it waits, as the
// reservation wants, and takes the lease once the window is over.
constexpr std::string_view reservation_prefix = "reserved for ";

// Whether row `r`'s holder is a reservation, its target and the node that
// handed over (each meaningful only while r.expires_at is ahead).
std::string reserved(std::string_view r) {
  return "left(" + std::string(r) + ".holder, " + std::to_string(reservation_prefix.size()) +
         ") = '" + std::string(reservation_prefix) + "'";
}
std::string reserved_target(std::string_view r) {
  return "split_part(" + std::string(r) + ".holder, ' ', 3)";
}
std::string reserved_by(std::string_view r) {
  return "split_part(" + std::string(r) + ".holder, ' ', 5)";
}

// The server's clock, identity and durable WAL position, read once per
// statement. The flush position only grows on one cluster and timeline, a
// crash and its recovery included: only data put back moves it below a
// position seen before.
std::string server_facts() {
  return "s AS (SELECT x.now, x.cluster, x.cluster || '/' || x.started AS epoch, x.lsn FROM\n"
         "  (SELECT clock_timestamp() AS now, " + std::string(cluster_expression) + " AS cluster,\n"
         "          " + std::string(start_expression) + " AS started,\n"
         "          pg_current_wal_flush_lsn() AS lsn) x)";
}

}  // namespace

lease_sql::lease_sql(std::string table)
    : table_(std::move(table)),
      sequence_(table_ + "_token"),
      candidates_(table_ + "_candidates"),
      quoted_table_(quote(table_)),
      quoted_sequence_(quote(sequence_)),
      quoted_candidates_(quote(candidates_)) {}

std::string lease_sql::ddl() const {
  return "CREATE TABLE IF NOT EXISTS " + quoted_table_ +
         " (\n"
         "  election text PRIMARY KEY,\n"
         "  holder text NOT NULL DEFAULT '',\n"
         "  holder_session text NOT NULL DEFAULT '',\n"
         "  token bigint NOT NULL DEFAULT 0,\n"
         "  acquired_at timestamptz,\n"
         "  expires_at timestamptz NOT NULL DEFAULT '-infinity',\n"
         "  held_back_until timestamptz NOT NULL DEFAULT '-infinity',\n"
         "  server_epoch text NOT NULL DEFAULT '',\n"
         "  failsafe jsonb\n"
         ");\n"
         "COMMENT ON TABLE " + quoted_table_ +
         " IS 'baton leader-election leases: one row per election, never deleted; "
         "expires_at and held_back_until are in the server''s clock';\n"
         "-- A table made by a version before lease.failsafe peers (the record of its term):\n"
         "ALTER TABLE " + quoted_table_ + " ADD COLUMN IF NOT EXISTS failsafe jsonb;\n"
         "CREATE SEQUENCE IF NOT EXISTS " + quoted_sequence_ + " AS bigint;\n" + registry_ddl();
}

bool lease_sql::has_registry() const {
  // PostgreSQL cuts names at 63 bytes (NAMEDATALEN - 1; the names are
  // ASCII): a table name of 62 cuts both <table>_token and
  // <table>_candidates to <table>_.
  const auto cut = [](const std::string& name) {
    const auto dot = name.find('.');
    return (dot == std::string::npos ? name : name.substr(dot + 1)).substr(0, 63);
  };
  return cut(candidates_) != cut(table_) && cut(candidates_) != cut(sequence_);
}

std::string lease_sql::registry_ddl() const {
  if (!has_registry()) return {};
  return "CREATE TABLE IF NOT EXISTS " + quoted_candidates_ +
         " (\n"
         "  election text NOT NULL,\n"
         "  node text NOT NULL,\n"
         "  session text NOT NULL DEFAULT '',\n"
         "  priority integer NOT NULL DEFAULT 0,\n"
         "  live_since timestamptz NOT NULL,\n"
         "  expires_at timestamptz NOT NULL,\n"
         "  card text NOT NULL DEFAULT '',\n"
         "  failsafe jsonb,\n"
         "  PRIMARY KEY (election, node)\n"
         ");\n"
         "COMMENT ON TABLE " + quoted_candidates_ +
         " IS 'baton candidates: who tried to acquire a lease or renewed one lately; a row lapses "
         "two ttls after it was written (server''s clock) and a leader deletes it then';\n"
         "-- A table made by a version before the candidate card (standing, advertise address):\n"
         "ALTER TABLE " + quoted_candidates_ + " ADD COLUMN IF NOT EXISTS card text NOT NULL "
         "DEFAULT '';\n"
         "-- ... and before lease.failsafe peers (a candidate's peer address and promise):\n"
         "ALTER TABLE " + quoted_candidates_ + " ADD COLUMN IF NOT EXISTS failsafe jsonb;\n";
}

std::string lease_sql::failsafe_ddl() const {
  return "ALTER TABLE " + quoted_table_ + " ADD COLUMN IF NOT EXISTS failsafe jsonb;\n" +
         (has_registry() ? "ALTER TABLE IF EXISTS " + quoted_candidates_ +
                               " ADD COLUMN IF NOT EXISTS failsafe jsonb;\n"
                         : std::string());
}

std::string lease_sql::ddl_for_people() const {
  // A table outside the search path's default needs its schema, and the role
  // needs USAGE on it.
  const auto dot = table_.find('.');
  const std::string schema = dot == std::string::npos ? "" : "\"" + table_.substr(0, dot) + "\"";
  return "-- baton's lease table for the postgres store (postgres.table = " + table_ +
         ").\n-- Run as a role that may create tables, e.g. psql -f this-file; safe to run again.\n" +
         (schema.empty() ? "" : "CREATE SCHEMA IF NOT EXISTS " + schema + ";\n") + ddl() +
         "-- What the role baton connects as needs (replace baton with that role):\n" +
         (schema.empty() ? "" : "GRANT USAGE ON SCHEMA " + schema + " TO baton;\n") +
         "GRANT SELECT, INSERT, UPDATE ON " + quoted_table_ + " TO baton;\n" +
         "GRANT USAGE ON SEQUENCE " + quoted_sequence_ + " TO baton;\n" +
         (has_registry()
              ? "GRANT SELECT, INSERT, UPDATE, DELETE ON " + quoted_candidates_ + " TO baton;\n"
              : std::string());
}

std::string lease_sql::schema_exists() const {
  return "SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL,\n"
         "       CASE WHEN to_regclass($3) IS NULL THEN 'missing'\n"
         "            WHEN NOT has_table_privilege(to_regclass($3), 'SELECT, INSERT, UPDATE, "
         "DELETE') THEN 'denied'\n"
         "            WHEN NOT EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = "
         "to_regclass($3)\n"
         "                             AND a.attname = 'card' AND NOT a.attisdropped) THEN 'old'\n"
         "            ELSE 'ok' END,\n"
         "       EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = to_regclass($1)\n"
         "               AND a.attname = 'failsafe' AND NOT a.attisdropped) AND\n"
         "       (to_regclass($3) IS NULL OR EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = "
         "to_regclass($3)\n"
         "               AND a.attname = 'failsafe' AND NOT a.attisdropped))";
}

std::string lease_sql::acquire(bool with_registry, bool failsafe) const {
  const std::string t = quoted_table_;
  const std::string ttl = "$4::bigint * interval '1 millisecond'";
  const std::string cluster = std::string(row_cluster);
  const std::string epoch = std::string(row_epoch);
  const std::string lifted =
      "greatest(l.token, " + std::string(clock_micros) + ", $8::bigint + 1)";
  // What this node saw last ($6 cluster, $7 flush position, $8 token) and
  // finds gone: the row written on another cluster or timeline, a token
  // below the one it saw, or (same token) the WAL behind what it saw. Each
  // branch names the cause for the log.
  const std::string lost_why =
      "CASE WHEN " + cluster + " <> s.cluster THEN 'the row was written on system/timeline ' || " +
      cluster + " || ', the server is now ' || s.cluster\n"
      "       WHEN l.token < $8::bigint THEN 'the lease row''s token ' || l.token::text || ' is below ' "
      "|| $8::bigint::text || ', which this node saw earlier'\n"
      "       WHEN l.token = $8::bigint AND s.cluster = $6 AND s.lsn < $7::pg_lsn THEN "
      "'the server''s WAL position ' || s.lsn::text || ' is behind ' || $7::pg_lsn::text || ', which this node saw "
      "earlier on the same system and timeline' END";
  // A row that lapsed unreleased may have lapsed early, by a step of the
  // server's clock, and so may a hold-back (both are judged on it): such a
  // row is taken only when the clock is not beyond the latest time this node
  // can expect (the last parameter, 0 = it cannot tell yet:
  // clock_watch.hpp). A row never held, or released (its session cleared),
  // and not held back since, ended no live term.
  const std::string expected = with_registry ? "$11" : "$9";
  const std::string lapsed_may_be_taken =
      "((l.held_back_until <= l.expires_at AND (l.expires_at = '-infinity' OR "
      "l.holder_session = '')) OR " + std::string(clock_micros) + " <= " + expected + "::bigint)";
  // Free (lapsed, and the clock allows it), ours, or reserved for this node
  // (by node id: the target is another process than the one that handed
  // over).
  const std::string takeable = "(l.expires_at <= s.now AND " + lapsed_may_be_taken +
                               ") OR\n"
                               "        (l.holder = $2 AND l.holder_session = $3) OR\n"
                               "        (" + reserved("l") + " AND " + reserved_target("l") +
                               " = $2)";
  // lease.failsafe peers (failsafe_sql.hpp): its parameters after the rest.
  const int f = with_registry ? 12 : 10;
  const auto param = [f](int i, const char* type) {
    return "$" + std::to_string(f + i) + "::" + type;
  };
  const std::string may_win = param(0, "boolean");
  const std::string cleared = param(1, "bigint");
  const std::string address = param(2, "text");
  const std::string list = param(3, "jsonb");
  const std::string list_seq = param(4, "bigint");
  // A free lease the record or a registered promise holds stays free for a
  // caller that has not cleared that term; the caller's own live lease
  // holds nothing back.
  const std::string live_ours = "(l.holder = $2 AND l.holder_session = $3 AND l.expires_at > s.now)";
  const std::string held_for_failsafe =
      failsafe_sql::record_holds(cleared) +
      (with_registry ? " OR\n         " + failsafe_sql::promises_hold(quoted_candidates_, cleared)
                     : std::string());
  const std::string failsafe_gate =
      failsafe ? " AND " + may_win + " AND\n        (" + live_ours + " OR NOT (" +
                     held_for_failsafe + "))"
               : std::string();
  // The term's token, drawn once: a grant writes it into the row and,
  // with lease.failsafe peers, into the record (a sub-select, so that the
  // sequence's nextval is called once for both).
  const std::string token_case =
      "CASE WHEN k.lost THEN " + lifted + "\n"
      "                 WHEN k.restarted THEN l.token\n"
      "                 ELSE greatest(nextval('" + quoted_sequence_ + "'), l.token + 1) END";
  const std::string token_set =
      failsafe ? "    (token, failsafe) = (SELECT x.t, CASE WHEN k.election IS NULL THEN " +
                     failsafe_sql::record("x.t", list_seq, address, list) +
                     "\n                                          ELSE l.failsafe END\n"
                     "                         FROM (SELECT " + token_case + " AS t) x),\n"
               : "    token = " + token_case + ",\n";
  // What the answer says beyond the row, with the mode: a failsafe hold on
  // a free lease this caller could take, or that it only registered.
  const std::string may_take = "l.held_back_until <= s.now AND (" + takeable + ")";
  // A hold is told whatever the clock's watch says (it grants nothing):
  // the caller clears the term meanwhile, and its next grant meets the
  // clock's rule.
  const std::string open_to_caller =
      "l.held_back_until <= s.now AND (l.expires_at <= s.now OR\n"
      "        (l.holder = $2 AND l.holder_session = $3) OR (" + reserved("l") + " AND " +
      reserved_target("l") + " = $2))";
  const std::string verdict =
      "fs AS (\n"
      "  SELECT h.hold, h.may AND NOT " + may_win + " AND h.hold IS NULL AS abstained FROM\n"
      "    (SELECT CASE WHEN NOT (" + open_to_caller + ") OR " + live_ours + " THEN NULL\n"
      "                 WHEN " + failsafe_sql::record_holds(cleared) + " THEN " +
      failsafe_sql::hold_of_record() + "\n"
      "                 ELSE " +
      (with_registry ? failsafe_sql::hold_of_promises(quoted_candidates_, cleared)
                     : std::string("NULL::jsonb")) +
      " END AS hold,\n"
      "            " + may_take + " AS may\n"
      "     FROM " + t + " l, s WHERE l.election = $1) h),\n";
  const std::string refused_by_mode = failsafe ? " OR f.hold IS NOT NULL OR f.abstained" : "";
  const auto unless_refused_by_mode = [&](const std::string& refused, const std::string& otherwise) {
    return failsafe ? "CASE WHEN f.hold IS NOT NULL OR f.abstained THEN " + refused + " ELSE " +
                          otherwise + " END"
                    : otherwise;
  };
  const std::string registered =
      failsafe ? registration("s", "$9", "$10", ttl,
                              failsafe_sql::registration(address, param(5, "text"),
                                                         param(6, "bigint"), param(7, "bigint")))
               : registration("s", "$9", "$10", ttl);
  return "WITH " + server_facts() + ",\n" +
         (with_registry ? registered + ",\n" : std::string()) + (failsafe ? verdict : std::string()) +
         "created AS (\n"
         "  INSERT INTO " + t + " AS l (election, token, held_back_until, server_epoch)\n"
         "  SELECT $1, greatest(" + std::string(clock_micros) + ", $8::bigint + 1), s.now + " + ttl +
         ",\n"
         "         s.epoch || '/' || greatest(" + std::string(clock_micros) + ", $8::bigint + 1) FROM s\n"
         "  ON CONFLICT (election) DO NOTHING\n"
         "  RETURNING l.token, l.held_back_until, l.server_epoch),\n"
         // Only a row that went back or was written under another epoch is
         // locked here (FOR UPDATE re-reads a row changed meanwhile, so the
         // verdict is that of the row the update below changes); the
         // ordinary poll takes no lock on the lease row and writes nothing
         // to it (only its own registration, where there is a registry).
         "odd AS (\n"
         "  SELECT l.election, " + lost_why + " AS lost_why, " + epoch + " <> s.epoch AS moved\n"
         "  FROM " + t + " l, s\n"
         "  WHERE l.election = $1 AND (" + cluster + " <> s.cluster OR l.token < $8::bigint OR\n"
         "        (l.token = $8::bigint AND s.cluster = $6 AND s.lsn < $7::pg_lsn) OR " +
         epoch + " <> s.epoch)\n"
         "  FOR UPDATE OF l),\n"
         "k AS (SELECT o.election, o.lost_why IS NOT NULL AS lost, o.moved AND o.lost_why IS NULL AS "
         "restarted,\n"
         "             o.lost_why FROM odd o),\n"
         "changed AS (\n"
         "  UPDATE " + t + " AS l SET\n"
         "    holder = CASE WHEN k.election IS NULL THEN $2 ELSE l.holder END,\n"
         "    holder_session = CASE WHEN k.election IS NULL THEN $3 ELSE l.holder_session END,\n" +
         token_set +
         "    acquired_at = CASE WHEN k.election IS NOT NULL THEN l.acquired_at\n"
         "                       WHEN l.expires_at > s.now AND l.holder = $2 AND "
         "l.holder_session = $3 THEN l.acquired_at\n"
         "                       ELSE s.now END,\n"
         // A restart keeps a held term and makes it last at least a ttl from
         // now: renewals the leader made and the server no longer has (had
         // it come back from a copy) are covered, and a leader that lives
         // renews it as before. A reservation is no term: it keeps its end.
         "    expires_at = CASE WHEN k.lost THEN l.expires_at\n"
         "                      WHEN k.restarted AND l.expires_at > s.now AND NOT " +
         reserved("l") + " THEN greatest(l.expires_at, s.now + " + ttl + ")\n"
         "                      WHEN k.restarted THEN l.expires_at\n"
         "                      ELSE s.now + " + ttl + " END,\n"
         // Lost data holds everyone back; so does a restart while the lease
         // was free or reserved (nobody held it: a term the server no longer
         // has may still be at work).
         "    held_back_until = CASE WHEN k.lost OR (k.restarted AND (l.expires_at <= s.now OR " +
         reserved("l") + "))\n"
         "                           THEN greatest(l.held_back_until, s.now + " + ttl + ")\n"
         "                           ELSE l.held_back_until END,\n"
         // The mark lasts while the hold-back may: a restart keeps it, the
         // next term (after the hold-back) clears it.
         "    server_epoch = s.epoch || CASE WHEN k.lost THEN '/' || " + lifted + "\n"
         "                                   WHEN k.restarted THEN " + std::string(row_reset_mark) +
         "\n"
         "                                   ELSE '' END\n"
         "  FROM s LEFT JOIN k ON true\n"
         // Free, ours, or reserved for this node (by node id: the target is
         // another process than the one that handed over).
         "  WHERE l.election = $1 AND (k.election IS NOT NULL OR\n"
         "       (l.held_back_until <= s.now AND (" + takeable + ")" + failsafe_gate + "))\n"
         "  RETURNING l.holder, l.token, coalesce(k.lost, false) AS lost,\n"
         "            coalesce(k.restarted, false) AS restarted, k.lost_why,\n"
         "            l.acquired_at = s.now AS new_term, l.expires_at, l.held_back_until, s.now,\n"
         "            l.server_epoch, s.lsn),\n" +
         (with_registry ? prune("changed") + ",\n" : std::string()) +
         "answer AS (\n"
         "  SELECT CASE WHEN c.lost OR c.held_back_until > c.now THEN 'held_back'\n"
         "              WHEN c.restarted THEN 'held' ELSE 'acquired' END AS outcome,\n"
         "         c.lost AS reset, false AS missing,\n"
         "         c.new_term AND NOT c.lost AND NOT c.restarted AS new_term,\n"
         // A reservation a reset or restart met is nobody's lease.
         "         CASE WHEN c.expires_at > c.now AND NOT " + reserved("c") +
         " THEN c.holder ELSE '' END AS holder,\n"
         "         c.token,\n"
         "         CASE WHEN c.lost OR c.restarted THEN greatest(0, ceil(extract(epoch FROM "
         "greatest(c.held_back_until, c.expires_at, c.now) - c.now) * 1000))::bigint\n"
         "              ELSE $4::bigint END AS remaining_ms,\n"
         "         c.server_epoch AS epoch, c.restarted, c.lsn, c.lost_why,\n"
         "         -1::bigint AS free_in_us,\n"
         "         ''::text AS reserved_for, c.holder AS lease_holder, false AS left_for_the_clock" +
         (failsafe ? ",\n         NULL::text AS hold, false AS abstained" : std::string()) + "\n"
         "  FROM changed c\n"
         "  UNION ALL\n"
         "  SELECT 'held_back', true, true, false, '', r.token,\n"
         "         ceil(extract(epoch FROM r.held_back_until - s.now) * 1000)::bigint, "
         "r.server_epoch, false, s.lsn, NULL, -1::bigint, '', '', false" +
         (failsafe ? ", NULL::text, false" : std::string()) + "\n"
         "  FROM created r, s\n"
         "  UNION ALL\n"
         "  SELECT CASE WHEN l.held_back_until > s.now" + refused_by_mode +
         " THEN 'held_back' ELSE 'held' END, false, "
         "false, false,\n"
         // Reserved: the node that handed over holds nothing but is named,
         // and the reservation's target is told apart (unless held back).
         "         " +
         unless_refused_by_mode("''", "CASE WHEN l.expires_at <= s.now THEN '' WHEN NOT " +
                                          reserved("l") + " THEN l.holder\n"
                                          "              WHEN l.held_back_until > s.now THEN '' "
                                          "ELSE " + reserved_by("l") + " END") +
         ",\n"
         // With the mode, the holder's own term's token (failsafe_sql.hpp).
         "         " + (failsafe ? failsafe_sql::term_token_of_row("l") : std::string("l.token")) +
         ",\n"
         // A row never held has '-infinity' in both columns, and PostgreSQL
         // refuses to subtract an infinite timestamp: `s.now` keeps every
         // difference here finite. Such a row reaches this branch when
         // another candidate's acquire took it while this one waited for its
         // lock (this statement's snapshot still shows it never held).
         "         " +
         unless_refused_by_mode("-1::bigint",
                                "greatest(0, ceil(extract(epoch FROM greatest(l.held_back_until, "
                                "l.expires_at, s.now) - s.now) * 1000))::bigint") +
         ", l.server_epoch, false, s.lsn, NULL,\n"
         // Held: the time until the lease is free to the microsecond (the
         // row's own resolution), so a standby tries right at the expiry
         // instead of up to 2 ms after it (the millisecond above, rounded
         // up, plus the machine's 1 ms margin for stores that round down).
         // Counted from the clock as this row is answered, not from the
         // statement's start: the standby counts it from its receipt, and
         // the statement's own run (0.3-0.6 ms) would make it that late.
         "         CASE WHEN l.held_back_until > s.now THEN -1 WHEN l.expires_at <= s.now THEN 0\n"
         "              ELSE greatest(0, ceil(extract(epoch FROM l.expires_at - clock_timestamp()) * "
         "1000000))::bigint END,\n"
         "         CASE WHEN l.expires_at > s.now AND l.held_back_until <= s.now AND " +
         reserved("l") + " THEN " + reserved_target("l") + " ELSE '' END,\n"
         "         CASE WHEN l.expires_at > s.now AND NOT " + reserved("l") +
         " THEN l.holder ELSE '' END,\n"
         // Free, and left only because this node cannot vouch for the clock.
         "         l.expires_at <= s.now AND l.held_back_until <= s.now AND NOT " +
         lapsed_may_be_taken +
         (failsafe ? ",\n         f.hold::text, coalesce(f.abstained, false)\n"
                     "  FROM " + t + " l, s LEFT JOIN fs f ON true\n"
                   : "\n  FROM " + t + " l, s\n") +
         "  WHERE l.election = $1 AND NOT EXISTS (SELECT 1 FROM changed)\n"
         "    AND NOT EXISTS (SELECT 1 FROM created))\n"
         "SELECT a.outcome, a.reset, a.missing, a.new_term, a.holder, a.token, a.remaining_ms, "
         "a.epoch,\n"
         "       CASE WHEN a.new_term THEN pg_notify($5, json_build_object('event', 'acquired', "
         "'election', $1,\n"
         "            'holder', a.holder, 'session', $3::text, 'token', a.token)::text)::text END,\n"
         "       a.restarted, a.lsn::text, a.lost_why, a.free_in_us, a.reserved_for,\n"
         "       " + (with_registry ? outranked("a") : std::string("-1::bigint")) + ",\n"
         // The server's time this statement read, for this node's watch on it.
         "       (SELECT (extract(epoch FROM now) * 1000000)::bigint FROM s), a.left_for_the_clock" +
         (failsafe ? ",\n       a.hold, a.abstained" : std::string()) + "\n"
         "FROM answer a";
}

std::string lease_sql::renew(bool with_registry, bool failsafe) const {
  const std::string ttl = "$5::bigint * interval '1 millisecond'";
  // lease.failsafe peers: the term, the list's number, the peer address and
  // the list after the rest; a leader registers no promise.
  const int f = with_registry ? 8 : 6;
  const auto param = [f](int i, const char* type) {
    return "$" + std::to_string(f + i) + "::" + type;
  };
  const std::string record =
      failsafe ? ",\n    failsafe = " +
                     failsafe_sql::record_kept_or_written(param(0, "bigint"), param(1, "bigint"),
                                                          param(2, "text"), param(3, "jsonb"))
               : std::string();
  const std::string registered =
      failsafe ? registration("s, renewed", "$6", "$7", ttl,
                              failsafe_sql::registration(param(2, "text"), "''::text",
                                                         "0::bigint", "0::bigint"))
               : registration("s, renewed", "$6", "$7", ttl);
  return "WITH s AS (SELECT clock_timestamp() AS now),\n"
         "renewed AS (\n"
         "  UPDATE " + quoted_table_ + " AS l SET expires_at = s.now + " + ttl + record + " FROM s\n"
         "  WHERE l.election = $1 AND l.holder = $2 AND l.holder_session = $3 AND l.token = "
         "$4::bigint\n"
         "    AND l.expires_at > s.now\n"
         "  RETURNING l.token)" +
         // Only a renewal that took registers (and prunes): the lease row is
         // locked by then, which orders the registry's row locks after it.
         (with_registry ? ",\n" + registered + ",\n" + prune("renewed") : std::string()) +
         "\nSELECT token FROM renewed";
}

// lease.failsafe peers (F8, failsafe_sql.hpp): one statement, so the
// checks and the writes are one atomic step. The row is locked by the
// update (a concurrent grant is seen as the row it wrote); a missing row is
// created as this term's, its token lifted to the server's clock as a
// missing row's always is, and marked so that the other candidates hear of
// the lost data.
std::string lease_sql::resume(bool with_registry) const {
  const std::string t = quoted_table_;
  const std::string ttl = "$5::bigint * interval '1 millisecond'";
  const std::string record =
      failsafe_sql::record("$4::bigint", "$7::bigint", "$8::text", "$9::jsonb");
  const std::string floor = "greatest(" + std::string(clock_micros) + ", $4::bigint)";
  return "WITH " + server_facts() + ",\n" +
         (with_registry
              ? registration("s", "$10", "$11", ttl,
                             failsafe_sql::registration("$8::text", "''::text", "0::bigint",
                                                        "0::bigint")) +
                    ",\n"
              : std::string()) +
         "resumed AS (\n"
         "  UPDATE " + t + " AS l SET holder = $2, holder_session = $3,\n"
         "    token = greatest(l.token, $4::bigint),\n"
         "    acquired_at = CASE WHEN l.expires_at > s.now THEN l.acquired_at ELSE s.now END,\n"
         "    expires_at = s.now + " + ttl + ",\n"
         "    failsafe = " +
         failsafe_sql::record_kept_or_written("$4::bigint", "$7::bigint", "$8::text", "$9::jsonb") +
         ",\n"
         // The server it was written under, the reset's mark kept.
         "    server_epoch = s.epoch || " + std::string(row_reset_mark) + "\n"
         "  FROM s\n"
         // Nobody else holds it (a live reservation is someone's), and the
         // record is this term's or gone.
         "  WHERE l.election = $1 AND (l.expires_at <= s.now OR (l.holder = $2 AND "
         "l.holder_session = $3))\n"
         "    AND (l.failsafe IS NULL OR (l.failsafe->>'holder' = $2 AND l.failsafe->>'session' = $3 "
         "AND\n"
         "                                (l.failsafe->>'token')::bigint = $4::bigint))\n"
         "  RETURNING l.token, l.acquired_at = s.now AS lapsed),\n"
         "created AS (\n"
         "  INSERT INTO " + t + " AS l (election, holder, holder_session, token, acquired_at, "
         "expires_at, server_epoch, failsafe)\n"
         "  SELECT $1, $2, $3, " + floor + ", s.now, s.now + " + ttl + ", s.epoch || '/' || " +
         floor + ",\n"
         "         " + record + " FROM s\n"
         "  WHERE NOT EXISTS (SELECT 1 FROM " + t + " x WHERE x.election = $1)\n"
         "  ON CONFLICT (election) DO NOTHING\n"
         "  RETURNING l.token, true AS lapsed),\n"
         "done AS (SELECT * FROM resumed UNION ALL SELECT * FROM created)\n"
         "SELECT d.token, CASE WHEN d.lapsed THEN pg_notify($6, json_build_object('event', "
         "'acquired',\n"
         "         'election', $1, 'holder', $2::text, 'session', $3::text, 'token', "
         "$4::bigint)::text)::text END\n"
         "FROM done d";
}

std::string lease_sql::release(bool failsafe) const {
  return "WITH s AS (SELECT clock_timestamp() AS now),\n"
         "freed AS (\n"
         "  UPDATE " + quoted_table_ + " AS l SET expires_at = s.now, holder_session = ''" +
         (failsafe ? ", failsafe = NULL" : "") + " FROM s\n"
         "  WHERE l.election = $1 AND l.holder = $2 AND l.holder_session = $3 AND l.token = "
         "$4::bigint\n"
         "    AND l.expires_at > s.now\n"
         "  RETURNING l.token)\n" +
         released_announcement();
}

std::string lease_sql::hand_over(bool failsafe) const {
  // The term ends as a release ends it (renew and release match the holder,
  // which is no node id now); the token stays, so the target's term takes
  // the next one.
  return "WITH s AS (SELECT clock_timestamp() AS now),\n"
         "freed AS (\n"
         "  UPDATE " + quoted_table_ + " AS l SET holder = '" + std::string(reservation_prefix) +
         "' || $6 || ' by ' || $2,\n"
         "    expires_at = s.now + greatest($7::bigint, 0) * interval '1 millisecond',\n"
         "    holder_session = ''" + (failsafe ? std::string(", failsafe = NULL") : std::string()) +
         " FROM s\n"
         "  WHERE l.election = $1 AND l.holder = $2 AND l.holder_session = $3 AND l.token = "
         "$4::bigint\n"
         "    AND l.expires_at > s.now\n"
         "  RETURNING l.token)\n" +
         released_announcement();
}

// The release's announcement, the same for a hand-over: daemons from before
// switchovers read it as they always did.
std::string lease_sql::released_announcement() const {
  return "SELECT f.token, pg_notify($5, json_build_object('event', 'released', 'election', $1,\n"
         "         'holder', $2::text, 'session', $3::text, 'token', f.token)::text)::text\n"
         "FROM freed f";
}

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

std::string lease_sql::create_record() const {
  return "WITH " + server_facts() + "\n"
         "INSERT INTO " + quoted_table_ +
         " (election, token, server_epoch)\n"
         "SELECT $1, " + std::string(clock_micros) +
         ", s.epoch FROM s\n"
         "ON CONFLICT (election) DO NOTHING\n"
         "RETURNING token";
}

std::string lease_sql::listen() const { return "LISTEN \"" + table_ + "\""; }

}  // namespace baton::postgres_detail
