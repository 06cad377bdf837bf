// lease.failsafe peers on the postgres kind, three candidates, a ttl of 2 s
// (docs/safety.md, "Peer-confirmed leadership"; docs/stores/postgres.md):
//
// - PostgreSQL stopped under the leader (`pg_ctl stop -m immediate`: no
//   checkpoint) for BATON_FAILSAFE_OUTAGE_S seconds (15 by default), then
//   started again on the same data: with the mode, the same app and token
//   throughout, the leader runs on its peers' confirmations and resumes its
//   term in the lease row (which lapsed meanwhile); without it, today's
//   behaviour: the app stops at the renew deadline.
// - The leader cut from PostgreSQL (a proxy that resets its connections)
//   while the standbys reach it: the lease row lapses, the standbys'
//   acquires meet a failsafe hold (F6) and none starts, the leader runs on
//   confirmations, and resumes when the link is back.
//
// Every round checks the event log for overlaps.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <vector>

#include "failsafe_checks.hpp"
#include "scenario.hpp"
#include "support/fault_proxy.hpp"
#include "support/free_port.hpp"
#include "support/servers/postgres_server.hpp"

namespace baton::testing::failsafe_postgres_faults_test {
namespace {

constexpr auto ttl = 2000ms;

std::chrono::seconds pg_outage() {
  return failsafe_outage(15s);
}

// A candidate on `pg`; with the mode, on its own peer port and the shared
// secret. (The cluster's Redis flag is given but unused: the kind decides.)
struct pg_candidates {
  pg_candidates(fault_cluster& cluster, const postgres_server& server)
      : c(cluster), pg(server), peers(cluster) {}

  /// With `via` (a proxy's port, 0 = none) the candidate reaches the server
  /// through it.
  node_options options(int index, bool failsafe, unsigned short via = 0) {
    node_options o = via_redis_url("redis://127.0.0.1:1");
    const std::string url =
        via == 0 ? pg.conninfo()
                 : "host=127.0.0.1 port=" + std::to_string(via) + " dbname=postgres user=postgres";
    o.baton_args = {"--store-kind", "postgres", "--postgres-url", url};
    if (!failsafe) return o;
    const auto flags = peers.flags(index);
    o.baton_args.insert(o.baton_args.end(), flags.begin(), flags.end());
    return o;
  }

  fault_cluster& c;
  const postgres_server& pg;
  failsafe_peer_ports peers;
};

// Until the record in the lease row lists both standbys of `leader` (the
// leader's renewals carry the candidates it listed): whom its rounds ask.
bool row_lists_the_standbys(fault_cluster& c, const postgres_server& pg, int leader,
                            std::chrono::milliseconds timeout) {
  return record_lists_the_standbys(
      leader,
      [&] {
        const auto rows = pg.query(
            "SELECT coalesce((failsafe->'peers')::text, '') FROM baton_lease WHERE election = '" +
            c.election() + "'");
        return rows.empty() ? std::string() : rows[0][0];
      },
      [](const std::string& node) { return "\"" + node + "\""; }, timeout);
}

TEST(failsafe_postgres_faults, postgres_stopped_and_started_the_leader_keeps_its_app_and_token) {
  postgres_server pg;
  fault_cluster c(round_name(1), ttl, false);
  pg_candidates peers(c, pg);
  for (int n = 1; n <= 3; ++n) c.start_node(n, peers.options(n, true));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << c.logs();
  const int l = fault_cluster::index_of(*leader);
  ASSERT_TRUE(row_lists_the_standbys(c, pg, l, 10s)) << c.logs();
  const std::uint64_t token = token_value(*leader);

  const std::int64_t inject = mono_now_ns();
  pg.stop_immediate();
  // Half-way: the leader runs on its peers' confirmations.
  hold_fault_until(inject + std::chrono::nanoseconds(pg_outage()).count() / 2);
  expect_on_confirmations(c, l);
  hold_fault_until(inject + std::chrono::nanoseconds(pg_outage()).count());
  pg.start();  // the same data directory, after crash recovery
  const std::int64_t back = mono_now_ns();

  // The leader resumes its term: the lease row lapsed during the outage.
  ASSERT_TRUE(c.node(l).wait_for_log("resumed term " + std::to_string(token), 10s))
      << c.logs() << "\npostgres log:\n"
      << pg.log_tail();
  const double resumed_ms = ms_between(back, mono_now_ns());
  expect_same_app_throughout(c, l, *leader, token, 10s);
  EXPECT_EQ(pg.query("SELECT token::text FROM baton_lease WHERE election = '" + c.election() + "'")
                .at(0)
                .at(0),
            std::to_string(token))
      << "the row's token is the term's";
  const auto overlaps = check_no_overlap(c);
  auto record =
      round_record(c,
                   "postgres: stopped (immediate) " + std::to_string(pg_outage().count()) +
                       " s, started on the same data (failsafe peers)",
                   inject, std::nullopt, overlaps);
  record.kept_working = true;
  record_fault(record);
  std::printf(
      "failsafe on postgres: outage %lld s, the leader resumed within %.0f ms of "
      "PostgreSQL being back\n",
      static_cast<long long>(pg_outage().count()), resumed_ms);
}

TEST(failsafe_postgres_faults, without_the_mode_the_leader_stops_at_its_renew_deadline) {
  postgres_server pg;
  fault_cluster c(round_name(1), ttl, false);
  pg_candidates nodes(c, pg);
  for (int n = 1; n <= 3; ++n) c.start_node(n, nodes.options(n, false));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << c.logs();
  exit_watch app(leader->pid);

  const std::int64_t inject = mono_now_ns();
  pg.stop_immediate();
  const auto gone = app.wait(ttl + 2s);
  ASSERT_TRUE(gone) << "the app outlived its lease without the mode\n" << c.logs();
  // Stopped within the lease's validity, counted from the last renewal
  // before the outage.
  EXPECT_LE(*gone, inject + std::chrono::nanoseconds(ttl).count()) << c.logs();
  std::printf("failsafe off on postgres: the app stopped %.0f ms after PostgreSQL did\n",
              ms_between(inject, *gone));
  hold_fault_until(inject + std::chrono::nanoseconds(ttl + 1s).count());
  pg.start();
  event_log log(c.events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s)) << c.logs();
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, "postgres: stopped (immediate) 3 s (failsafe off)", inject,
                            leader->pid, overlaps));
}

// The leader's link to PostgreSQL cut for 10 s while the standbys reach it.
TEST(failsafe_postgres_faults, the_leader_cut_from_postgres_alone_keeps_its_app_and_nobody_takes) {
  postgres_server pg;
  fault_cluster c(round_name(1), ttl, false);
  pg_candidates peers(c, pg);
  std::vector<std::unique_ptr<fault_proxy>> links;
  for (int n = 1; n <= 3; ++n) {
    links.push_back(std::make_unique<fault_proxy>(pg.port()));
    c.start_node(n, peers.options(n, true, links.back()->port()));
  }
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << c.logs();
  const int l = fault_cluster::index_of(*leader);
  ASSERT_TRUE(row_lists_the_standbys(c, pg, l, 10s)) << c.logs();
  const std::uint64_t token = token_value(*leader);

  // Only the leader's link: the standbys reach PostgreSQL all along.
  const std::int64_t inject = mono_now_ns();
  links[static_cast<std::size_t>(l - 1)]->reset();
  const auto partition = 10s;
  // The row lapses within a ttl; the standbys' next acquires meet the
  // record (F6).
  for (int n = 1; n <= 3; ++n) {
    if (n == l) continue;
    EXPECT_TRUE(c.node(n).wait_for_log("failsafe hold", partition)) << c.log_of(n);
  }
  const double held_ms = ms_between(inject, mono_now_ns());
  EXPECT_EQ(pg.query("SELECT expires_at <= clock_timestamp() FROM baton_lease WHERE election = '" +
                     c.election() + "'")
                .at(0)
                .at(0),
            "t")
      << "the lease row should have lapsed";
  hold_fault_until(inject + std::chrono::nanoseconds(partition).count());
  const auto cut = c.status(l);
  ASSERT_TRUE(cut);
  EXPECT_TRUE((*cut)["is_leader"].get<bool>()) << cut->dump();
  EXPECT_TRUE((*cut)["failsafe"]["on_confirmations"].get<bool>()) << cut->dump();
  links[static_cast<std::size_t>(l - 1)]->pass();
  const std::int64_t back = mono_now_ns();

  ASSERT_TRUE(c.node(l).wait_for_log("resumed term " + std::to_string(token), 10s)) << c.logs();
  const double resumed_ms = ms_between(back, mono_now_ns());
  event_log log(c.events());
  log.refresh();
  EXPECT_EQ(log.start_count(), 1u) << "a standby started while the leader ran\n" << c.logs();
  const auto live = log.live_workers();
  ASSERT_EQ(live.size(), 1u) << c.logs();
  EXPECT_EQ(live[0].pid, leader->pid);
  EXPECT_EQ(token_value(live[0]), token);
  const auto overlaps = check_no_overlap(c);
  auto record = round_record(c, "postgres: leader cut 10 s, standbys reach it (failsafe peers)",
                             inject, std::nullopt, overlaps);
  record.kept_working = true;
  record_fault(record);
  std::printf(
      "failsafe on postgres, leader cut: both standbys met the hold %.0f ms after the cut; "
      "the leader resumed within %.0f ms of its link being back\n",
      held_ms, resumed_ms);
}

}  // namespace
}  // namespace baton::testing::failsafe_postgres_faults_test
