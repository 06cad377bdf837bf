// The postgres kind's checks: one session made as the store makes its own,
// then one statement that reads what matters: the server's version and role
// (a standby is read-only), the user, synchronous_commit as baton's session
// sets it, the lease table and the privileges on it (or, when it is missing,
// whether the user may create it where it would go), the candidates' table
// (a switchover's list; the lease works without it), the server's clock, and
// the election's row. Round-trip latency is timed on a trivial statement.
#include <algorithm>
#include <chrono>
#include <memory>

#include "baton/check_report.hpp"
#include "postgres/lease_sql.hpp"
#include "postgres/pg_connection.hpp"
#include "store/check_lines.hpp"
#include "postgres_check.hpp"
#include "postgres_settings.hpp"

namespace baton::store_check_detail {
namespace {

namespace asio = boost::asio;
using postgres_detail::query_result;

std::string cell(const query_result& r, std::size_t column) {
  if (r.rows.empty() || r.rows[0].size() <= column || !r.rows[0][column]) return {};
  return *r.rows[0][column];
}

// The table is missing and postgres.create_schema is on: whether the first
// start can create it. `where` is the schema it would go to ("" = none: no
// schema of the search path exists, or the named one does not); `may` is
// has_schema_privilege(..., 'CREATE') there ("t"/"f").
void add_missing_table_line(check_report& report, const std::string& table,
                            const std::string& schema, const std::string& user,
                            const std::string& where, const std::string& may) {
  const std::string apply = "have a role that may create it apply `baton init-store --print`";
  if (where.empty()) {
    report.lines.push_back(
        {check_verdict::failure, "table",
         table + " does not exist and cannot be created: " +
             (schema.empty() ? std::string("no schema of the search path exists")
                             : "schema " + schema + " does not exist") +
             "; " + apply});
  } else if (may != "t") {
    report.lines.push_back(
        {check_verdict::failure, "table",
         table + " does not exist and " + user + " may not create it: no CREATE privilege on "
             "schema " + where + " (PostgreSQL 15 and later no longer grant it on public to every "
             "role); " + apply + ", or GRANT CREATE ON SCHEMA " + where + " TO " + user});
  } else {
    report.lines.push_back({check_verdict::note, "table",
                            table + " does not exist yet: baton creates it on first use "
                                    "(postgres.create_schema; " + user +
                                " may create in schema " + where + ")"});
  }
}

// The lease table exists; the candidates' table beside it: `exists`
// ("t"/"f"), `usable` (the privileges the statements use: "t"/"f", or "old"
// for a table made before the candidate card's column), `may_create`
// (CREATE where it would go). Never more than a note: leases work without it.
void add_registry_line(check_report& report, const std::string& registry, const std::string& user,
                       bool create, const std::string& exists, const std::string& usable,
                       const std::string& may_create) {
  const std::string without = ": leases work, but a switchover lists no candidates";
  const std::string apply = " (apply `baton init-store --print`)";
  if (exists == "t" && usable == "t") {
    report.lines.push_back(
        {check_verdict::ok, "candidates", "SELECT, INSERT, UPDATE and DELETE on " + registry});
  } else if (exists == "t" && usable == "old") {
    report.lines.push_back(
        {check_verdict::note, "candidates",
         registry + " was made before the candidate card (it lacks the column card): " +
             (create ? std::string("baton adds it on first use if it may alter the table, else ") +
                           "a switchover lists no candidates" + apply
                     : std::string("postgres.create_schema is false") + without + apply)});
  } else if (exists == "t") {
    report.lines.push_back(
        {check_verdict::note, "candidates",
         user + " lacks SELECT, INSERT, UPDATE or DELETE on " + registry + without + apply});
  } else if (create && may_create == "t") {
    report.lines.push_back({check_verdict::note, "candidates",
                            registry + " does not exist yet: baton creates it on first use"});
  } else {
    report.lines.push_back({check_verdict::note, "candidates",
                            registry + " does not exist and baton " +
                                (create ? "may not create it"
                                        : "does not create it (postgres.create_schema is false)") +
                                without + apply});
  }
}

// lease.failsafe peers: the lease table (and the candidates' table, if it
// exists) has the column failsafe (`has`: "t"/"f"), or baton adds it.
void add_failsafe_line(check_report& report, const std::string& table, bool create,
                       const std::string& has) {
  if (has == "t") {
    report.lines.push_back({check_verdict::ok, "failsafe",
                            table + " has the column lease.failsafe peers keeps its record in"});
  } else if (create) {
    report.lines.push_back(
        {check_verdict::note, "failsafe",
         table + " was made before lease.failsafe peers (it, or the candidates' table, lacks the "
                 "column failsafe): baton adds it on first use if it may alter the tables, else "
                 "its statements fail (apply `baton init-store --print`)"});
  } else {
    report.lines.push_back(
        {check_verdict::failure, "failsafe",
         table + " lacks the column failsafe that lease.failsafe peers needs (or the candidates' "
                 "table does) and postgres.create_schema is false: apply `baton init-store "
                 "--print`"});
  }
}

}  // namespace

void async_check_postgres(asio::io_context& io, const config& cfg,
                          std::function<void(check_report)> done) {
  const auto& pg = postgres_settings_of(cfg);
  postgres_detail::connection_options o;
  o.conninfo = pg.url;
  o.password = pg.password;
  o.application_name = "baton check-store";
  o.connect_timeout = pg.connect_timeout;
  o.command_timeout = pg.command_timeout;
  o.setup_sql = "SET synchronous_commit = on";
  auto conn = postgres_detail::connection::create(io, o);
  const std::string table = pg.table;
  const auto sent = std::chrono::steady_clock::now();
  const std::string sql =
      "SELECT current_setting('server_version'), pg_is_in_recovery(), current_user, "
      "current_setting('synchronous_commit'), to_regclass($1) IS NOT NULL, "
      "CASE WHEN to_regclass($1) IS NULL THEN NULL ELSE has_table_privilege(to_regclass($1), "
      "'SELECT, INSERT, UPDATE') END, "
      "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint, "
      // Where a missing table would be created (the name's schema, else the
      // first schema of the search path that exists) and whether the user
      // may create there: PostgreSQL 15 no longer lets every role create
      // in schema public.
      "n.nspname, CASE WHEN n.oid IS NULL THEN NULL ELSE has_schema_privilege(n.oid, 'CREATE') "
      "END, "
      // The candidates' table, and the privileges its statements use.
      "to_regclass($3) IS NOT NULL, CASE WHEN to_regclass($3) IS NULL THEN NULL "
      "WHEN NOT has_table_privilege(to_regclass($3), 'SELECT, INSERT, UPDATE, DELETE') THEN 'f' "
      "WHEN NOT EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = to_regclass($3) AND "
      "a.attname = 'card' AND NOT a.attisdropped) THEN 'old' ELSE 't' END, "
      // lease.failsafe peers: the record's column, and the registration's.
      "EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND "
      "a.attname = 'failsafe' AND NOT a.attisdropped) AND (to_regclass($3) IS NULL OR EXISTS "
      "(SELECT FROM pg_attribute a WHERE a.attrelid = to_regclass($3) AND a.attname = 'failsafe' "
      "AND NOT a.attisdropped)) "
      "FROM (SELECT CASE WHEN $2 = '' THEN current_schema() ELSE $2 END AS name) w "
      "LEFT JOIN pg_namespace n ON n.nspname = w.name";
  const auto dot = table.find('.');
  const std::string schema = dot == std::string::npos ? "" : table.substr(0, dot);
  const std::string registry = postgres_detail::lease_sql(table).candidates_table();
  std::vector<std::string> args{table, schema, registry};
  conn->async_query(sql, std::move(args), [conn, done = std::move(done), sent, table, schema,
                                   registry, ttl = cfg.lease.ttl,
                                   create = pg.create_schema,
                                   failsafe = cfg.lease.failsafe == failsafe_mode::peers,
                                   timeout = pg.command_timeout](query_result r) {
    check_report report;
    auto add = [&report](check_verdict v, std::string topic, std::string text) {
      report.lines.push_back({v, std::move(topic), std::move(text)});
    };
    if (r.ec) {
      add(check_verdict::failure, "reachable", r.detail);
      conn->close();
      done(std::move(report));
      return;
    }
    const auto received = std::chrono::system_clock::now();
    add(check_verdict::ok, "reachable",
        "answered in " + ms_text(std::chrono::steady_clock::now() - sent) +
            " (connect and log-in included)");
    add(check_verdict::ok, "version", "PostgreSQL " + cell(r, 0));
    add(check_verdict::ok, "user", "authenticated as " + cell(r, 2));
    if (cell(r, 1) == "t") {
      add(check_verdict::failure, "role", "a standby in recovery (read-only): connect to the primary");
    } else {
      add(check_verdict::ok, "role", "primary (not in recovery)");
    }
    if (cell(r, 4) != "t") {
      if (create) {
        add_missing_table_line(report, table, schema, cell(r, 2), cell(r, 7), cell(r, 8));
      } else {
        add(check_verdict::failure, "table",
            table + " does not exist and postgres.create_schema is false: apply `baton "
                    "init-store --print`");
      }
    } else if (cell(r, 5) != "t") {
      add(check_verdict::failure, "acl",
          "the user lacks SELECT, INSERT or UPDATE on " + table + " (see `baton init-store --print`)");
    } else {
      add(check_verdict::ok, "acl", "SELECT, INSERT and UPDATE on " + table);
    }
    if (cell(r, 4) == "t" && !postgres_detail::lease_sql(table).has_registry()) {
      add(check_verdict::note, "candidates",
          registry +
              ", cut at PostgreSQL's 63 bytes, is the name of the lease table's sequence: "
              "leases work, but a switchover lists no candidates (choose a shorter "
              "postgres.table)");
    } else if (cell(r, 4) == "t") {
      add_registry_line(report, registry, cell(r, 2), create, cell(r, 9), cell(r, 10), cell(r, 8));
    }
    if (failsafe && cell(r, 4) == "t") add_failsafe_line(report, table, create, cell(r, 11));
    try {
      const auto server = std::chrono::milliseconds(std::stoll(cell(r, 6)));
      const auto local = std::chrono::duration_cast<std::chrono::milliseconds>(received.time_since_epoch());
      report.lines.push_back(clock_line(server - local));
    } catch (const std::exception&) {
    }
    const auto again = std::chrono::steady_clock::now();
    conn->async_query("SELECT 1", {}, [conn, done, report, again, ttl, timeout](query_result r2) mutable {
      if (!r2.ec) {
        const auto rtt = std::chrono::steady_clock::now() - again;
        const bool slow = rtt > timeout / 2;
        report.lines.push_back({slow ? check_verdict::hazard : check_verdict::ok, "latency",
                                "round trip " + ms_text(rtt) + " (command timeout " +
                                    std::to_string(timeout.count()) + " ms, ttl " +
                                    std::to_string(ttl.count()) + " ms)"});
      }
      conn->close();
      done(std::move(report));
    });
  });
}

}  // namespace baton::store_check_detail
