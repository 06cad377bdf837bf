// The look's statement and rows, and the candidate card's column: in the
// DDL (with the ALTER that upgrades a registry made before it), in the
// schema check, in every registration and in the listing.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "postgres/lease_answers.hpp"
#include "postgres/lease_sql.hpp"
#include "postgres/postgres_error.hpp"

namespace baton::postgres_detail {
namespace {

using look_cell = std::optional<std::string>;

TEST(look_rows, none_is_nobody_and_one_names_the_holder) {
  EXPECT_EQ(parse_look_rows({}).holder.node, "");
  EXPECT_FALSE(parse_look_rows({}).error);
  const auto p = parse_look_rows({{look_cell("node-a"), look_cell("42")}});
  ASSERT_FALSE(p.error) << p.error.message();
  EXPECT_EQ(p.holder.node, "node-a");
  EXPECT_EQ(p.holder.token, 42u);
  for (const result_rows& bad :
       {result_rows{{look_cell("node-a")}}, result_rows{{look_cell(), look_cell("1")}},
        result_rows{{look_cell(""), look_cell("1")}}, result_rows{{look_cell("a"), look_cell("x")}},
        result_rows{{look_cell("a"), look_cell("-1")}},
        result_rows{{look_cell("a"), look_cell("1")}, {look_cell("b"), look_cell("2")}}}) {
    const auto e = parse_look_rows(bad);
    EXPECT_EQ(e.error.code, postgres_errc::unexpected_reply);
    EXPECT_EQ(e.holder.node, "");
  }
}

TEST(look_sql, registers_with_the_registry_and_reads_a_lasting_lease) {
  const lease_sql sql("ops.leases");
  const auto with = sql.look(true);
  EXPECT_NE(with.find("INSERT INTO \"ops\".\"leases_candidates\""), std::string::npos) << with;
  EXPECT_NE(with.find("$5::integer"), std::string::npos) << with;
  EXPECT_NE(with.find("$6::text"), std::string::npos) << with;
  EXPECT_NE(with.find("l.expires_at > s.now"), std::string::npos) << with;
  const auto without = sql.look(false);
  EXPECT_EQ(without.find("INSERT"), std::string::npos) << without;
  EXPECT_EQ(without.find("$2"), std::string::npos) << "one parameter: " << without;
}

TEST(look_sql, the_card_column_is_made_checked_written_and_listed) {
  const lease_sql sql("leases");
  const auto ddl = sql.ddl();
  EXPECT_NE(ddl.find("card text NOT NULL DEFAULT ''"), std::string::npos) << ddl;
  EXPECT_NE(ddl.find("ALTER TABLE \"leases_candidates\" ADD COLUMN IF NOT EXISTS card text NOT "
                     "NULL DEFAULT ''"),
            std::string::npos)
      << ddl;
  EXPECT_NE(sql.schema_exists().find("'old'"), std::string::npos);
  EXPECT_NE(sql.acquire(true).find("$10::text"), std::string::npos);
  EXPECT_NE(sql.renew(true).find("$7::text"), std::string::npos);
  EXPECT_NE(sql.candidates().find("c.card"), std::string::npos);
  EXPECT_EQ(sql.acquire(false).find("$10"), std::string::npos);
}

}  // namespace
}  // namespace baton::postgres_detail
