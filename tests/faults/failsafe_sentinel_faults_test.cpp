// lease.failsafe peers on a Redis Sentinel group with one replica and
// redis.replica_ack all, three candidates, a ttl of 2 s: the master
// SIGKILLed under the leader. The sentinels promote the replica, which has
// no replica of its own, so every renewal there is refused for want of an
// acknowledgement (no quorum, as the store cannot vouch for it) and every
// grant too: without the mode nobody leads until the old master is back
// (sentinel_faults_test.cpp). With it the leader runs on its peers'
// confirmations, keeps its app and token, and renews again once the old
// master is back as the new master's replica.
#include <string>
#include <vector>

#include "failsafe_checks.hpp"
#include "scenario.hpp"
#include "support/servers/redis_sentinel_group.hpp"

namespace baton::testing::failsafe_sentinel_faults_test {
namespace {

constexpr auto sentinel_fs_ttl = 2000ms;

node_options sentinel_candidate(const redis_sentinel_group& g, failsafe_peer_ports& peers,
                                int index) {
  node_options o;
  o.redis_url = "redis://127.0.0.1:" + std::to_string(g.initial_master_port());  // unused
  std::string sentinels;
  for (const auto& u : g.sentinel_urls()) sentinels += (sentinels.empty() ? "" : ",") + u;
  o.baton_args = {"--store-kind",           "sentinel",      "--sentinel-addresses", sentinels,
                  "--sentinel-master-name", g.master_name(), "--redis-replica-ack",  "all"};
  const auto flags = peers.flags(index);
  o.baton_args.insert(o.baton_args.end(), flags.begin(), flags.end());
  return o;
}

TEST(failsafe_sentinel_faults,
     master_killed_with_ack_all_and_one_replica_the_leader_keeps_its_app) {
  fault_cluster c(round_name(1), sentinel_fs_ttl, false);
  redis_sentinel_group g{redis_sentinel_group_options{}};
  // The election has run before: its counter is on the master.
  g.command(g.initial_master_port(), {"SET", "baton:{" + c.election() + "}:token", "1", "NX"});
  failsafe_peer_ports peers(c);
  for (int n = 1; n <= 3; ++n) c.start_node(n, sentinel_candidate(g, peers, n));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << c.logs();
  const int l = fault_cluster::index_of(*leader);
  ASSERT_TRUE(record_lists_the_standbys(
      l,
      [&] {
        try {
          const auto got =
              g.command(g.master_port(), {"GET", "baton:{" + c.election() + "}:failsafe"});
          return got.empty() ? std::string() : got[0];
        } catch (const std::exception&) {
          return std::string();
        }
      },
      [](const std::string& node) { return "\n" + node + " "; }, 10s))
      << c.logs();
  const std::uint64_t token = token_value(*leader);

  const std::int64_t inject = mono_now_ns();
  const auto old_master = g.kill_master();
  g.wait_for_failover(old_master, 30s);
  // Past the renew deadline of the last renewal on the old master.
  hold_fault_until(inject + std::chrono::nanoseconds(2 * sentinel_fs_ttl).count());
  expect_on_confirmations(c, l);
  EXPECT_FALSE(first_started_after(c.log(), inject))
      << "a leader started on a master without a replica\n"
      << c.logs();
  g.restart_node(old_master, redis_sentinel_group::restart_role::replica_of_current_master);
  const std::int64_t back = mono_now_ns();
  ASSERT_TRUE(wait_until(
      [&] {
        const auto s = c.status(l, 1s);
        return s && (*s)["is_leader"].get<bool>() &&
               !(*s)["failsafe"]["on_confirmations"].get<bool>();
      },
      20s, 50ms))
      << "the leader never renewed on the new master\n"
      << c.logs() << g.log_tails();
  const double again_ms = ms_between(back, mono_now_ns());
  expect_same_app_throughout(c, l, *leader, token, 15s);
  const auto overlaps = check_no_overlap(c);
  auto record =
      round_record(c, "sentinel: master SIGKILLed, replica_ack all, 1 replica (failsafe peers)",
                   inject, std::nullopt, overlaps);
  record.kept_working = true;
  record_fault(record);
  std::printf(
      "failsafe on sentinel (ack all, 1 replica): the leader left its confirmations "
      "%.0f ms after the old master was back as a replica\n",
      again_ms);
}

}  // namespace
}  // namespace baton::testing::failsafe_sentinel_faults_test
