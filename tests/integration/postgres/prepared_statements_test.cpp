// A session that prepares its statements, against a real server: the answers
// are those of the plain protocol, each statement is prepared once per
// session, and a session whose prepared statements are gone on the server
// (what a pooler in transaction mode does to it) runs them plainly from
// then on instead of failing. A statement prepared ahead (the release, once
// per term) is prepared while the session idles and run in one step later.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "postgres/pg_connection.hpp"
#include "postgres/postgres_error.hpp"
#include "support/servers/postgres_server.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;
using postgres_detail::connection;
using postgres_detail::query_result;
using testing::postgres_server;

struct prepared_statements : ::testing::Test {
  postgres_server pg;
  boost::asio::io_context io;
  std::shared_ptr<connection> session;

  void SetUp() override {
    postgres_detail::connection_options o;
    o.conninfo = pg.conninfo();
    o.connect_timeout = 5000ms;
    o.command_timeout = 5000ms;
    o.prepare_statements = true;
    session = connection::create(io, o);
  }
  void TearDown() override { session->close(); }

  query_result run(const std::string& sql, std::vector<std::string> params = {}) {
    std::optional<query_result> out;
    session->async_query(sql, std::move(params), [&](query_result r) { out = std::move(r); });
    const auto deadline = std::chrono::steady_clock::now() + 15s;
    while (!out && std::chrono::steady_clock::now() < deadline) {
      if (io.stopped()) io.restart();
      io.run_one_for(50ms);
    }
    EXPECT_TRUE(out.has_value()) << "no answer to " << sql << " within 15 s";
    return out.value_or(query_result{});
  }

  std::string value(const query_result& r) {
    EXPECT_FALSE(r.ec) << r.detail;
    if (r.rows.size() != 1 || r.rows[0].size() != 1 || !r.rows[0][0]) return "(no single value)";
    return *r.rows[0][0];
  }

  // How many statements the server holds prepared for this session.
  std::string prepared_count() { return value(run("SELECT count(*) FROM pg_prepared_statements")); }
};

TEST_F(prepared_statements, each_statement_is_prepared_once_and_answers_as_plain) {
  const std::string add = "SELECT $1::int + $2::int";
  EXPECT_EQ(value(run(add, {"1", "2"})), "3");
  EXPECT_EQ(value(run(add, {"40", "2"})), "42");
  EXPECT_EQ(value(run("SELECT upper($1)", {"baton"})), "BATON");
  EXPECT_EQ(prepared_count(), "2");
}

TEST_F(prepared_statements, statements_gone_from_the_server_are_run_plainly_from_then_on) {
  const std::string add = "SELECT $1::int + $2::int";
  EXPECT_EQ(value(run(add, {"1", "2"})), "3");
  // What a session moved by a pooler in transaction mode finds: a server
  // session that never prepared it.
  EXPECT_FALSE(run("DEALLOCATE ALL").ec);
  EXPECT_EQ(value(run(add, {"2", "2"})), "4");
  EXPECT_EQ(value(run("SELECT upper($1)", {"baton"})), "BATON");
  EXPECT_EQ(prepared_count(), "0") << "the session went on preparing";
}

TEST_F(prepared_statements, a_statement_the_server_cannot_prepare_fails_as_it_would_plainly) {
  const auto r = run("SELECT $1::int + no_such_column", {"1"});
  EXPECT_TRUE(r.ec);
  EXPECT_NE(r.detail.find("no_such_column"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("42703"), std::string::npos) << r.detail;
  // The session goes on, and goes on preparing.
  EXPECT_EQ(value(run("SELECT $1::int * 2", {"21"})), "42");
  EXPECT_EQ(prepared_count(), "1");
}

TEST_F(prepared_statements, a_new_session_prepares_again) {
  const std::string add = "SELECT $1::int + $2::int";
  EXPECT_EQ(value(run(add, {"1", "2"})), "3");
  const auto pid = value(run("SELECT pg_backend_pid()"));
  // The server ends the session: the next statement runs on a new one,
  // where nothing is prepared yet.
  std::optional<query_result> killed;
  auto other = connection::create(io, {.conninfo = pg.conninfo()});
  other->async_query("SELECT pg_terminate_backend(" + pid + ")", {},
                     [&](query_result r) { killed = std::move(r); });
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  while (!killed && std::chrono::steady_clock::now() < deadline) {
    if (io.stopped()) io.restart();
    io.run_one_for(50ms);
  }
  ASSERT_TRUE(killed && !killed->ec);
  other->close();
  // The first statement after the kill may fail with the lost session; the
  // one after it runs on a new session.
  auto r = run(add, {"2", "3"});
  if (r.ec) r = run(add, {"2", "3"});
  EXPECT_EQ(value(r), "5");
  EXPECT_NE(value(run("SELECT pg_backend_pid()")), pid);
  EXPECT_EQ(prepared_count(), "1");
}

TEST_F(prepared_statements, a_statement_prepared_ahead_is_ready_before_its_first_run) {
  const std::string add = "SELECT $1::int + $2::int";
  EXPECT_EQ(value(run("SELECT $1::int", {"1"})), "1");
  session->prepare_ahead(add);
  // Plain statements queue behind the prepare step: by this answer the
  // server holds it, before it ever ran.
  EXPECT_EQ(
      value(run("SELECT count(*) FROM pg_prepared_statements WHERE statement = '" + add + "'")),
      "1");
  EXPECT_EQ(value(run(add, {"40", "2"})), "42");
  EXPECT_EQ(prepared_count(), "2") << "prepared again at its first run";
  // Already prepared: nothing more.
  session->prepare_ahead(add);
  EXPECT_EQ(prepared_count(), "2");
}

TEST_F(prepared_statements, preparing_ahead_never_opens_a_session) {
  session->prepare_ahead("SELECT $1::int + $2::int");
  EXPECT_EQ(session->current_state(), connection::state::disconnected);
  EXPECT_EQ(prepared_count(), "0");
}

TEST_F(prepared_statements, a_statement_that_cannot_be_prepared_ahead_fails_at_its_own_run) {
  const std::string bad = "SELECT $1::int + no_such_column";
  EXPECT_EQ(value(run("SELECT $1::int", {"1"})), "1");
  session->prepare_ahead(bad);
  // The failed prepare step answers nobody and leaves the session working.
  EXPECT_EQ(value(run("SELECT $1::int * 2", {"21"})), "42");
  const auto r = run(bad, {"1"});
  EXPECT_TRUE(r.ec);
  EXPECT_NE(r.detail.find("42703"), std::string::npos) << r.detail;
  EXPECT_EQ(prepared_count(), "2");
}

}  // namespace
}  // namespace baton
