// The candidates' table made before the candidate card (no column card):
// with postgres.create_schema baton adds the column on first use; without,
// the lease works and the candidates' answer, like `baton check-store`,
// names the fix. Against a real PostgreSQL.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "baton/config.hpp"
#include "postgres/lease_sql.hpp"
#include "postgres/postgres_check.hpp"
#include "postgres/postgres_error.hpp"
#include "postgres/postgres_settings.hpp"
#include "postgres/postgres_store.hpp"
#include "support/servers/postgres_server.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

struct card_column : ::testing::Test {
  testing::postgres_server pg;
  boost::asio::io_context io;

  std::unique_ptr<postgres_store> card_store(bool create_schema) {
    postgres_store_options o;
    o.conninfo = pg.conninfo("postgres");
    o.create_schema = create_schema;
    o.identity = {"e", "n1", 3000ms};
    o.identity.card = "standing=eligible;advertise=db-1:5432";
    o.connect_timeout = 2000ms;
    o.command_timeout = 500ms;
    o.registry_recheck = 0ms;
    return std::make_unique<postgres_store>(io, std::move(o));
  }

  template <typename T>
  std::optional<T> card_wait(std::optional<T>& slot) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!slot && std::chrono::steady_clock::now() < deadline) {
      if (io.stopped()) io.restart();
      io.run_one_for(50ms);
    }
    return slot;
  }

  store_error card_acquire(lease_store& s) {
    std::optional<store_error> out;
    s.async_acquire([&](store_error e, acquire_answer) { out = std::move(e); });
    return card_wait(out).value_or(
        store_error{std::make_error_code(std::errc::timed_out), "no answer within 10 s"});
  }

  std::pair<store_error, std::vector<candidate_info>> card_candidates(lease_store& s) {
    std::optional<std::pair<store_error, std::vector<candidate_info>>> out;
    s.async_candidates([&](store_error e, std::vector<candidate_info> l) {
      out.emplace(std::move(e), std::move(l));
    });
    return card_wait(out).value_or(std::pair<store_error, std::vector<candidate_info>>{
        store_error{std::make_error_code(std::errc::timed_out), "no answer within 10 s"}, {}});
  }

  std::string card_check_line() {
    config cfg;
    cfg.election = "e";
    postgres_settings_of(cfg).url = pg.conninfo("postgres");
    postgres_settings_of(cfg).command_timeout = 1000ms;
    postgres_settings_of(cfg).create_schema = false;
    std::optional<check_report> report;
    store_check_detail::async_check_postgres(io, cfg,
                                             [&](check_report r) { report = std::move(r); });
    card_wait(report);
    if (!report) return "no report";
    for (const auto& line : report->lines) {
      if (line.topic == "candidates") return std::string(to_string(line.verdict)) + " " + line.text;
    }
    return "no candidates line";
  }

  // The schema as a version before the card made it.
  void tables_from_before_the_card() {
    pg.query(postgres_detail::lease_sql("baton_lease").ddl());
    pg.query("ALTER TABLE baton_lease_candidates DROP COLUMN card");
  }
};

TEST_F(card_column, without_create_schema_the_lease_works_and_the_fix_is_named) {
  tables_from_before_the_card();
  auto s = card_store(false);
  ASSERT_FALSE(card_acquire(*s)) << "the lease works without the column";
  auto [e, list] = card_candidates(*s);
  EXPECT_EQ(e.code, postgres_errc::missing_schema);
  EXPECT_NE(e.detail.find("was made by a version before the candidate card (it lacks the column "
                          "card) and postgres.create_schema is off: apply the output of `baton "
                          "init-store --print` (it adds the column)"),
            std::string::npos)
      << e.detail;
  EXPECT_EQ(card_check_line(),
            "note baton_lease_candidates was made before the candidate card (it lacks the column "
            "card): postgres.create_schema is false: leases work, but a switchover lists no "
            "candidates (apply `baton init-store --print`)");
  // What init-store --print gives adds it; the next look for the registry
  // finds it.
  pg.query(postgres_detail::lease_sql("baton_lease").ddl());
  EXPECT_EQ(card_check_line(), "ok SELECT, INSERT, UPDATE and DELETE on baton_lease_candidates");
  auto [e2, none] = card_candidates(*s);
  EXPECT_FALSE(e2) << e2.message();
}

TEST_F(card_column, with_create_schema_the_column_is_added_on_first_use) {
  tables_from_before_the_card();
  auto s = card_store(true);
  ASSERT_FALSE(card_acquire(*s));
  auto [e, list] = card_candidates(*s);
  ASSERT_FALSE(e) << e.message();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].card, "standing=eligible;advertise=db-1:5432");
}

}  // namespace
}  // namespace baton
