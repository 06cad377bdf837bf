// Faults of PostgreSQL while a leader works on the postgres store: the server
// restarted in immediate mode, every baton session terminated by an operator,
// the lease table locked by another session for two ttls (slow statements),
// and the server killed. One server per scenario, a fresh election per round.
#include <signal.h>

#include "scenario.hpp"
#include "support/postgres_server.hpp"

namespace baton::testing {
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

TEST(postgres_faults, restarted_in_immediate_mode_under_a_leader) {
  postgres_server pg;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_postgres(pg));
    c.start_node(2, on_postgres(pg));
    auto leader = single_leader(c, pg);
    ASSERT_TRUE(leader);

    const std::int64_t inject = mono_now_ns();
    pg.restart_immediate();
    // A candidate that comes up now meets the changed server first.
    c.start_node(3, on_postgres(pg));
    expect_a_leader_again(c, pg);

    const event_log log = c.log();
    if (const auto next = first_started_after(log, inject)) {
      EXPECT_GT(token_value(*next), token_value(*leader)) << c.logs();
    }
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "postgres: restart (immediate mode)", inject, leader->pid, overlaps));
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
}  // namespace baton::testing
