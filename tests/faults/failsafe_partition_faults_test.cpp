// lease.failsafe peers with the leader cut from the store alone, a partition
// and not an outage (docs/safety.md, "The partitions walked through"): one
// etcd member or one ZooKeeper server, three daemons, a ttl of 2 s, in a
// private network namespace. Every daemon dials the store through a port of
// its own (redirected_links.hpp); an iptables DROP on the leader's cuts it
// alone for 10 s, while the standbys reach the store. The leader's lease
// ends in the store (etcd expires it; ZooKeeper expires its session and so
// the lease node), the standbys' acquires meet the failsafe hold (F6) and
// keep to their promises, nobody else starts, the leader runs on its two
// peers' confirmations, and it resumes its term with the same token once
// the rule is removed (how long after is printed).
//
// Needs root for the namespace and iptables; skipped, with the reason, where
// either is not available. Every round checks the event log for overlaps.
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "failsafe_checks.hpp"
#include "failsafe_records.hpp"
#include "redirected_links.hpp"
#include "scenario.hpp"
#include "support/private_network.hpp"
#include "support/servers/etcd_server.hpp"
#include "support/servers/zookeeper_server.hpp"

namespace baton::testing::failsafe_partition_faults_test {
namespace {

constexpr auto cut_ttl = 2000ms;
constexpr auto cut_length = 10s;

// What the round needs of the store: its kind, its port, the daemons' flags
// for a port they dial, and whether the record lists the leader's standbys.
struct cut_store {
  std::string kind;
  unsigned short port = 0;
  std::function<std::vector<std::string>(unsigned short dialed)> flags;
  std::function<bool(fault_cluster&, int leader)> record_lists_the_standbys;
  std::function<std::string()> log_tail;
};

// The round itself, the namespace entered and the store started in it by
// the caller.
void cut_the_leader_from(const private_network& net, const cut_store& store) {
  fault_cluster c(round_name(1), cut_ttl, false);
  failsafe_peer_ports peers(c);
  for (int n = 1; n <= 3; ++n) {
    node_options o = on_store(store.flags(redirect_link(net, store.port, n)));
    o.baton_args = peers.flags(n);
    c.start_node(n, o);
  }
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << store.log_tail();
  const int l = fault_cluster::index_of(*leader);
  ASSERT_TRUE(store.record_lists_the_standbys(c, l)) << c.logs();
  const std::uint64_t token = token_value(*leader);

  const auto rule = link_cut(store.port, l, false);
  const std::int64_t inject = mono_now_ns();
  net.must_iptables(with_verb("-A", rule));
  // Each standby's first failsafe hold (F6), as the figures count it: once
  // the leader's lease has ended in the store. Looked for in turn, so the
  // second one's is an upper bound.
  std::string held_after;
  for (int n = 1; n <= 3; ++n) {
    if (n == l || !c.node(n).wait_for_log("failsafe hold", cut_length)) continue;
    held_after += (held_after.empty() ? "" : ", ") +
                  std::to_string(static_cast<long long>(ms_between(inject, mono_now_ns())));
  }
  expect_held_on_confirmations(c, l, inject, cut_length);
  net.must_iptables(with_verb("-D", rule));
  const std::int64_t healed = mono_now_ns();

  // Back in the store: the leader's status leaves its confirmations
  // (polled every 50 ms), having resumed its term.
  double back_ms = -1;
  for (int i = 0; i < 400; ++i) {
    if (auto s = c.status(l, 1s); s && (*s)["is_leader"].get<bool>() &&
                                  !(*s)["failsafe"]["on_confirmations"].get<bool>()) {
      back_ms = ms_between(healed, mono_now_ns());
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_GE(back_ms, 0) << "the leader never resumed its term\n" << c.logs() << store.log_tail();
  expect_resumed_alone(c, l, *leader, token);
  expect_same_app_throughout(c, l, *leader, token, 15s);
  const auto overlaps = check_no_overlap(c);
  auto record = round_record(c, store.kind + ": leader partitioned from it 10 s (failsafe peers)",
                             inject, std::nullopt, overlaps);
  record.kept_working = true;
  record_fault(record);
  std::printf(
      "failsafe on %s, the leader partitioned from it %lld s: the standbys met the failsafe hold "
      "%s ms after the cut; nobody else started; the leader resumed its term %llu within %.0f ms "
      "of the link being back\n",
      store.kind.c_str(), static_cast<long long>(cut_length.count()), held_after.c_str(),
      static_cast<unsigned long long>(token), back_ms);
  print_failsafe_lines(c, l);
}

TEST(failsafe_partition_faults, the_leader_cut_from_etcd_alone_keeps_its_app_and_resumes) {
  std::optional<private_network> net;
  if (const auto why = enter_private_network(net); !why.empty()) GTEST_SKIP() << why;
  etcd_server etcd;
  cut_store store;
  store.kind = "etcd";
  store.port = etcd.client_port();
  store.flags = [](unsigned short dialed) -> std::vector<std::string> {
    return {"--store-kind", "etcd", "--etcd-endpoints",
            "http://127.0.0.1:" + std::to_string(dialed)};
  };
  store.record_lists_the_standbys = [&](fault_cluster& c, int leader) {
    return etcd_record_lists_the_standbys(
        c, [&](const std::string& args) { return etcd.etcdctl(args); }, leader, 10s);
  };
  store.log_tail = [&] { return etcd.log_tail(); };
  cut_the_leader_from(*net, store);
}

TEST(failsafe_partition_faults, the_leader_cut_from_zookeeper_alone_keeps_its_app_and_resumes) {
  std::optional<private_network> net;
  if (const auto why = enter_private_network(net); !why.empty()) GTEST_SKIP() << why;
  zookeeper_server zk;
  cut_store store;
  store.kind = "zookeeper";
  store.port = zk.port();
  store.flags = [](unsigned short dialed) -> std::vector<std::string> {
    return {"--store-kind", "zookeeper", "--zookeeper-servers",
            "127.0.0.1:" + std::to_string(dialed)};
  };
  store.record_lists_the_standbys = [&](fault_cluster& c, int leader) {
    return zk_record_lists_the_standbys(c, zk.address(), leader, 10s);
  };
  store.log_tail = [&] { return zk.log_tail(); };
  cut_the_leader_from(*net, store);
}

}  // namespace
}  // namespace baton::testing::failsafe_partition_faults_test
