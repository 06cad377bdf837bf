// lease.failsafe peers on the etcd kind: one etcd member, three daemons, a
// ttl of 2 s (docs/safety.md, "Peer-confirmed leadership";
// docs/stores/etcd.md):
//
// - etcd stopped under the leader for BATON_FAILSAFE_OUTAGE_S seconds (15
//   by default), then started again on its data (the quorum lost and back):
//   the same app and token throughout, the leader running on its two peers'
//   confirmations meanwhile; etcd revives its leases on a restart, so the
//   leader's renewals simply go on.
// - The same, but etcd comes back empty (a snapshot taken before the
//   election began, restored: the revision back to 1, every key gone): the
//   leader resumes its term (F8) with the same token, the standbys fence the
//   election and keep the resumed lease key, and nobody else starts.
// - The leader's daemon killed: a standby clears its term and takes over.
// - Without the mode, the leader's app stops at its renew deadline.
//
// Every round checks the event log for overlaps.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "failsafe_checks.hpp"
#include "failsafe_records.hpp"
#include "scenario.hpp"
#include "support/free_port.hpp"
#include "support/servers/etcd_server.hpp"

namespace baton::testing::failsafe_etcd_faults_test {
namespace {

constexpr auto ttl = 2000ms;

std::chrono::seconds etcd_outage() {
  return failsafe_outage(15s);
}

// The daemons' flags: the etcd kind on `endpoint`, and with `failsafe`
// each candidate's peer port and the secret they share.
struct etcd_peers {
  etcd_peers(fault_cluster& cluster, std::string endpoint)
      : c(cluster), url(std::move(endpoint)), peers(cluster) {}

  node_options options(int index, bool failsafe = true) {
    // The cluster's Redis flag is given but unused: the store kind decides.
    node_options o = via_redis_url("redis://127.0.0.1:1");
    o.baton_args = {"--store-kind", "etcd", "--etcd-endpoints", url};
    if (!failsafe) return o;
    const auto flags = peers.flags(index);
    o.baton_args.insert(o.baton_args.end(), flags.begin(), flags.end());
    return o;
  }

  fault_cluster& c;
  std::string url;
  failsafe_peer_ports peers;
};

// Until etcd's record of the mode lists both standbys of `leader`: what its
// rounds will ask.
bool record_on_etcd_lists_the_standbys(fault_cluster& c, etcd_server& etcd, int leader,
                                       std::chrono::milliseconds timeout) {
  return etcd_record_lists_the_standbys(
      c, [&](const std::string& args) { return etcd.etcdctl(args); }, leader, timeout);
}

// etcd stopped under a leader for the outage, then back with its data or
// (`empty`) as the snapshot taken before the election began.
void etcd_outage_round(bool empty) {
  etcd_server etcd;
  etcd.save_snapshot("empty");
  fault_cluster c(round_name(1), ttl, false);
  etcd_peers peers(c, etcd.client_url());
  for (int n = 1; n <= 3; ++n) c.start_node(n, peers.options(n));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << etcd.log_tail();
  const int l = fault_cluster::index_of(*leader);
  ASSERT_TRUE(record_on_etcd_lists_the_standbys(c, etcd, l, 10s)) << c.logs();
  const std::uint64_t token = token_value(*leader);

  const std::int64_t inject = mono_now_ns();
  etcd.stop();
  const auto outage_ns = std::chrono::nanoseconds(etcd_outage()).count();
  hold_fault_until(inject + outage_ns / 2);
  expect_on_confirmations(c, l);
  hold_fault_until(inject + outage_ns);
  // Counted from the restart's beginning: the leader may be back in etcd
  // before the helper's poll of etcd's health says it is up.
  const std::int64_t restarting = mono_now_ns();
  if (empty) {
    etcd.restore_snapshot("empty");
  } else {
    etcd.start();
  }
  const double up_ms = ms_between(restarting, mono_now_ns());

  // Back to the store: a resume when etcd lost the lease, renewals when it
  // kept it. Either way the leader's status leaves its confirmations.
  double store_again_ms = -1;
  for (int i = 0; i < 200; ++i) {
    if (auto s = c.status(l, 1s);
        s && (*s)["is_leader"].get<bool>() && !(*s)["failsafe"]["on_confirmations"].get<bool>()) {
      store_again_ms = ms_between(restarting, mono_now_ns());
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_GE(store_again_ms, 0) << "the leader never renewed or resumed in etcd\n" << c.logs();
  if (empty) {
    EXPECT_TRUE(c.node(l).wait_for_log("resumed term " + std::to_string(token), 10s))
        << c.logs() << etcd.log_tail();
  }
  expect_same_app_throughout(c, l, *leader, token, 15s);
  const auto overlaps = check_no_overlap(c);
  auto record =
      round_record(c,
                   "etcd: stopped " + std::to_string(etcd_outage().count()) + " s, " +
                       (empty ? "back empty" : "back with its data") + " (failsafe peers)",
                   inject, std::nullopt, overlaps);
  record.kept_working = true;
  record_fault(record);
  const bool resumed = c.log_of(l).find("resumed term") != std::string::npos;
  std::printf(
      "failsafe on etcd: outage %lld s, back %s (etcd up %.0f ms after its restart "
      "began); the leader %s and left its confirmations within %.0f ms of that\n",
      static_cast<long long>(etcd_outage().count()), empty ? "empty" : "with its data", up_ms,
      resumed ? "resumed its term" : "renewed its lease", store_again_ms);
}

TEST(failsafe_etcd_faults, etcd_stopped_and_back_with_its_data_the_leader_keeps_its_app) {
  etcd_outage_round(false);
}

TEST(failsafe_etcd_faults, etcd_stopped_and_back_empty_the_leader_resumes_its_term) {
  etcd_outage_round(true);
}

// The leader's daemon and keeper killed: its term stays in the record (no
// release deleted it), so the standbys meet the failsafe hold; a listed
// one without a promise clears the term from its own state (F6) and takes
// over once etcd expired the lease (no standby revokes a lease whose term
// the record holds).
TEST(failsafe_etcd_faults, the_leader_crashes_a_standby_clears_its_term_and_takes_over) {
  etcd_server etcd;
  fault_cluster c(round_name(1), ttl, false);
  etcd_peers peers(c, etcd.client_url());
  for (int n = 1; n <= 3; ++n) c.start_node(n, peers.options(n));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << etcd.log_tail();
  const int l = fault_cluster::index_of(*leader);
  ASSERT_TRUE(record_on_etcd_lists_the_standbys(c, etcd, l, 10s)) << c.logs();

  const std::int64_t inject = mono_now_ns();
  c.node(l).signal_group(SIGKILL);
  event_log log(c.events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 15s)) << c.logs();
  const auto next = first_started_after(log, inject);
  EXPECT_GT(token_value(*next), token_value(*leader));
  const int taker = fault_cluster::index_of(*next);
  EXPECT_NE(c.log_of(taker).find("failsafe hold"), std::string::npos) << c.log_of(taker);
  std::printf("failsafe on etcd: the leader killed, %s took over %.0f ms later\n",
              next->name.c_str(), ms_between(inject, next->start_ns));
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, "etcd: daemon SIGKILL under a failsafe leader (failsafe peers)",
                            inject, leader->pid, overlaps));
}

TEST(failsafe_etcd_faults, without_the_mode_the_leader_stops_at_its_renew_deadline) {
  etcd_server etcd;
  fault_cluster c(round_name(1), ttl, false);
  etcd_peers peers(c, etcd.client_url());
  for (int n = 1; n <= 3; ++n) c.start_node(n, peers.options(n, false));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << etcd.log_tail();
  exit_watch app(leader->pid);

  const std::int64_t inject = mono_now_ns();
  etcd.stop();
  const auto gone = app.wait(ttl + 2s);
  ASSERT_TRUE(gone) << "the app outlived its lease without the mode\n" << c.logs();
  // Stopped within the lease's validity, counted from the last renewal
  // before the outage.
  EXPECT_LE(*gone, inject + std::chrono::nanoseconds(ttl).count()) << c.logs();
  std::printf("without failsafe: the app stopped %.0f ms after etcd did\n",
              ms_between(inject, *gone));
  hold_fault_until(inject + std::chrono::nanoseconds(ttl + 1s).count());
  etcd.start();
  event_log log(c.events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 30s)) << c.logs() << etcd.log_tail();
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, "etcd: stopped 3 s (failsafe off)", inject, leader->pid, overlaps));
}

}  // namespace
}  // namespace baton::testing::failsafe_etcd_faults_test
