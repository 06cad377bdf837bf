// The acquire statement: the lease taken when it is free, ours or reserved
// for this node, with the server's facts that say whether data went back;
// with the registry, this node's registration; with lease.failsafe peers,
// the record and the promises that decide a grant.
#include <string>

#include "failsafe_sql.hpp"
#include "lease_sql.hpp"
#include "lease_sql_parts.hpp"

namespace baton::postgres_detail {

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

}  // namespace baton::postgres_detail
