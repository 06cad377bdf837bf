// postgres_store against a real PostgreSQL, for what the contract suite does
// not cover: the schema (created, missing and not allowed, not creatable),
// a least-privilege role with exactly the documented grants, a locked table
// (statements fail as timeouts within the command timeout), and the error
// lines an operator reads.
#include "postgres/postgres_store.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>
#include <tuple>

#include "postgres/lease_sql.hpp"
#include "support/postgres_server.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::postgres_server;

struct fixture : ::testing::Test {
  postgres_server pg;
  boost::asio::io_context io;

  std::unique_ptr<postgres_store> store(const std::string& user, bool create_schema,
                                        const std::string& node = "n1") {
    postgres_store_options o;
    o.conninfo = pg.conninfo(user);
    o.create_schema = create_schema;
    o.identity = {"e", node, milliseconds(3000)};
    o.connect_timeout = 2000ms;
    o.command_timeout = 500ms;
    return std::make_unique<postgres_store>(io, std::move(o));
  }

  // Runs the io_context until `done` is set, at most 10 s.
  template <typename T>
  std::optional<T> wait(std::optional<T>& slot) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!slot && std::chrono::steady_clock::now() < deadline) {
      // An io_context that ran out of work stops until restarted.
      if (io.stopped()) io.restart();
      io.run_one_for(50ms);
    }
    return slot;
  }

  std::pair<store_error, acquire_answer> acquire(lease_store& s) {
    std::optional<std::pair<store_error, acquire_answer>> out;
    s.async_acquire([&](store_error e, acquire_answer a) { out.emplace(std::move(e), std::move(a)); });
    auto r = wait(out);
    EXPECT_TRUE(r) << "no answer within 10 s";
    return r.value_or(std::pair<store_error, acquire_answer>{});
  }

  std::pair<store_error, record_answer> create_record(lease_store& s) {
    std::optional<std::pair<store_error, record_answer>> out;
    s.async_create_record([&](store_error e, record_answer a) { out.emplace(std::move(e), a); });
    auto r = wait(out);
    EXPECT_TRUE(r) << "no answer within 10 s";
    return r.value_or(std::pair<store_error, record_answer>{});
  }
};

TEST_F(fixture, the_table_is_created_on_first_use_and_a_new_election_is_held_back_once) {
  auto s = store("postgres", true);
  auto [e, a] = acquire(*s);
  ASSERT_FALSE(e) << e.message();
  EXPECT_EQ(a.outcome, acquire_outcome::held_back);
  EXPECT_GT(a.remaining, 0ms);
  EXPECT_NE(s->status().last_reset.find("missing"), std::string::npos) << s->status().last_reset;
  EXPECT_EQ(pg.query("SELECT count(*) FROM baton_lease")[0][0], "1");
}

TEST_F(fixture, a_missing_table_that_may_not_be_created_names_init_store_print) {
  auto s = store("postgres", false);
  auto [e, a] = acquire(*s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code, postgres_errc::missing_schema);
  EXPECT_NE(e.detail.find("baton init-store --print"), std::string::npos) << e.detail;
  EXPECT_NE(e.detail.find("postgres.create_schema is off"), std::string::npos) << e.detail;
}

TEST_F(fixture, a_role_that_cannot_create_the_table_gets_one_line_naming_the_cause) {
  pg.query("CREATE ROLE weak LOGIN");
  auto s = store("weak", true);
  auto [e, a] = acquire(*s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code, postgres_errc::permission_denied);
  EXPECT_EQ(e.code, store_errc::refused);
  EXPECT_NE(e.detail.find("cannot create lease table baton_lease"), std::string::npos) << e.detail;
  EXPECT_NE(e.detail.find("permission denied for schema public"), std::string::npos) << e.detail;
  EXPECT_EQ(e.detail.find('\n'), std::string::npos) << e.detail;
}

TEST_F(fixture, a_role_with_exactly_the_documented_grants_runs_every_statement) {
  // What `baton init-store --print` gives a DBA, with the role it names.
  pg.query(postgres_detail::lease_sql("baton_lease").ddl());
  pg.query("CREATE ROLE baton LOGIN");
  const auto text = postgres_detail::lease_sql("baton_lease").ddl_for_people();
  pg.query(text.substr(text.find("GRANT")));
  auto s = store("baton", false);
  auto [ce, created] = create_record(*s);
  ASSERT_FALSE(ce) << ce.message();
  EXPECT_EQ(created, record_answer::created);
  auto [e, a] = acquire(*s);
  ASSERT_FALSE(e) << e.message();
  ASSERT_TRUE(a.acquired());
  std::optional<std::pair<store_error, renew_answer>> renewed;
  s->async_renew([&](store_error er, renew_answer r) { renewed.emplace(std::move(er), r); });
  ASSERT_TRUE(wait(renewed));
  EXPECT_FALSE(renewed->first) << renewed->first.message();
  EXPECT_EQ(renewed->second, renew_answer::renewed);
  std::optional<std::pair<store_error, release_answer>> released;
  s->async_release([&](store_error er, release_answer r) { released.emplace(std::move(er), r); });
  ASSERT_TRUE(wait(released));
  EXPECT_FALSE(released->first) << released->first.message();
  EXPECT_EQ(released->second, release_answer::released);

  // Take one grant away: the error names what was refused.
  pg.query("REVOKE USAGE ON SEQUENCE baton_lease_token FROM baton");
  auto [e2, a2] = acquire(*s);
  ASSERT_TRUE(e2);
  EXPECT_EQ(e2.code, postgres_errc::permission_denied);
  EXPECT_NE(e2.detail.find("baton_lease_token"), std::string::npos) << e2.detail;
}

TEST_F(fixture, a_locked_table_fails_statements_as_timeouts_within_the_command_timeout) {
  auto s = store("postgres", true);
  ASSERT_FALSE(create_record(*s).first);
  auto lock = pg.lock_table("baton_lease");
  const auto sent = std::chrono::steady_clock::now();
  auto [e, a] = acquire(*s);
  const auto took = std::chrono::steady_clock::now() - sent;
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code, store_errc::timeout) << e.message();
  EXPECT_LT(took, 3s) << "500 ms command timeout, generous bound";
  lock.reset();
  auto [e2, a2] = acquire(*s);
  EXPECT_FALSE(e2) << e2.message() << " / first: " << e.message();
  EXPECT_TRUE(a2.acquired());
}

TEST_F(fixture, tokens_stay_above_a_row_that_went_back_across_a_server_change) {
  auto s = store("postgres", true);
  ASSERT_FALSE(create_record(*s).first);
  auto [e, first] = acquire(*s);
  ASSERT_TRUE(first.acquired()) << e.message();
  // A restore: another server epoch, and the row as it was long ago.
  pg.restart_immediate();
  pg.query("UPDATE baton_lease SET token = 5, expires_at = '-infinity'");
  // The first call may meet the connection the restart broke.
  auto [e2, held] = acquire(*s);
  if (e2.code == store_errc::unavailable) std::tie(e2, held) = acquire(*s);
  ASSERT_FALSE(e2) << e2.message();
  EXPECT_EQ(held.outcome, acquire_outcome::held_back);
  EXPECT_GT(held.token, first.token) << "the counter was not lifted to the server's clock";
}

}  // namespace
}  // namespace baton
