// The statements' text: names are validated and quoted, and the DDL a DBA is
// given names what the statements use.
#include "postgres/lease_sql.hpp"
#include "baton/postgres_conninfo.hpp"

#include <gtest/gtest.h>

namespace baton::postgres_detail {
namespace {

TEST(postgres_table_name, plain_and_schema_qualified_names_pass) {
  for (const char* good : {"baton_lease", "ops.baton_lease", "_x", "A1.b2"}) {
    EXPECT_FALSE(postgres_table_problem(good)) << good;
  }
}

TEST(postgres_table_name, anything_that_would_need_quoting_is_refused) {
  for (const std::string bad : {std::string(), std::string("a.b.c"), std::string("1x"),
                                std::string("x-y"), std::string("a."), std::string(".a"),
                                std::string("x\"y"), std::string("x y"), std::string(64, 'a')}) {
    EXPECT_TRUE(postgres_table_problem(bad)) << bad;
  }
  EXPECT_FALSE(postgres_table_problem(std::string(63, 'a')));
}

TEST(postgres_lease_sql, names_are_quoted_and_the_sequence_follows_the_table) {
  const lease_sql sql("ops.leases");
  EXPECT_EQ(sql.table(), "ops.leases");
  EXPECT_EQ(sql.sequence(), "ops.leases_token");
  EXPECT_NE(sql.ddl().find("CREATE TABLE IF NOT EXISTS \"ops\".\"leases\""), std::string::npos);
  EXPECT_NE(sql.ddl().find("CREATE SEQUENCE IF NOT EXISTS \"ops\".\"leases_token\""),
            std::string::npos);
  EXPECT_EQ(sql.candidates_table(), "ops.leases_candidates");
  EXPECT_NE(sql.ddl().find("CREATE TABLE IF NOT EXISTS \"ops\".\"leases_candidates\""),
            std::string::npos);
  EXPECT_NE(sql.registry_ddl().find("CREATE TABLE IF NOT EXISTS \"ops\".\"leases_candidates\""),
            std::string::npos);
  for (const bool registry : {false, true}) {
    EXPECT_NE(sql.acquire(registry).find("nextval('\"ops\".\"leases_token\"')"), std::string::npos);
  }
  EXPECT_EQ(sql.listen(), "LISTEN \"ops.leases\"");
}

TEST(postgres_lease_sql, the_printed_ddl_grants_what_the_statements_need) {
  const auto text = lease_sql("baton_lease").ddl_for_people();
  EXPECT_NE(text.find("GRANT SELECT, INSERT, UPDATE ON \"baton_lease\" TO baton;"),
            std::string::npos);
  EXPECT_NE(text.find("GRANT USAGE ON SEQUENCE \"baton_lease_token\" TO baton;"),
            std::string::npos);
  // The registry's rows lapse and are deleted; only there.
  EXPECT_NE(text.find("GRANT SELECT, INSERT, UPDATE, DELETE ON \"baton_lease_candidates\" TO "
                      "baton;"),
            std::string::npos);
  EXPECT_EQ(text.find("SCHEMA"), std::string::npos) << "public needs no schema lines";
  const auto qualified = lease_sql("ops.leases").ddl_for_people();
  EXPECT_NE(qualified.find("CREATE SCHEMA IF NOT EXISTS \"ops\";"), std::string::npos);
  EXPECT_NE(qualified.find("GRANT USAGE ON SCHEMA \"ops\" TO baton;"), std::string::npos);
  // Never DELETE from the lease table: its rows are created once and kept.
  EXPECT_EQ(text.find("DELETE ON \"baton_lease\""), std::string::npos);
  const lease_sql sql("baton_lease");
  for (const bool registry : {false, true}) {
    for (const auto& statement : {sql.acquire(registry), sql.renew(registry)}) {
      EXPECT_EQ(statement.find("DELETE FROM \"baton_lease\" "), std::string::npos);
    }
  }
  EXPECT_EQ(sql.acquire(false).find("DELETE"), std::string::npos);
  EXPECT_EQ(sql.renew(false).find("DELETE"), std::string::npos);
}

// PostgreSQL cuts names at 63 bytes: for a table name of 62 the registry's
// name would be the sequence's, so there is none (and no DDL or grant).
TEST(postgres_lease_sql, a_registry_name_cut_onto_the_sequence_is_no_registry) {
  EXPECT_TRUE(lease_sql(std::string(61, 't')).has_registry());
  EXPECT_TRUE(lease_sql("ops." + std::string(61, 't')).has_registry());
  for (const auto& name : {std::string(62, 't'), "ops." + std::string(62, 't')}) {
    const lease_sql sql(name);
    EXPECT_FALSE(sql.has_registry()) << name;
    EXPECT_EQ(sql.registry_ddl(), "");
    EXPECT_EQ(sql.ddl().find("_candidates"), std::string::npos);
    EXPECT_EQ(sql.ddl_for_people().find("_candidates"), std::string::npos);
  }
}

TEST(postgres_lease_sql, only_statements_with_the_registry_name_it) {
  const lease_sql sql("baton_lease");
  EXPECT_EQ(sql.acquire(false).find("baton_lease_candidates"), std::string::npos);
  EXPECT_EQ(sql.renew(false).find("baton_lease_candidates"), std::string::npos);
  // $9 is the priority and $10 the card with the registry only; the last
  // parameter (the server time this node can expect) is $9 without it, $11
  // with it.
  EXPECT_EQ(sql.acquire(false).find("$9::integer"), std::string::npos);
  EXPECT_NE(sql.acquire(false).find(" <= $9::bigint)"), std::string::npos);
  EXPECT_NE(sql.acquire(true).find(" <= $11::bigint)"), std::string::npos);
  EXPECT_EQ(sql.renew(false).find("$6"), std::string::npos);
  EXPECT_NE(sql.acquire(true).find("INSERT INTO \"baton_lease_candidates\""), std::string::npos);
  EXPECT_NE(sql.renew(true).find("INSERT INTO \"baton_lease_candidates\""), std::string::npos);
  EXPECT_NE(sql.acquire(true).find("$9::integer"), std::string::npos);
  EXPECT_NE(sql.renew(true).find("$6"), std::string::npos);
  // Pruning skips what another statement is writing rather than waiting.
  EXPECT_NE(sql.renew(true).find("SKIP LOCKED"), std::string::npos);
}

// A row that lapsed unreleased, or whose hold-back ended, is taken only on a
// clock this node vouches for (clock_watch.hpp); a released one, whose
// session release and hand-over clear, and a never-held one at once, unless
// held back since.
TEST(postgres_lease_sql, a_lapsed_row_is_taken_only_on_a_clock_the_node_vouches_for) {
  const lease_sql sql("baton_lease");
  const auto acquire = sql.acquire(true);
  EXPECT_NE(acquire.find("((l.expires_at <= s.now AND ((l.held_back_until <= l.expires_at AND "
                         "(l.expires_at = '-infinity' OR l.holder_session = '')) OR "
                         "(extract(epoch FROM s.now) * 1000000)::bigint <= $11::bigint)) OR"),
            std::string::npos);
  EXPECT_NE(sql.release().find("holder_session = ''"), std::string::npos);
  EXPECT_NE(sql.hand_over().find("holder_session = ''"), std::string::npos);
  // Its answer ends with the server time the statement read.
  EXPECT_NE(acquire.find("(SELECT (extract(epoch FROM now) * 1000000)::bigint FROM s), "
                         "a.left_for_the_clock\nFROM answer a"),
            std::string::npos);
}

// Daemons from before switchovers share the channel: a hand-over's
// announcement is a release's, word for word.
TEST(postgres_lease_sql, a_hand_over_is_announced_as_a_release_is) {
  const lease_sql sql("baton_lease");
  const auto announcement = [](const std::string& text) {
    return text.substr(text.find("SELECT f.token"));
  };
  EXPECT_EQ(announcement(sql.hand_over()), announcement(sql.release()));
  EXPECT_NE(sql.hand_over().find("'reserved for ' || $6 || ' by ' || $2"), std::string::npos);
}

TEST(postgres_lease_sql, every_statement_reads_the_servers_clock_not_a_parameter) {
  const lease_sql sql("baton_lease");
  for (const auto& text : {sql.acquire(false), sql.acquire(true), sql.renew(false), sql.renew(true),
                           sql.release(), sql.hand_over(), sql.candidates(), sql.cooldown(),
                           sql.create_record()}) {
    EXPECT_NE(text.find("clock_timestamp()"), std::string::npos) << text;
  }
}


// Without lease.failsafe peers the statements run on tables without its
// column; with it, the decisions and the record's writes are inside the
// statements that take, renew, resume and free the row.
TEST(postgres_lease_sql, only_the_failsafe_statements_name_its_column) {
  const lease_sql sql("baton_lease");
  for (bool registry : {false, true}) {
    EXPECT_EQ(sql.acquire(registry).find("failsafe"), std::string::npos);
    EXPECT_EQ(sql.renew(registry).find("failsafe"), std::string::npos);
    EXPECT_NE(sql.acquire(registry, true).find("(token, failsafe) = (SELECT"), std::string::npos);
    EXPECT_NE(sql.renew(registry, true).find("failsafe = CASE"), std::string::npos);
    EXPECT_NE(sql.resume(registry).find("UPDATE \"baton_lease\""), std::string::npos);
  }
  EXPECT_EQ(sql.release().find("failsafe"), std::string::npos);
  EXPECT_EQ(sql.hand_over().find("failsafe"), std::string::npos);
  EXPECT_EQ(sql.candidates().find("failsafe"), std::string::npos);
  EXPECT_NE(sql.release(true).find("failsafe = NULL"), std::string::npos);
  EXPECT_NE(sql.hand_over(true).find("failsafe = NULL"), std::string::npos);
  EXPECT_NE(sql.ddl().find("ADD COLUMN IF NOT EXISTS failsafe jsonb"), std::string::npos);
  EXPECT_NE(sql.failsafe_ddl().find("ALTER TABLE IF EXISTS \"baton_lease_candidates\""),
            std::string::npos);
}

}  // namespace
}  // namespace baton::postgres_detail
