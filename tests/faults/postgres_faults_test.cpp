// Faults of PostgreSQL while a leader works on the postgres store: the server
// restarted in immediate mode (the leader keeps its term), an older copy of
// its data directory put back (everyone held back), every baton session
// terminated by an operator, the lease table locked by another session for
// two ttls (slow statements), the server killed, and a replica promoted. One
// server per scenario, a fresh election per round.
#include <signal.h>

#include <algorithm>
#include <cstdio>

#include "scenario.hpp"
#include "support/servers/postgres_server.hpp"

namespace baton::testing::postgres_faults_test {
namespace {

constexpr auto ttl = 2000ms;

node_options on_postgres(const postgres_server& pg) {
  // The cluster's Redis flag is given but unused: the store kind decides.
  node_options o = via_redis_url("redis://127.0.0.1:1");
  o.baton_args = {"--store-kind", "postgres", "--postgres-url", pg.conninfo()};
  return o;
}

// Waits for a single working app; fails the test with the logs otherwise.
std::optional<interval> single_leader(fault_cluster& c, const postgres_server& pg) {
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  EXPECT_TRUE(leader) << why << "\n" << c.logs() << "\npostgres log:\n" << pg.log_tail();
  return leader;
}

// After the fault: somebody works again (within 20 s), and it is one app.
void expect_a_leader_again(fault_cluster& c, const postgres_server& pg) {
  std::string why;
  EXPECT_TRUE(c.wait_for_single_worker(20s, &why))
      << "no single leader after the fault: " << why << "\n"
      << c.logs() << "\npostgres log:\n"
      << pg.log_tail();
}

// Lines a restart with its data intact must never cause.
void expect_no_term_lost(fault_cluster& c, int nodes) {
  for (int i = 1; i <= nodes; ++i) {
    const auto text = c.log_of(i);
    EXPECT_EQ(text.find("lease lost"), std::string::npos) << c.name_of(i) << ":\n" << text;
    EXPECT_EQ(text.find("lost its data or failed over"), std::string::npos)
        << c.name_of(i) << ":\n" << text;
  }
}

// `pg_ctl restart -m immediate`: a crash and its recovery, nothing committed
// lost, the server down for half a second as pg_ctl takes. Three candidates,
// ttl 3 s (renew deadline 2 s): the leader's renewals that fail meanwhile are
// retried, the first one
// after the restart finds the row still its own, and its app works on with
// the same token; a candidate that comes up meanwhile meets the restarted
// server first, and nobody is held back.
TEST(postgres_faults, restarted_in_immediate_mode_the_leader_keeps_its_term) {
  constexpr auto restart_ttl = 3000ms;
  // Renewals go out every ttl/3. At worst the restart lands just before one is
  // due, so the leader's renew deadline is one interval after the restart: the
  // server must answer again within it. On a loaded machine the restart and the
  // first session after it can take longer (seen: over a second with both CPUs
  // busy); the leader then rightly stops, and the round does not count.
  constexpr double bridgeable_ms = 1000.0;
  constexpr int max_voided = 3;
  int voided = 0;
  postgres_server pg;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round + 10 * voided), restart_ttl, false);
    c.start_node(1, on_postgres(pg));
    c.start_node(2, on_postgres(pg));
    auto leader = single_leader(c, pg);
    ASSERT_TRUE(leader);
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    pg.restart_immediate(400ms);
    const double down_ms = ms_between(inject, mono_now_ns());
    pg.query("select 1");
    const double answered_ms = ms_between(inject, mono_now_ns());
    c.start_node(3, on_postgres(pg));
    // Two ttls: long past the renew deadline of any renewal the restart
    // broke, and past the expiry of the lease the leader held before it.
    const bool term_lost = app.wait(2 * restart_ttl).has_value();
    if (term_lost && answered_ms > bridgeable_ms && voided < max_voided) {
      std::printf(
          "restart round %d: PostgreSQL answered again only %.0f ms after the restart, "
          "past the %.0f ms a renewal can bridge; the leader stopped its app, as it "
          "must; the round is run again\n",
          round, answered_ms, bridgeable_ms);
      ++voided;
      --round;
      continue;
    }
    EXPECT_FALSE(term_lost) << "the restart cost the leader its term (PostgreSQL answered again "
                            << answered_ms << " ms after it)\n"
                            << c.logs() << "\npostgres log:\n"
                            << pg.log_tail();
    auto still = single_leader(c, pg);
    ASSERT_TRUE(still);
    EXPECT_EQ(still->pid, leader->pid) << c.logs();
    EXPECT_EQ(still->token, leader->token) << c.logs();
    EXPECT_FALSE(first_started_after(c.log(), inject)) << "a new term started\n" << c.logs();
    expect_no_term_lost(c, 3);
    std::printf(
        "restart round %d: PostgreSQL down and back in %.0f ms, answering after %.0f ms; "
        "the leader's app kept working with token %s\n",
        round, down_ms, answered_ms, leader->token.c_str());

    const auto overlaps = check_no_overlap(c);
    auto record = round_record(c, "postgres: restart (immediate mode), ttl 3 s", inject,
                               leader->pid, overlaps);
    record.kept_working = !app.wait(0ms);
    record_fault(record);
  }
}

// The data directory put back from a copy (a restore onto the same cluster:
// the same system identifier and timeline, older data) after more terms were
// taken. The candidates saw a token the restored row does not have: the
// first to reach the server holds everyone back one ttl and lifts the token
// above every old one; the leader's renewal finds its term gone.
TEST(postgres_faults, a_data_directory_put_back_holds_everyone_back_and_tokens_stay_above) {
  postgres_server pg;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_postgres(pg));
    c.start_node(2, on_postgres(pg));
    c.start_node(3, on_postgres(pg));
    auto first = single_leader(c, pg);
    ASSERT_TRUE(first);
    pg.save_data_copy();

    // More terms: the leader steps down (SIGTERM releases the lease), a
    // standby takes over, and the stopped candidate comes back as a new one.
    auto current = single_leader(c, pg);
    ASSERT_TRUE(current);
    for (int term = 0; term < 2; ++term) {
      const int l = fault_cluster::index_of(*current);
      exit_watch stepping_down(current->pid);
      ASSERT_TRUE(c.node(l).signal(SIGTERM));
      ASSERT_TRUE(c.node(l).wait_exit(15s)) << c.logs();
      ASSERT_TRUE(stepping_down.wait(5s)) << c.logs();
      c.start_node(4 + term, on_postgres(pg));
      auto next = single_leader(c, pg);
      ASSERT_TRUE(next);
      ASSERT_GT(token_value(*next), token_value(*current)) << c.logs();
      current = next;
    }
    std::uint64_t highest = 0;
    const event_log before = c.log();
    for (const auto& i : before.intervals()) highest = std::max(highest, token_value(i));
    ASSERT_EQ(highest, token_value(*current)) << c.logs();
    exit_watch app(current->pid);

    const std::int64_t inject = mono_now_ns();
    pg.put_data_copy_back();
    const std::int64_t back = mono_now_ns();
    const auto gone = app.wait(ttl + 1s);
    EXPECT_TRUE(gone) << "the leader's app outlived its lost term\n" << c.logs();
    expect_a_leader_again(c, pg);

    const event_log log = c.log();
    const auto next = first_started_after(log, inject);
    ASSERT_TRUE(next) << c.logs();
    EXPECT_GT(token_value(*next), highest) << "a token went back with the data\n" << c.logs();
    // Held back one ttl from the first acquire on the restored server, which
    // came after it was back.
    EXPECT_GE(next->start_ns, back + std::chrono::nanoseconds(ttl - 50ms).count()) << c.logs();
    std::size_t found = 0;
    for (const int i : {1, 2, 3, 4, 5}) {
      if (c.has_node(i) && c.log_of(i).find("lost its data or failed over") != std::string::npos) {
        ++found;
      }
    }
    EXPECT_GE(found, 1u) << "nobody reported the data gone back\n" << c.logs();
    const auto old = interval_of(log, current->pid);
    ASSERT_TRUE(old);
    std::printf("restore round %d: server back after %.0f ms; old app's last work %.0f ms, next app "
                "%.0f ms after the injection (no leader for %.0f ms); token %s > %llu\n",
                round, ms_between(inject, back), ms_between(inject, old->end_ns),
                ms_between(inject, next->start_ns), ms_between(old->end_ns, next->start_ns),
                next->token.c_str(), static_cast<unsigned long long>(highest));

    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "postgres: older data directory put back", inject, current->pid,
                              overlaps));
  }
}

TEST(postgres_faults, every_baton_session_terminated_under_a_leader) {
  postgres_server pg;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_postgres(pg));
    c.start_node(2, on_postgres(pg));
    auto leader = single_leader(c, pg);
    ASSERT_TRUE(leader);

    const std::int64_t inject = mono_now_ns();
    EXPECT_GT(pg.terminate_backends("baton "), 0) << "no baton session was found to terminate";
    expect_a_leader_again(c, pg);

    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "postgres: pg_terminate_backend of every baton session", inject,
                              leader->pid, overlaps));
  }
}

TEST(postgres_faults, lease_table_locked_for_two_ttls_stops_the_app_in_time) {
  postgres_server pg;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_postgres(pg));
    c.start_node(2, on_postgres(pg));
    auto leader = single_leader(c, pg);
    ASSERT_TRUE(leader);
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    {
      // Every statement on the table now waits, until the server's
      // statement_timeout (baton's command timeout) ends it.
      auto lock = pg.lock_table("baton_lease");
      const auto gone = app.wait(ttl + 1s);
      EXPECT_TRUE(gone) << "the app outlived its lease while the table was locked\n" << c.logs();
      hold_fault_until(inject + std::chrono::nanoseconds(2 * ttl).count());
    }
    const std::int64_t unlocked = mono_now_ns();
    expect_a_leader_again(c, pg);
    const event_log log = c.log();
    // Its last work came within the validity of the last renewal sent
    // before the lock, which is earlier than inject + ttl.
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    EXPECT_LE(old->end_ns, inject + std::chrono::nanoseconds(ttl).count()) << c.logs();
    if (const auto next = first_started_after(log, inject)) {
      EXPECT_GT(next->start_ns, unlocked) << "someone started while the table was locked";
    }
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "postgres: lease table locked 2 x ttl", inject, leader->pid,
                              overlaps));
  }
}

TEST(postgres_faults, killed_under_a_leader_stops_the_app_within_validity) {
  postgres_server pg;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_postgres(pg));
    c.start_node(2, on_postgres(pg));
    auto leader = single_leader(c, pg);
    ASSERT_TRUE(leader);
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    pg.kill_and_wait();
    const auto gone = app.wait(ttl + 1s);
    EXPECT_TRUE(gone) << "the app outlived its lease with the store gone\n" << c.logs();
    hold_fault_until(inject + std::chrono::nanoseconds(ttl + 500ms).count());
    const std::int64_t back = mono_now_ns();
    pg.start();
    expect_a_leader_again(c, pg);
    const event_log log = c.log();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    EXPECT_LE(old->end_ns, inject + std::chrono::nanoseconds(ttl).count()) << c.logs();
    if (const auto next = first_started_after(log, inject)) {
      EXPECT_GT(next->start_ns, back) << "someone started while PostgreSQL was down";
    }
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "postgres: SIGKILL, back after ttl + 0.5 s", inject, leader->pid,
                              overlaps));
  }
}

// The primary dies; its streaming replica is promoted. Every candidate's URL
// names both servers with target_session_attrs=read-write, as a deployment
// would, so libpq finds whichever is the primary. The promoted server has
// another timeline: its first acquire holds everyone back for one ttl.
TEST(postgres_faults, primary_killed_and_its_replica_promoted_under_a_leader) {
  for (int round = 1; round <= rounds; ++round) {
    postgres_server primary;
    auto replica = primary.make_replica();
    const std::string url = "host=127.0.0.1,127.0.0.1 port=" + std::to_string(primary.port()) + "," +
                            std::to_string(replica->port()) +
                            " dbname=postgres user=postgres target_session_attrs=read-write";
    node_options o = via_redis_url("redis://127.0.0.1:1");
    o.baton_args = {"--store-kind", "postgres", "--postgres-url", url};
    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, o);
    c.start_node(2, o);
    auto leader = single_leader(c, primary);
    ASSERT_TRUE(leader);

    const std::int64_t inject = mono_now_ns();
    primary.kill_and_wait();
    replica->promote();
    const std::int64_t promoted = mono_now_ns();
    c.start_node(3, o);
    expect_a_leader_again(c, *replica);

    const event_log log = c.log();
    if (const auto next = first_started_after(log, inject)) {
      // Held back one ttl from the promoted server's first acquire.
      EXPECT_GT(next->start_ns, promoted) << c.logs();
      EXPECT_GT(token_value(*next), token_value(*leader)) << "tokens went back across the promotion";
    }
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "postgres: primary SIGKILL + replica promoted", inject,
                              leader->pid, overlaps));
  }
}

}  // namespace
}  // namespace baton::testing::postgres_faults_test
