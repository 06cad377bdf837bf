// postgres_store against a real PostgreSQL, for what the contract suite does
// not cover: the schema (created, missing and not allowed, not creatable),
// a least-privilege role with exactly the documented grants, a locked table
// (statements fail as timeouts within the command timeout), the error lines
// an operator reads, and restarts told apart from data gone back; and the
// switchover's parts: the candidates' table where a lease table predates it
// or the role may not have it, pruning, and a reservation across a restart.
#include "postgres/postgres_store.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <thread>
#include <tuple>

#include "postgres/lease_sql.hpp"
#include "postgres/postgres_check.hpp"
#include "postgres/postgres_settings.hpp"
#include "support/servers/postgres_server.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::postgres_server;

struct fixture : ::testing::Test {
  postgres_server pg;
  boost::asio::io_context io;

  std::unique_ptr<postgres_store> store(const std::string& user, bool create_schema,
                                        const std::string& node = "n1",
                                        milliseconds ttl = milliseconds(3000)) {
    postgres_store_options o;
    o.conninfo = pg.conninfo(user);
    o.create_schema = create_schema;
    o.identity = {"e", node, ttl};
    o.connect_timeout = 2000ms;
    o.command_timeout = 500ms;
    // A DBA's grant is seen at the next call (a daemon: within a minute).
    o.registry_recheck = 0ms;
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

  std::pair<store_error, renew_answer> renew(lease_store& s) {
    std::optional<std::pair<store_error, renew_answer>> out;
    s.async_renew([&](store_error e, renew_answer a) { out.emplace(std::move(e), a); });
    auto r = wait(out);
    EXPECT_TRUE(r) << "no answer within 10 s";
    return r.value_or(std::pair<store_error, renew_answer>{});
  }

  // The first call after a restart may meet the connection it broke: one
  // more try, as the daemon's next attempt would make.
  std::pair<store_error, acquire_answer> acquire_after_restart(lease_store& s) {
    auto r = acquire(s);
    if (r.first.code == store_errc::unavailable) r = acquire(s);
    return r;
  }
  std::pair<store_error, renew_answer> renew_after_restart(lease_store& s) {
    auto r = renew(s);
    if (r.first.code == store_errc::unavailable) r = renew(s);
    return r;
  }

  // Every store_events::reset `s` reports, from now on.
  std::shared_ptr<std::vector<std::string>> resets_of(lease_store& s) {
    auto seen = std::make_shared<std::vector<std::string>>();
    s.watch([seen](const store_event& e) {
      if (const auto* r = std::get_if<store_events::reset>(&e)) seen->push_back(r->why);
    });
    return seen;
  }

  std::pair<store_error, release_answer> hand_over(lease_store& s, const std::string& to,
                                                   milliseconds window) {
    std::optional<std::pair<store_error, release_answer>> out;
    s.async_hand_over(to, window,
                      [&](store_error e, release_answer a) { out.emplace(std::move(e), a); });
    auto r = wait(out);
    EXPECT_TRUE(r) << "no answer within 10 s";
    return r.value_or(std::pair<store_error, release_answer>{});
  }

  std::pair<store_error, std::vector<candidate_info>> candidates(lease_store& s) {
    std::optional<std::pair<store_error, std::vector<candidate_info>>> out;
    s.async_candidates([&](store_error e, std::vector<candidate_info> a) {
      out.emplace(std::move(e), std::move(a));
    });
    auto r = wait(out);
    EXPECT_TRUE(r) << "no answer within 10 s";
    return r.value_or(std::pair<store_error, std::vector<candidate_info>>{});
  }

  // The lease table and sequence as baton made them before the candidates'
  // table, with the grants documented then, for the role `baton`.
  void lease_table_from_before_the_registry() {
    const postgres_detail::lease_sql sql("baton_lease");
    const auto ddl = sql.ddl();
    pg.query(ddl.substr(0, ddl.find(sql.registry_ddl())));
    pg.query("CREATE ROLE baton LOGIN");
    pg.query("GRANT SELECT, INSERT, UPDATE ON baton_lease TO baton");
    pg.query("GRANT USAGE ON SEQUENCE baton_lease_token TO baton");
  }

  // `baton check-store`'s line about the candidates' table, as `user`
  // ("" = none).
  std::string check_line_of_candidates(const std::string& user) {
    config cfg;
    cfg.election = "e";
    postgres_settings_of(cfg).url = pg.conninfo(user);
    postgres_settings_of(cfg).command_timeout = 1000ms;
    std::optional<check_report> report;
    store_check_detail::async_check_postgres(io, cfg,
                                             [&](check_report r) { report = std::move(r); });
    EXPECT_TRUE(wait(report)) << "no report within 10 s";
    if (!report) return {};
    for (const auto& line : report->lines) {
      if (line.topic == "candidates") return std::string(to_string(line.verdict)) + " " + line.text;
    }
    return {};
  }

  bool registry_exists() {
    return pg.query("SELECT to_regclass('baton_lease_candidates') IS NOT NULL")[0][0] == "t";
  }

  // `node` as `s` lists it, until `pred` holds of it (register_cooldown
  // answers nothing: looked for, bounded in count and time).
  std::optional<candidate_info> listed_until(lease_store& s, const std::string& node,
                                             const std::function<bool(const candidate_info&)>& pred) {
    std::optional<candidate_info> last;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    for (int looks = 0; looks < 100 && std::chrono::steady_clock::now() < deadline; ++looks) {
      last.reset();
      for (const auto& c : candidates(s).second)
        if (c.node == node) last = c;
      if (last && pred(*last)) return last;
      std::this_thread::sleep_for(50ms);
    }
    return last;
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
  // The cool-down needs no grant beyond the registration's.
  s->register_cooldown(20000ms);
  const auto cooling = listed_until(*s, "n1", [](const candidate_info& c) {
    return c.cooling_down_for > 0ms;
  });
  ASSERT_TRUE(cooling) << "n1 is not listed";
  EXPECT_GT(cooling->cooling_down_for, 10000ms) << "the cool-down was never listed";

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
  auto resets = resets_of(*s);
  ASSERT_FALSE(create_record(*s).first);
  auto [e, first] = acquire(*s);
  ASSERT_TRUE(first.acquired()) << e.message();
  // A restore: the row as it was long ago.
  pg.restart_immediate();
  pg.query("UPDATE baton_lease SET token = 5, expires_at = '-infinity'");
  auto [e2, held] = acquire_after_restart(*s);
  ASSERT_FALSE(e2) << e2.message();
  EXPECT_EQ(held.outcome, acquire_outcome::held_back);
  EXPECT_GT(held.token, first.token) << "the counter was not lifted to the server's clock";
  ASSERT_EQ(resets->size(), 1u);
  EXPECT_NE(resets->front().find("the lease row's token 5 is below"), std::string::npos)
      << resets->front();
}

// `pg_ctl restart -m immediate`: a crash and its recovery, nothing committed
// lost. The leader renews on with its token, a standby polling meanwhile
// sees the same term, and nobody reports a reset.
TEST_F(fixture, a_restart_with_its_data_intact_keeps_the_term_and_its_token) {
  auto leader = store("postgres", true, "n1");
  auto standby = store("postgres", true, "n2");
  auto leader_resets = resets_of(*leader);
  auto standby_resets = resets_of(*standby);
  ASSERT_FALSE(create_record(*leader).first);
  auto [e, won] = acquire(*leader);
  ASSERT_TRUE(won.acquired()) << e.message();
  auto [e1, before] = acquire(*standby);
  ASSERT_EQ(before.outcome, acquire_outcome::held) << e1.message();

  pg.restart_immediate();
  // The standby's poll reaches the restarted server first: the case that
  // used to lift the token under the leader.
  auto [e2, after] = acquire_after_restart(*standby);
  ASSERT_FALSE(e2) << e2.message();
  EXPECT_EQ(after.outcome, acquire_outcome::held);
  EXPECT_EQ(after.holder, "n1");
  EXPECT_EQ(after.token, won.token);
  auto [e3, renewed] = renew_after_restart(*leader);
  ASSERT_FALSE(e3) << e3.message();
  EXPECT_EQ(renewed, renew_answer::renewed) << "the restart cost the leader its term";
  EXPECT_EQ(pg.query("SELECT token FROM baton_lease")[0][0], std::to_string(won.token));
  // And again, the other way round: the leader's renewal first.
  pg.restart_immediate();
  auto [e4, renewed_first] = renew_after_restart(*leader);
  ASSERT_FALSE(e4) << e4.message();
  EXPECT_EQ(renewed_first, renew_answer::renewed);
  auto [e5, polled] = acquire_after_restart(*standby);
  ASSERT_FALSE(e5) << e5.message();
  EXPECT_EQ(polled.outcome, acquire_outcome::held);
  EXPECT_EQ(polled.token, won.token);
  EXPECT_EQ(renew(*leader).second, renew_answer::renewed);
  EXPECT_TRUE(leader_resets->empty()) << leader_resets->front();
  EXPECT_TRUE(standby_resets->empty()) << standby_resets->front();
}

// A restart finds the lease free: it stays free for one ttl (a term the
// server no longer has, had it come back from a copy nobody saw, may still
// be at work), said as a restart, not as lost data.
TEST_F(fixture, a_restart_while_the_lease_is_free_holds_it_back_one_ttl_as_a_restart) {
  auto s = store("postgres", true, "n1");
  auto resets = resets_of(*s);
  ASSERT_FALSE(create_record(*s).first);
  ASSERT_TRUE(acquire(*s).second.acquired());
  std::optional<std::pair<store_error, release_answer>> released;
  s->async_release([&](store_error er, release_answer r) { released.emplace(std::move(er), r); });
  ASSERT_TRUE(wait(released));
  ASSERT_EQ(released->second, release_answer::released);

  pg.restart_immediate();
  auto [e, held] = acquire_after_restart(*s);
  ASSERT_FALSE(e) << e.message();
  EXPECT_EQ(held.outcome, acquire_outcome::held_back);
  EXPECT_GT(held.remaining, 2000ms);
  EXPECT_NE(held.why.find("PostgreSQL restarted"), std::string::npos) << held.why;
  EXPECT_TRUE(resets->empty()) << resets->front();
}

// A copy of the data directory put back (a restore onto the same cluster:
// same system identifier and timeline). The row's token is the one every
// store saw; only the WAL position tells that renewals were lost. The first
// acquire holds everyone back and lifts the token; the leader's term is gone.
TEST_F(fixture, a_data_directory_put_back_is_data_gone_back) {
  // A ttl longer than the copy takes on a loaded machine: the term must
  // outlive it.
  auto leader = store("postgres", true, "n1", 60s);
  auto standby = store("postgres", true, "n2", 60s);
  auto standby_resets = resets_of(*standby);
  ASSERT_FALSE(create_record(*leader).first);
  auto [e, won] = acquire(*leader);
  ASSERT_TRUE(won.acquired()) << e.message();
  pg.save_data_copy();
  // Renewals the copy will not have, and a poll that sees them.
  for (int i = 0; i < 20; ++i) {
    auto [er, r] = renew_after_restart(*leader);
    ASSERT_EQ(r, renew_answer::renewed) << er.message();
  }
  auto [e1, seen] = acquire_after_restart(*standby);
  ASSERT_EQ(seen.outcome, acquire_outcome::held) << e1.message();
  ASSERT_EQ(seen.token, won.token);

  pg.put_data_copy_back();
  auto [e2, back] = acquire_after_restart(*standby);
  ASSERT_FALSE(e2) << e2.message();
  EXPECT_EQ(back.outcome, acquire_outcome::held_back);
  EXPECT_GT(back.token, won.token);
  ASSERT_EQ(standby_resets->size(), 1u);
  EXPECT_NE(standby_resets->front().find("WAL position"), std::string::npos)
      << standby_resets->front();
  EXPECT_EQ(renew_after_restart(*leader).second, renew_answer::lost);
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

bool lists(const std::vector<candidate_info>& list, const std::string& node) {
  for (const auto& c : list)
    if (c.node == node) return true;
  return false;
}

// An upgrade where baton may create tables: the candidates' table appears
// on first use beside the lease table that was there.
TEST_F(fixture, a_lease_table_from_before_the_registry_gets_it_on_first_use) {
  const postgres_detail::lease_sql sql("baton_lease");
  const auto ddl = sql.ddl();
  pg.query(ddl.substr(0, ddl.find(sql.registry_ddl())));
  ASSERT_FALSE(registry_exists());
  auto s = store("postgres", true);
  ASSERT_FALSE(create_record(*s).first);
  auto [e, a] = acquire(*s);
  ASSERT_FALSE(e) << e.message();
  ASSERT_TRUE(a.acquired());
  EXPECT_TRUE(registry_exists());
  auto [ce, list] = candidates(*s);
  ASSERT_FALSE(ce) << ce.message();
  EXPECT_TRUE(lists(list, "n1"));
}

// An upgrade where baton may not: the role has the grants documented before
// the candidates' table and no CREATE. Every lease call works as before, a
// hand-over too; only the candidates are missing, and the answer says why.
// Once a DBA applies what `init-store --print` gives, they are listed,
// without a restart.
TEST_F(fixture, a_role_with_only_the_grants_from_before_keeps_its_lease_without_candidates) {
  lease_table_from_before_the_registry();
  auto a = store("baton", true, "n1");
  auto b = store("baton", false, "n2");
  ASSERT_FALSE(create_record(*a).first);
  auto [e, won] = acquire(*a);
  ASSERT_FALSE(e) << e.message();
  ASSERT_TRUE(won.acquired());
  EXPECT_EQ(renew(*a).second, renew_answer::renewed);
  auto [eb, held] = acquire(*b);
  ASSERT_FALSE(eb) << eb.message();
  EXPECT_EQ(held.outcome, acquire_outcome::held);
  auto [he, handed] = hand_over(*a, "n2", 5000ms);
  ASSERT_FALSE(he) << he.message();
  EXPECT_EQ(handed, release_answer::released);
  auto [eb2, taken] = acquire(*b);
  ASSERT_FALSE(eb2) << eb2.message();
  EXPECT_TRUE(taken.acquired());
  EXPECT_GT(taken.token, won.token);
  EXPECT_FALSE(registry_exists());

  auto [ca, none_a] = candidates(*a);
  EXPECT_EQ(ca.code, postgres_errc::missing_schema);
  EXPECT_NE(ca.detail.find("cannot create the candidates' table baton_lease_candidates"),
            std::string::npos)
      << ca.detail;
  EXPECT_NE(ca.detail.find("permission denied"), std::string::npos) << ca.detail;
  auto [cb, none_b] = candidates(*b);
  EXPECT_EQ(cb.code, postgres_errc::missing_schema);
  EXPECT_NE(cb.detail.find("postgres.create_schema is off"), std::string::npos) << cb.detail;
  EXPECT_NE(cb.detail.find("baton init-store --print"), std::string::npos) << cb.detail;
  // `baton check-store` says so beforehand, as a note: leases work.
  EXPECT_EQ(check_line_of_candidates("baton"),
            "note baton_lease_candidates does not exist and baton may not create it: leases work, "
            "but a switchover lists no candidates (apply `baton init-store --print`)");

  // The DBA applies the new part and its grant.
  const postgres_detail::lease_sql sql("baton_lease");
  pg.query(sql.registry_ddl());
  const auto text = sql.ddl_for_people();
  const auto grant = text.find("GRANT SELECT, INSERT, UPDATE, DELETE");
  pg.query(text.substr(grant, text.find('\n', grant) - grant));
  EXPECT_EQ(check_line_of_candidates("baton"),
            "ok SELECT, INSERT, UPDATE and DELETE on baton_lease_candidates");
  auto [c2, empty] = candidates(*b);
  ASSERT_FALSE(c2) << c2.message();
  EXPECT_EQ(renew(*b).second, renew_answer::renewed);
  auto [c3, listed] = candidates(*a);
  ASSERT_FALSE(c3) << c3.message();
  EXPECT_TRUE(lists(listed, "n2"));
}

// A leader asks for the candidates with every renewal: without the table it
// answers from memory and looks again only once a minute (by default), so a
// missing table costs the leader no statement per renewal.
TEST_F(fixture, without_the_registry_candidates_are_answered_from_memory_between_checks) {
  lease_table_from_before_the_registry();
  postgres_store_options o;
  o.conninfo = pg.conninfo("baton");
  o.create_schema = false;
  o.identity = {"e", "n1", milliseconds(3000)};
  o.command_timeout = 1000ms;
  auto s = std::make_unique<postgres_store>(io, std::move(o));
  ASSERT_FALSE(create_record(*s).first);
  ASSERT_TRUE(acquire(*s).second.acquired());
  EXPECT_EQ(candidates(*s).first.code, postgres_errc::missing_schema);
  const postgres_detail::lease_sql sql("baton_lease");
  pg.query(sql.registry_ddl());
  pg.query("GRANT SELECT, INSERT, UPDATE, DELETE ON baton_lease_candidates TO baton");
  const auto sent = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(renew(*s).second, renew_answer::renewed);
    auto [e, none] = candidates(*s);
    EXPECT_EQ(e.code, postgres_errc::missing_schema) << "looked again within the minute";
  }
  EXPECT_LT(std::chrono::steady_clock::now() - sent, 60s);
  EXPECT_EQ(pg.query("SELECT count(*) FROM baton_lease_candidates")[0][0], "0");
}

// The registry's privileges taken away at run time: at most one call fails
// on them, then the lease goes on without registering.
TEST_F(fixture, registry_privileges_taken_away_leave_the_lease_working) {
  auto s = store("postgres", true, "n1");
  ASSERT_FALSE(create_record(*s).first);
  pg.query("CREATE ROLE baton LOGIN");
  const auto text = postgres_detail::lease_sql("baton_lease").ddl_for_people();
  pg.query(text.substr(text.find("GRANT")));
  auto b = store("baton", true, "n2");
  ASSERT_TRUE(acquire(*b).second.acquired());
  ASSERT_TRUE(lists(candidates(*b).second, "n2"));

  pg.query("REVOKE ALL ON baton_lease_candidates FROM baton");
  auto r = renew(*b);
  if (r.first) {
    EXPECT_EQ(r.first.code, postgres_errc::permission_denied) << r.first.message();
    r = renew(*b);
  }
  ASSERT_FALSE(r.first) << r.first.message();
  EXPECT_EQ(r.second, renew_answer::renewed);
  auto [e, again] = acquire(*b);
  ASSERT_FALSE(e) << e.message();
  EXPECT_TRUE(again.acquired());
  auto [ce, none] = candidates(*b);
  EXPECT_EQ(ce.code, postgres_errc::missing_schema);
  EXPECT_NE(ce.detail.find("lacks SELECT, INSERT, UPDATE or DELETE"), std::string::npos)
      << ce.detail;
}

// Registrations lapse two ttls after their last write; the leader's
// renewals delete them, so the table holds the live candidates (and those
// lapsed since the last renewal) only.
TEST_F(fixture, lapsed_registrations_are_deleted_by_the_leaders_renewals) {
  auto leader = store("postgres", true, "n1", 1000ms);
  ASSERT_FALSE(create_record(*leader).first);
  ASSERT_TRUE(acquire(*leader).second.acquired());
  {
    auto gone = store("postgres", true, "n2", 1000ms);
    ASSERT_EQ(acquire(*gone).second.outcome, acquire_outcome::held);
  }
  // Another election's lapsed row is not this leader's to delete.
  pg.query(
      "INSERT INTO baton_lease_candidates (election, node, live_since, expires_at) "
      "VALUES ('other', 'x', '-infinity', '-infinity')");
  EXPECT_EQ(pg.query("SELECT count(*) FROM baton_lease_candidates WHERE node = 'n2'")[0][0], "1");
  const auto until = std::chrono::steady_clock::now() + 2500ms;
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_EQ(renew(*leader).second, renew_answer::renewed);
    std::this_thread::sleep_for(300ms);
  }
  EXPECT_EQ(pg.query("SELECT count(*) FROM baton_lease_candidates WHERE node = 'n2'")[0][0], "0");
  EXPECT_EQ(pg.query("SELECT count(*) FROM baton_lease_candidates WHERE node = 'n1'")[0][0], "1");
  EXPECT_EQ(pg.query("SELECT count(*) FROM baton_lease_candidates WHERE election = 'other'")[0][0],
            "1");
  auto [e, list] = candidates(*leader);
  ASSERT_FALSE(e) << e.message();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].node, "n1");
  EXPECT_GE(list[0].live_for, 2000ms);
}

// A registration lasts while one store keeps it up; the same node id in a
// new store (a restarted daemon, a new session) is a new candidate, as it
// is to the kinds that tie registrations to a server session: a node that
// keeps restarting never looks live for long.
TEST_F(fixture, a_restarted_candidate_registers_anew) {
  auto leader = store("postgres", true, "n1");
  ASSERT_FALSE(create_record(*leader).first);
  ASSERT_TRUE(acquire(*leader).second.acquired());
  const auto live_for = [&](const std::string& node) {
    for (const auto& c : candidates(*leader).second)
      if (c.node == node) return c.live_for;
    return milliseconds(-1);
  };
  auto first = store("postgres", true, "n2");
  ASSERT_EQ(acquire(*first).second.outcome, acquire_outcome::held);
  std::this_thread::sleep_for(1000ms);
  ASSERT_EQ(acquire(*first).second.outcome, acquire_outcome::held);
  EXPECT_GE(live_for("n2"), 1000ms);
  first.reset();
  auto again = store("postgres", true, "n2");
  ASSERT_EQ(acquire(*again).second.outcome, acquire_outcome::held);
  EXPECT_GE(live_for("n2"), 0ms);
  EXPECT_LT(live_for("n2"), 1000ms);
}

// A cool-down rides in the registration's session column (lease_sql.hpp):
// it changes neither the row's start nor its expiry, only this session's row
// takes it, the node's next attempt writes the bare session again (and keeps
// the run), and a mark in another form reads as none.
TEST_F(fixture, a_cooldown_marks_the_registration_until_the_next_attempt_keeps_its_run) {
  auto leader = store("postgres", true, "n1");
  ASSERT_FALSE(create_record(*leader).first);
  ASSERT_TRUE(acquire(*leader).second.acquired());
  auto n2 = store("postgres", true, "n2");
  ASSERT_EQ(acquire(*n2).second.outcome, acquire_outcome::held);
  const auto row = [&] {
    return pg.query(
        "SELECT session, live_since::text, expires_at::text FROM baton_lease_candidates "
        "WHERE node = 'n2'")[0];
  };
  const auto before = row();
  ASSERT_EQ(before[0].find(' '), std::string::npos) << before[0];

  // Another store of the node id (a restarted daemon) does not mark it.
  auto other = store("postgres", true, "n2");
  ASSERT_FALSE(create_record(*other).first);  // its session is set up
  other->register_cooldown(30000ms);
  n2->register_cooldown(30000ms);
  const auto cooling = listed_until(*leader, "n2", [](const candidate_info& c) {
    return c.cooling_down_for > 0ms;
  });
  ASSERT_TRUE(cooling && cooling->cooling_down_for > 0ms) << "the cool-down was never listed";
  EXPECT_LE(cooling->cooling_down_for, 30000ms);
  EXPECT_GT(cooling->cooling_down_for, 25000ms);
  EXPECT_GE(cooling->last_attempt_ago, 0ms);
  EXPECT_LT(cooling->last_attempt_ago, 5000ms);
  const auto marked = row();
  EXPECT_EQ(marked[0].rfind(before[0] + " cooling_until_ms=", 0), 0u) << marked[0];
  EXPECT_EQ(marked[1], before[1]) << "the run's start stays";
  EXPECT_EQ(marked[2], before[2]) << "a cool-down is no attempt: the expiry stays";

  ASSERT_EQ(acquire(*n2).second.outcome, acquire_outcome::held);
  const auto after = row();
  EXPECT_EQ(after[0], before[0]) << "the next attempt ends the cool-down";
  EXPECT_EQ(after[1], before[1]) << "and keeps the run";
  const auto back = listed_until(*leader, "n2", [](const candidate_info&) { return true; });
  ASSERT_TRUE(back);
  EXPECT_EQ(back->cooling_down_for, 0ms);

  // A mark in another form (written by hand) is no cool-down, and no error.
  pg.query("UPDATE baton_lease_candidates SET session = session || ' cooling_until_ms=soon' "
           "WHERE node = 'n2'");
  auto [e, list] = candidates(*leader);
  ASSERT_FALSE(e) << e.message();
  ASSERT_TRUE(lists(list, "n2"));
  for (const auto& c : list) EXPECT_EQ(c.cooling_down_for, 0ms) << c.node;
}

// What a daemon from before switchovers reads in the row: a lease held
// until the window's end by a holder that no node id can be, so it waits.
// Two candidates race for a row nobody has held yet (as `init-store` makes
// it: both times '-infinity'). The loser's statement waits for the winner's
// row lock, finds the row taken, and answers from its own snapshot, where
// the row is still never held: that answer is "held, free now", never an
// error (it once failed with "cannot subtract infinite timestamps").
TEST_F(fixture, losing_the_race_for_a_never_held_row_is_an_answer_not_an_error) {
  auto a = store("postgres", true, "n1");
  ASSERT_FALSE(create_record(*a).first);
  ASSERT_EQ(pg.query("SELECT isfinite(expires_at), isfinite(held_back_until) FROM baton_lease")[0],
            (std::vector<std::string>{"f", "f"}));
  postgres_store_options o;
  o.conninfo = pg.conninfo("postgres");
  o.create_schema = true;
  o.identity = {"e", "n2", milliseconds(3000)};
  o.connect_timeout = 5000ms;
  o.command_timeout = 5000ms;
  o.registry_recheck = 0ms;
  postgres_store b(io, std::move(o));
  ASSERT_FALSE(candidates(b).first) << "b's session is set up before the race";

  // The winner, mid-statement: the row taken, its lock held.
  auto winner = pg.open_transaction(
      "UPDATE baton_lease SET holder = 'n3', holder_session = 'n3-session', token = token + 1, "
      "expires_at = clock_timestamp() + interval '3 s' WHERE election = 'e'");
  std::optional<std::pair<store_error, acquire_answer>> out;
  b.async_acquire(
      [&](store_error e, acquire_answer r) { out.emplace(std::move(e), std::move(r)); });
  bool waiting = false;
  for (int i = 0; i < 200 && !waiting && !out; ++i) {
    io.run_one_for(10ms);
    waiting =
        pg.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")[0][0] !=
        "0";
  }
  ASSERT_TRUE(waiting) << "b's acquire never waited for the row lock";
  winner->commit();
  auto r = wait(out);
  ASSERT_TRUE(r) << "no answer within 10 s";
  EXPECT_FALSE(r->first) << r->first.message();
  EXPECT_FALSE(r->second.acquired());
  EXPECT_GE(r->second.remaining.count(), 0);
  EXPECT_GE(r->second.free_in.count(), 0);
  // The next attempt sees the winner.
  auto [e, next] = acquire(b);
  EXPECT_FALSE(e) << e.message();
  EXPECT_FALSE(next.acquired());
  EXPECT_EQ(next.holder, "n3");
}

TEST_F(fixture, a_reservation_reads_as_a_lease_held_until_the_window_ends) {
  auto a = store("postgres", true, "n1");
  ASSERT_FALSE(create_record(*a).first);
  ASSERT_TRUE(acquire(*a).second.acquired());
  ASSERT_EQ(hand_over(*a, "n2", 5000ms).second, release_answer::released);
  const auto row = pg.query(
      "SELECT holder, expires_at > clock_timestamp(), expires_at < clock_timestamp() + "
      "interval '5 s' FROM baton_lease");
  EXPECT_EQ(row[0][0], "reserved for n2 by n1");
  EXPECT_EQ(row[0][1], "t");
  EXPECT_EQ(row[0][2], "t");
  EXPECT_EQ(renew(*a).second, renew_answer::lost) << "the term did not end";
  // Nobody's node id reads as a reservation, and nobody is handed one.
  EXPECT_THROW(store("postgres", true, "n 3"), std::invalid_argument);
  auto [e, r] = hand_over(*a, "a b", 5000ms);
  EXPECT_EQ(e.code, std::errc::invalid_argument) << e.message();
}

// A restart meets a reservation as it meets a free lease: nobody holds it,
// so everyone, its target included, is held back one ttl (a term the
// server no longer has may be at work); then the target alone may take it.
TEST_F(fixture, a_restart_during_a_reservation_holds_it_back_as_a_free_lease) {
  auto a = store("postgres", true, "n1");
  auto b = store("postgres", true, "n2");
  auto c = store("postgres", true, "n3");
  ASSERT_FALSE(create_record(*a).first);
  auto [e, won] = acquire(*a);
  ASSERT_TRUE(won.acquired()) << e.message();
  ASSERT_EQ(hand_over(*a, "n2", 30s).second, release_answer::released);

  pg.restart_immediate();
  auto [ec, held_c] = acquire_after_restart(*c);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(held_c.outcome, acquire_outcome::held_back);
  EXPECT_EQ(held_c.holder, "");
  EXPECT_NE(held_c.why.find("PostgreSQL restarted"), std::string::npos) << held_c.why;
  auto [eb, held_b] = acquire_after_restart(*b);
  ASSERT_FALSE(eb) << eb.message();
  EXPECT_EQ(held_b.outcome, acquire_outcome::held_back);

  // After the hold-back (ttl 3 s), the reservation (30 s) still stands.
  std::this_thread::sleep_for(3200ms);
  auto [ec2, reserved] = acquire(*c);
  ASSERT_FALSE(ec2) << ec2.message();
  EXPECT_EQ(reserved.outcome, acquire_outcome::held);
  EXPECT_EQ(reserved.reserved_for, "n2");
  EXPECT_EQ(reserved.holder, "n1");
  auto [eb2, taken] = acquire(*b);
  ASSERT_FALSE(eb2) << eb2.message();
  EXPECT_TRUE(taken.acquired());
  EXPECT_GT(taken.token, won.token);
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

// PostgreSQL cuts names at 63 bytes: for a table name of 62 the registry's
// name is the sequence's. The lease works; candidates say to shorten it.
TEST_F(fixture, a_registry_name_cut_onto_the_sequence_is_no_registry) {
  postgres_store_options o;
  o.conninfo = pg.conninfo("postgres");
  o.table = std::string(62, 't');
  o.identity = {"e", "n1", milliseconds(3000)};
  o.command_timeout = 1000ms;
  auto s = std::make_unique<postgres_store>(io, std::move(o));
  const auto [re, r] = create_record(*s);
  ASSERT_FALSE(re) << re.message();
  auto [e, a] = acquire(*s);
  ASSERT_FALSE(e) << e.message();
  EXPECT_TRUE(a.acquired());
  EXPECT_EQ(renew(*s).second, renew_answer::renewed);
  auto [ce, none] = candidates(*s);
  EXPECT_EQ(ce.code, postgres_errc::missing_schema);
  EXPECT_NE(ce.detail.find("choose a shorter postgres.table"), std::string::npos) << ce.detail;
}

// The daemon calls watch() and then acquires at once: the listening session
// opens only after that first acquire was answered, so that its connection
// (a server process forked, a cold backend) does not compete with the
// acquire's. It then listens, and says so.
TEST_F(fixture, the_listening_session_opens_after_the_first_answer) {
  auto s = store("postgres", true);
  auto wakeups = std::make_shared<std::vector<bool>>();
  s->watch([wakeups](const store_event& e) {
    if (const auto* w = std::get_if<store_events::wakeups>(&e)) wakeups->push_back(w->trusted);
  });
  EXPECT_EQ(s->status().wakeups, wakeup_state::connecting);
  std::optional<std::string> listening_at_answer;
  s->async_acquire([&](store_error e, acquire_answer) {
    EXPECT_FALSE(e) << e.message();
    listening_at_answer = pg.query(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'baton n1 (listen)'")[0][0];
  });
  ASSERT_TRUE(wait(listening_at_answer));
  EXPECT_EQ(*listening_at_answer, "0") << "the listening session was open before the answer";
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (wakeups->empty() && std::chrono::steady_clock::now() < deadline) {
    if (io.stopped()) io.restart();
    io.run_one_for(50ms);
  }
  ASSERT_EQ(*wakeups, std::vector<bool>{true}) << "no wakeups event after the answer";
  EXPECT_EQ(s->status().wakeups, wakeup_state::subscribed);
  EXPECT_EQ(pg.query("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                     "'baton n1 (listen)'")[0][0],
            "1");
}

}  // namespace
}  // namespace baton
