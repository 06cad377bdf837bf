// postgres_store's calls for lease.failsafe peers against a real PostgreSQL
// (docs/safety.md, rules F1, F6, F7, F8 and F9; docs/stores/postgres.md),
// in the PostgreSQL form of what the contract
// (tests/contract/failsafe_contract.cpp) checks through the port: the
// record in the lease row's failsafe column that a grant writes and a
// release clears, the list a renewal writes only when its number is above
// the record's, the promise a registration carries, the resume after the
// lease lapsed or the row was lost, a resume by another process of the same
// node; and the column added to a table made before the mode, or named as
// the fix when the role may not add it.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baton/check_report.hpp"
#include "baton/config.hpp"
#include "postgres/postgres_check.hpp"
#include "postgres/postgres_settings.hpp"
#include "postgres/postgres_store.hpp"
#include "support/servers/postgres_server.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

template <typename T>
struct call_result {
  store_error error;
  T value{};
};

struct postgres_failsafe : ::testing::Test {
  testing::postgres_server pg;
  boost::asio::io_context io;
  // Short, so that a store watches the database's clock for a ttl
  // (clock_watch.hpp) before it takes a lease that lapsed unreleased.
  const milliseconds ttl = 1000ms;

  std::unique_ptr<postgres_store> peer_store(const std::string& node, const std::string& address,
                                             bool create_schema = true) {
    postgres_store_options o;
    o.conninfo = pg.conninfo("postgres");
    o.create_schema = create_schema;
    o.identity = {"e", node, ttl};
    o.identity.peer_address = address;
    o.connect_timeout = 2000ms;
    o.command_timeout = 1000ms;
    return std::make_unique<postgres_store>(io, std::move(o));
  }

  // Runs the io_context until the call completes, at most 10 s.
  template <typename T>
  call_result<T> failsafe_call(const std::function<void(std::function<void(store_error, T)>)>& start) {
    std::optional<call_result<T>> out;
    start([&](store_error e, T v) { out.emplace(call_result<T>{std::move(e), std::move(v)}); });
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!out && std::chrono::steady_clock::now() < deadline) {
      if (io.stopped()) io.restart();
      io.run_one_for(50ms);
    }
    EXPECT_TRUE(out) << "no answer within 10 s";
    return out.value_or(call_result<T>{});
  }

  call_result<acquire_answer> fs_acquire(postgres_store& s, const failsafe_acquire& a) {
    return failsafe_call<acquire_answer>(
        [&](auto h) { s.failsafe()->async_acquire(a, std::move(h)); });
  }
  call_result<renew_answer> fs_renew(postgres_store& s, const failsafe_list& l) {
    return failsafe_call<renew_answer>([&](auto h) { s.failsafe()->async_renew(l, std::move(h)); });
  }
  call_result<renew_answer> fs_resume(postgres_store& s, std::uint64_t token,
                                      const failsafe_list& l) {
    return failsafe_call<renew_answer>(
        [&](auto h) { s.failsafe()->async_resume(token, l, std::move(h)); });
  }
  call_result<release_answer> fs_release(postgres_store& s) {
    return failsafe_call<release_answer>([&](auto h) { s.async_release(std::move(h)); });
  }
  call_result<std::vector<candidate_info>> fs_candidates(postgres_store& s) {
    return failsafe_call<std::vector<candidate_info>>(
        [&](auto h) { s.async_candidates(std::move(h)); });
  }

  // The record as the lease row holds it: "token seq holder address peers"
  // ("" = none).
  std::string record() {
    const auto rows = pg.query(
        "SELECT coalesce(failsafe->>'token' || ' ' || (failsafe->>'seq') || ' ' || "
        "(failsafe->>'holder') || ' ' || (failsafe->>'address') || ' ' || (failsafe->'peers')::text, "
        "'') FROM baton_lease WHERE election = 'e'");
    return rows.empty() ? std::string() : rows.at(0).at(0);
  }
  std::string row_token() {
    return pg.query("SELECT token FROM baton_lease WHERE election = 'e'").at(0).at(0);
  }
  // The lease lapsed, as after its expiry (the row and record kept).
  void lease_lapses() {
    pg.query("UPDATE baton_lease SET expires_at = clock_timestamp() - interval '1 second' "
             "WHERE election = 'e'");
  }

  // The election has run before: its row exists, so no first-start hold-back.
  void election_exists() {
    auto init = peer_store("init", "");
    auto made = failsafe_call<record_answer>(
        [&](auto h) { init->async_create_record(std::move(h)); });
    ASSERT_FALSE(made.error) << made.error.message();
  }

  // node-a wins with node-b and node-c listed.
  std::uint64_t a_leads() {
    failsafe_acquire args;
    args.list = {1, {{"node-b", "10.0.0.2:9465"}, {"node-c", "10.0.0.3:9465"}}};
    auto won = fs_acquire(*a, args);
    EXPECT_FALSE(won.error) << won.error.message();
    EXPECT_TRUE(won.value.acquired()) << won.value.why;
    return won.value.token;
  }

  void SetUp() override { election_exists(); }

  std::unique_ptr<postgres_store> a = peer_store("node-a", "10.0.0.1:9465");
  std::unique_ptr<postgres_store> b = peer_store("node-b", "10.0.0.2:9465");
  std::unique_ptr<postgres_store> c = peer_store("node-c", "10.0.0.3:9465");
};

constexpr const char* listed_b_and_c =
    "[{\"node\": \"node-b\", \"address\": \"10.0.0.2:9465\"}, {\"node\": \"node-c\", "
    "\"address\": \"10.0.0.3:9465\"}]";

TEST_F(postgres_failsafe, a_grant_writes_the_record_and_a_release_clears_it) {
  const auto token = a_leads();
  EXPECT_EQ(record(), std::to_string(token) + " 1 node-a 10.0.0.1:9465 " + listed_b_and_c);
  EXPECT_EQ(fs_release(*a).value, release_answer::released);
  EXPECT_EQ(record(), "");
}

TEST_F(postgres_failsafe, a_renewal_writes_its_list_only_when_its_number_is_higher) {
  const auto token = a_leads();
  auto renewed = fs_renew(*a, {3, {{"node-b", "10.0.0.2:9465"}}});
  EXPECT_EQ(renewed.value, renew_answer::renewed) << renewed.error.message();
  const std::string three = std::to_string(token) +
                            " 3 node-a 10.0.0.1:9465 [{\"node\": \"node-b\", \"address\": "
                            "\"10.0.0.2:9465\"}]";
  EXPECT_EQ(record(), three);
  // A write that lands late, numbered 2: the lease is renewed, the list stays.
  renewed = fs_renew(*a, {2, {}});
  EXPECT_EQ(renewed.value, renew_answer::renewed);
  EXPECT_EQ(record(), three);
}

TEST_F(postgres_failsafe, a_held_answer_names_the_holders_own_token) {
  const auto token = a_leads();
  auto held = fs_acquire(*b, {});
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, acquire_outcome::held);
  EXPECT_EQ(held.value.holder, "node-a");
  EXPECT_EQ(held.value.token, token);
}

TEST_F(postgres_failsafe, the_holder_itself_is_not_held_by_its_own_record) {
  a_leads();
  lease_lapses();
  auto again = fs_acquire(*a, {});
  EXPECT_TRUE(again.value.acquired()) << again.error.message() << again.value.why;
}

TEST_F(postgres_failsafe, a_registered_promise_holds_a_free_lease) {
  // node-c promised node-a's term 5000 for 3 s (F9); the row has no record.
  failsafe_acquire promising;
  promising.may_win = false;
  promising.promise = failsafe_promise{"node-a", 5000, 3000ms};
  fs_acquire(*c, promising);
  auto held = fs_acquire(*b, {});
  ASSERT_TRUE(held.value.failsafe_hold) << held.value.why;
  EXPECT_EQ(held.value.failsafe_hold->leader, "node-a");
  EXPECT_EQ(held.value.failsafe_hold->token, 5000u);
  ASSERT_EQ(held.value.failsafe_hold->peers.size(), 1u);
  EXPECT_EQ(held.value.failsafe_hold->peers[0], (failsafe_peer{"node-c", "10.0.0.3:9465"}));
  // A promise to node-b's own term holds node-b nothing.
  failsafe_acquire cleared;
  cleared.cleared_token = 5000;
  EXPECT_TRUE(fs_acquire(*b, cleared).value.acquired());
  // The cool-down keeps the promise as it was.
  c->register_cooldown(1000ms);
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  std::string session;
  while (session.find("cooling_until_ms") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_for(20ms);
    session = pg.query("SELECT session FROM baton_lease_candidates WHERE node = 'node-c'").at(0).at(0);
  }
  EXPECT_NE(session.find("cooling_until_ms"), std::string::npos) << session;
  EXPECT_EQ(pg.query("SELECT failsafe->>'token' FROM baton_lease_candidates WHERE node = 'node-c'")
                .at(0)
                .at(0),
            "5000");
}

TEST_F(postgres_failsafe, an_expired_promise_holds_nothing) {
  failsafe_acquire promising;
  promising.may_win = false;
  promising.promise = failsafe_promise{"node-a", 5000, 1ms};
  fs_acquire(*c, promising);
  pg.query("SELECT pg_sleep(0.01)");
  auto won = fs_acquire(*b, {});
  EXPECT_TRUE(won.value.acquired()) << won.value.why;
}

TEST_F(postgres_failsafe, a_resume_takes_the_term_up_again_with_its_token) {
  const auto token = a_leads();
  lease_lapses();
  auto resumed = fs_resume(*a, token, {2, {{"node-b", "10.0.0.2:9465"}}});
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  EXPECT_EQ(resumed.value, renew_answer::renewed);
  EXPECT_EQ(pg.query("SELECT holder, token, expires_at > clock_timestamp() FROM baton_lease "
                     "WHERE election = 'e'")
                .at(0),
            (std::vector<std::string>{"node-a", std::to_string(token), "t"}));
  EXPECT_EQ(record(), std::to_string(token) +
                          " 2 node-a 10.0.0.1:9465 [{\"node\": \"node-b\", \"address\": "
                          "\"10.0.0.2:9465\"}]");
  EXPECT_EQ(fs_renew(*a, {3, {}}).value, renew_answer::renewed);
  auto held = fs_acquire(*b, {});
  EXPECT_EQ(held.value.holder, "node-a");
  EXPECT_EQ(held.value.token, token);
}

TEST_F(postgres_failsafe, a_resume_passes_a_hold_back_and_keeps_a_lifted_token) {
  const auto token = a_leads();
  // A reset lifted the row's token and holds every grant back.
  pg.query("UPDATE baton_lease SET expires_at = clock_timestamp() - interval '1 second', "
           "token = token + 1000000, held_back_until = clock_timestamp() + interval '1 hour' "
           "WHERE election = 'e'");
  auto resumed = fs_resume(*a, token, {2, {}});
  ASSERT_EQ(resumed.value, renew_answer::renewed) << resumed.error.message();
  EXPECT_EQ(row_token(), std::to_string(token + 1000000)) << "tokens never go back";
  // The term keeps its token: a renewal writes it, and a held answer names it.
  EXPECT_EQ(fs_renew(*a, {3, {}}).value, renew_answer::renewed);
  EXPECT_EQ(record().substr(0, record().find(' ')), std::to_string(token));
  auto held = fs_acquire(*b, {});
  EXPECT_EQ(held.value.token, token);
  // The next term's token is above the lifted one.
  EXPECT_EQ(fs_release(*a).value, release_answer::released);
  pg.query("UPDATE baton_lease SET held_back_until = '-infinity' WHERE election = 'e'");
  auto won = fs_acquire(*b, {});
  ASSERT_TRUE(won.value.acquired()) << won.value.why;
  EXPECT_GT(won.value.token, token + 1000000);
}

TEST_F(postgres_failsafe, a_resume_after_the_row_was_lost_keeps_the_token_rising) {
  const auto token = a_leads();
  pg.query("DELETE FROM baton_lease");
  auto resumed = fs_resume(*a, token, {2, {{"node-b", "10.0.0.2:9465"}}});
  ASSERT_EQ(resumed.value, renew_answer::renewed) << resumed.error.message();
  EXPECT_GE(std::stoull(row_token()), token) << "tokens never go back";
  EXPECT_EQ(record().substr(0, record().find(' ')), std::to_string(token));
  EXPECT_EQ(fs_renew(*a, {3, {}}).value, renew_answer::renewed);
  // The next term's token is above the resumed one.
  EXPECT_EQ(fs_release(*a).value, release_answer::released);
  auto won = fs_acquire(*b, {});
  ASSERT_TRUE(won.value.acquired()) << won.value.why;
  EXPECT_GT(won.value.token, token);
}

TEST_F(postgres_failsafe, another_process_of_the_same_node_cannot_resume) {
  const auto token = a_leads();
  lease_lapses();
  auto restarted = peer_store("node-a", "10.0.0.1:9465");
  EXPECT_EQ(fs_resume(*restarted, token, {2, {}}).value, renew_answer::lost);
}

TEST_F(postgres_failsafe, without_the_mode_nothing_is_written_to_the_record) {
  auto plain = peer_store("node-p", "");
  auto won = failsafe_call<acquire_answer>([&](auto h) { plain->async_acquire(std::move(h)); });
  ASSERT_TRUE(won.value.acquired()) << won.error.message() << won.value.why;
  EXPECT_EQ(record(), "");
  EXPECT_EQ(pg.query("SELECT count(*) FROM baton_lease_candidates WHERE failsafe IS NOT NULL")
                .at(0)
                .at(0),
            "0");
}

TEST_F(postgres_failsafe, a_table_made_before_the_mode_gets_its_column) {
  a.reset();
  pg.query("ALTER TABLE baton_lease DROP COLUMN failsafe; "
           "ALTER TABLE baton_lease_candidates DROP COLUMN failsafe");
  // check-store names the fix.
  config cfg;
  cfg.election = "e";
  cfg.lease.failsafe = failsafe_mode::peers;
  postgres_settings_of(cfg).url = pg.conninfo("postgres");
  postgres_settings_of(cfg).command_timeout = 1000ms;
  postgres_settings_of(cfg).create_schema = false;
  std::optional<check_report> report;
  store_check_detail::async_check_postgres(io, cfg, [&](check_report r) { report = std::move(r); });
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!report && std::chrono::steady_clock::now() < deadline) {
    if (io.stopped()) io.restart();
    io.run_one_for(50ms);
  }
  ASSERT_TRUE(report);
  const auto line = std::find_if(report->lines.begin(), report->lines.end(),
                                 [](const auto& l) { return l.topic == "failsafe"; });
  ASSERT_NE(line, report->lines.end());
  EXPECT_EQ(line->verdict, check_verdict::failure);
  EXPECT_NE(line->text.find("init-store --print"), std::string::npos) << line->text;
  // Without create_schema the mode's calls name the fix.
  auto locked = peer_store("node-a", "10.0.0.1:9465", false);
  auto refused = fs_acquire(*locked, {});
  EXPECT_TRUE(refused.error);
  EXPECT_NE(refused.error.message().find("init-store --print"), std::string::npos)
      << refused.error.message();
  // A store without the mode works as before.
  auto plain = peer_store("node-p", "", false);
  auto won = failsafe_call<acquire_answer>([&](auto h) { plain->async_acquire(std::move(h)); });
  EXPECT_TRUE(won.value.acquired()) << won.error.message() << won.value.why;
  // With it, the column is added on first use.
  auto adding = peer_store("node-x", "10.0.0.9:9465");
  auto held = fs_acquire(*adding, {});
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, acquire_outcome::held);
  EXPECT_EQ(pg.query("SELECT count(*) FROM pg_attribute WHERE attname = 'failsafe' AND "
                     "attrelid IN ('baton_lease'::regclass, 'baton_lease_candidates'::regclass)")
                .at(0)
                .at(0),
            "2");
}

}  // namespace
}  // namespace baton
