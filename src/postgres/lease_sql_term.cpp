// The statements of a term held, and of the lease row: renew, release,
// hand-over (a release that leaves a reservation), the release's
// announcement, the election's record made, and LISTEN on the table's
// channel.
#include <string>

#include "failsafe_sql.hpp"
#include "lease_sql.hpp"
#include "lease_sql_parts.hpp"

namespace baton::postgres_detail {

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
