// The SQL pieces of lease.failsafe peers (failsafe_sql.hpp). Tokens are
// compared as bigints; a malformed record fails the statement (a cast
// error), which refuses the grant rather than guessing.
#include "failsafe_sql.hpp"

namespace baton::postgres_detail::failsafe_sql {
namespace {

std::string s(std::string_view v) { return std::string(v); }

constexpr std::string_view server_micros = "(extract(epoch FROM s.now) * 1000000)::bigint";

}  // namespace

std::string record(std::string_view token, std::string_view seq, std::string_view address,
                   std::string_view peers) {
  return "jsonb_build_object('token', " + s(token) + ", 'seq', " + s(seq) +
         ", 'holder', $2::text, 'session', $3::text, 'address', " + s(address) + ", 'peers', " +
         s(peers) + ")";
}

std::string record_kept_or_written(std::string_view token, std::string_view seq,
                                   std::string_view address, std::string_view peers) {
  return "CASE WHEN l.failsafe->>'holder' = $2 AND l.failsafe->>'session' = $3 AND\n"
         "               (l.failsafe->>'token')::bigint = " + s(token) +
         " AND (l.failsafe->>'seq')::bigint >= " + s(seq) + "\n"
         "          THEN l.failsafe ELSE " + record(token, seq, address, peers) + " END";
}

std::string record_holds(std::string_view cleared) {
  return "(l.failsafe IS NOT NULL AND (l.failsafe->>'token')::bigint > " + s(cleared) +
         " AND\n"
         "         NOT coalesce(l.failsafe->>'holder' = $2 AND l.failsafe->>'session' = $3, "
         "false))";
}

namespace {

std::string promising(std::string_view cleared) {
  return "c.election = $1 AND c.node <> $2 AND c.expires_at > s.now AND\n"
         "        (c.failsafe->>'token')::bigint > " + s(cleared) +
         " AND (c.failsafe->>'until_us')::bigint > " + s(server_micros) + " AND\n"
         "        coalesce(c.failsafe->>'leader', '') <> $2";
}

}  // namespace

std::string promises_hold(std::string_view candidates, std::string_view cleared) {
  return "EXISTS (SELECT 1 FROM " + s(candidates) + " c WHERE " + promising(cleared) + ")";
}

std::string hold_of_record() {
  return "jsonb_build_object('leader', l.failsafe->>'holder', 'token', "
         "(l.failsafe->>'token')::bigint,\n"
         "          'address', coalesce(l.failsafe->>'address', ''), 'peers', "
         "coalesce(l.failsafe->'peers', '[]'::jsonb))";
}

std::string hold_of_promises(std::string_view candidates, std::string_view cleared) {
  return "(SELECT jsonb_build_object(\n"
         "          'leader', (array_agg(c.failsafe->>'leader' ORDER BY (c.failsafe->>'token')::bigint "
         "DESC, c.node))[1],\n"
         "          'token', max((c.failsafe->>'token')::bigint), 'address', '',\n"
         "          'peers', jsonb_agg(jsonb_build_object('node', c.node, 'address', "
         "coalesce(c.failsafe->>'address', '')) ORDER BY c.node))\n"
         "        FROM " + s(candidates) + " c WHERE " + promising(cleared) + "\n"
         "        HAVING count(*) > 0)";
}

std::string registration(std::string_view address, std::string_view leader,
                         std::string_view token, std::string_view ms_left) {
  return "jsonb_build_object('address', " + s(address) + ", 'leader', " + s(leader) +
         ", 'token', " + s(token) + ",\n"
         "         'until_us', CASE WHEN " + s(token) + " > 0 THEN " + s(server_micros) +
         " + greatest(" + s(ms_left) + ", 0) * 1000 ELSE 0 END)";
}

std::string term_token_of_row(std::string_view row) {
  const std::string r(row);
  return "CASE WHEN " + r + ".failsafe->>'holder' = " + r + ".holder AND " + r +
         ".failsafe->>'session' = " + r + ".holder_session\n"
         "              THEN (" + r + ".failsafe->>'token')::bigint ELSE " + r + ".token END";
}

}  // namespace baton::postgres_detail::failsafe_sql
