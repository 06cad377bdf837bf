// lease.failsafe peers' own statement: resume, which writes the record of a
// term the peers confirmed back into the lease row.
#include <string>

#include "failsafe_sql.hpp"
#include "lease_sql.hpp"
#include "lease_sql_parts.hpp"

namespace baton::postgres_detail {

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

}  // namespace baton::postgres_detail
