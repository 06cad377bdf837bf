// The postgres kind's checks: one session made as the store makes its own,
// then one statement that reads what matters: the server's version and role
// (a standby is read-only), the user, synchronous_commit as baton's session
// sets it, the lease table and the privileges on it, the server's clock, and
// the election's row. Round-trip latency is timed on a trivial statement.
#include <algorithm>
#include <chrono>
#include <memory>

#include "baton/store_check.hpp"
#include "postgres/lease_sql.hpp"
#include "postgres/pg_connection.hpp"
#include "check_lines.hpp"
#include "postgres_check.hpp"

namespace baton::store_check_detail {
namespace {

namespace asio = boost::asio;
using postgres_detail::query_result;

std::string cell(const query_result& r, std::size_t column) {
  if (r.rows.empty() || r.rows[0].size() <= column || !r.rows[0][column]) return {};
  return *r.rows[0][column];
}

}  // namespace

void async_check_postgres(asio::io_context& io, const config& cfg,
                          std::function<void(check_report)> done) {
  postgres_detail::connection_options o;
  o.conninfo = cfg.postgres.url;
  o.password = cfg.postgres.password;
  o.application_name = "baton check-store";
  o.connect_timeout = cfg.postgres.connect_timeout;
  o.command_timeout = cfg.postgres.command_timeout;
  o.setup_sql = "SET synchronous_commit = on";
  auto conn = postgres_detail::connection::create(io, o);
  const std::string table = cfg.postgres.table;
  const auto sent = std::chrono::steady_clock::now();
  const std::string sql =
      "SELECT current_setting('server_version'), pg_is_in_recovery(), current_user, "
      "current_setting('synchronous_commit'), to_regclass($1) IS NOT NULL, "
      "CASE WHEN to_regclass($1) IS NULL THEN NULL ELSE has_table_privilege(to_regclass($1), "
      "'SELECT, INSERT, UPDATE') END, "
      "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint";
  conn->async_query(sql, {table}, [conn, done = std::move(done), sent, table,
                                   ttl = cfg.lease.ttl, create = cfg.postgres.create_schema,
                                   timeout = cfg.postgres.command_timeout](query_result r) {
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
        add(check_verdict::note, "table",
            table + " does not exist yet: baton creates it on first use (postgres.create_schema)");
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
