// lease.failsafe peers on the zookeeper kind, three candidates on a
// standalone ZooKeeper, a ttl of 2 s (the session timeout is the ttl):
//
// - ZooKeeper stopped under the leader for BATON_FAILSAFE_OUTAGE_S seconds
//   (15 by default), longer than the session timeout, so that every
//   candidate gives its session up, then started again with its data: with
//   the mode, the same app and token throughout, and the leader resumes its
//   term on a new session (its lease node, an ephemeral of the old one,
//   created again); without it, the app stops at the renew deadline.
//
// Every round checks the event log for overlaps. docs/safety.md and
// docs/stores/zookeeper.md report what it measured.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "failsafe_checks.hpp"
#include "failsafe_records.hpp"
#include "scenario.hpp"
#include "support/free_port.hpp"
#include "support/servers/zookeeper_server.hpp"

namespace baton::testing::failsafe_zookeeper_faults_test {
namespace {

constexpr auto zk_fs_ttl = 2000ms;

std::chrono::seconds zk_outage() {
  return failsafe_outage(15s);
}

// Each candidate's peer port and the secret they share, on ZooKeeper.
struct zk_peer_ports {
  zk_peer_ports(fault_cluster& cluster, std::string zk)
      : c(cluster), servers(std::move(zk)), peers(cluster) {}

  node_options options(int index, bool failsafe = true) {
    node_options o = on_store({"--store-kind", "zookeeper", "--zookeeper-servers", servers});
    if (!failsafe) return o;
    o.baton_args = peers.flags(index);
    return o;
  }

  fault_cluster& c;
  std::string servers;
  failsafe_peer_ports peers;
};

zookeeper_server_options zk_fs_server_options() {
  zookeeper_server_options o;
  // Sessions of the ttl are granted (the default minimum is 400 ms).
  return o;
}

TEST(failsafe_zookeeper_faults, stopped_past_the_session_timeout_the_leader_keeps_its_app) {
  zookeeper_server zk(zk_fs_server_options());
  fault_cluster c(round_name(1), zk_fs_ttl, false);
  zk_peer_ports peers(c, zk.address());
  for (int n = 1; n <= 3; ++n) c.start_node(n, peers.options(n));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << zk.log_tail();
  const int l = fault_cluster::index_of(*leader);
  ASSERT_TRUE(zk_record_lists_the_standbys(c, zk.address(), l, 10s)) << c.logs();
  const std::uint64_t token = token_value(*leader);

  const std::int64_t inject = mono_now_ns();
  zk.stop(true);
  // Half-way: past the session timeout, the leader runs on its peers'
  // confirmations.
  hold_fault_until(inject + std::chrono::nanoseconds(zk_outage()).count() / 2);
  expect_on_confirmations(c, l);
  hold_fault_until(inject + std::chrono::nanoseconds(zk_outage()).count());
  zk.start();  // with its data: the old sessions come back for a timeout
  const std::int64_t back = mono_now_ns();

  ASSERT_TRUE(c.node(l).wait_for_log("resumed term " + std::to_string(token), 15s))
      << c.logs() << "\n"
      << zk.log_tail();
  const double resumed_ms = ms_between(back, mono_now_ns());
  // The standbys find the lease held by the leader again, past the old
  // sessions' expiry (their nodes gone with them).
  expect_same_app_throughout(c, l, *leader, token, 15s);
  const auto overlaps = check_no_overlap(c);
  auto record = round_record(c,
                             "zookeeper: stopped " + std::to_string(zk_outage().count()) +
                                 " s past the session timeout, started with its data "
                                 "(failsafe peers)",
                             inject, std::nullopt, overlaps);
  record.kept_working = true;
  record_fault(record);
  std::printf(
      "failsafe zookeeper: outage %lld s, the leader resumed within %.0f ms of "
      "ZooKeeper being back\n",
      static_cast<long long>(zk_outage().count()), resumed_ms);
  // The leader's own words on the outage, for the figures the docs report.
  print_failsafe_lines(c, l);
}

TEST(failsafe_zookeeper_faults, without_the_mode_the_leader_stops_at_its_renew_deadline) {
  zookeeper_server zk(zk_fs_server_options());
  fault_cluster c(round_name(1), zk_fs_ttl, false);
  zk_peer_ports stores(c, zk.address());
  for (int n = 1; n <= 3; ++n) c.start_node(n, stores.options(n, false));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << zk.log_tail();
  exit_watch app(leader->pid);

  const std::int64_t inject = mono_now_ns();
  zk.stop(true);
  const auto gone = app.wait(zk_fs_ttl + 2s);
  ASSERT_TRUE(gone) << "the app outlived its lease without the mode\n" << c.logs();
  // Stopped within the lease's validity, counted from the last renewal
  // before the outage.
  EXPECT_LE(*gone, inject + std::chrono::nanoseconds(zk_fs_ttl).count()) << c.logs();
  std::printf("failsafe zookeeper off: the app stopped %.0f ms after ZooKeeper\n",
              ms_between(inject, *gone));
  hold_fault_until(inject + std::chrono::nanoseconds(zk_fs_ttl + 1s).count());
  zk.start();
  event_log log(c.events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 30s)) << c.logs() << "\n" << zk.log_tail();
  const auto overlaps = check_no_overlap(c);
  record_fault(
      round_record(c, "zookeeper: stopped 3 s (failsafe off)", inject, leader->pid, overlaps));
}

}  // namespace
}  // namespace baton::testing::failsafe_zookeeper_faults_test
