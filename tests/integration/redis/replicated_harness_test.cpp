// The Sentinel and Cluster harnesses (support/servers/redis_sentinel_group.hpp,
// support/servers/redis_cluster.hpp) against real redis-server processes: they come
// up ready for a failover, and the fault operations the store tests build on
// do what they claim: a killed master is replaced, a moved slot changes
// owner, a killed slot master's replica takes over, and a TLS cluster works
// over TLS. Nothing of baton runs here; these tests guard the harnesses.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "support/servers/redis_cluster.hpp"
#include "support/servers/redis_sentinel_group.hpp"
#include "support/test_pki.hpp"

namespace {

using baton::testing::redis_cluster;
using baton::testing::redis_cluster_options;
using baton::testing::redis_sentinel_group;
using baton::testing::redis_sentinel_group_options;
using namespace std::chrono_literals;

// Seconds since `start`, for the test log: failover times are the figure a
// reader of these tests wants.
double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(replicated_harness, sentinel_group_fails_over_to_the_replica) {
  const auto start = std::chrono::steady_clock::now();
  redis_sentinel_group group;
  const double startup_s = since(start);
  ASSERT_EQ(group.sentinel_urls().size(), 3u);
  EXPECT_EQ(group.sentinel_urls().front(),
            "redis://127.0.0.1:" + std::to_string(group.sentinel_ports().front()));
  const auto first = group.master_port();
  EXPECT_EQ(first, group.initial_master_port());
  EXPECT_EQ(group.role_of(first), "master");
  for (std::size_t i = 0; i < group.sentinel_count(); ++i)
    EXPECT_EQ(group.master_port_from(i), first);

  group.command(first, {"SET", "k", "v"});
  const auto replica = group.data_ports().at(1);
  EXPECT_EQ(group.role_of(replica), "slave");
  group.wait_for_replication(first);

  const auto killed_at = std::chrono::steady_clock::now();
  EXPECT_EQ(group.kill_master(), first);
  const auto promoted = group.wait_for_failover(first, 30s);
  const double failover_s = since(killed_at);
  EXPECT_EQ(promoted, replica);
  EXPECT_EQ(group.role_of(promoted), "master");
  EXPECT_EQ(group.wait_until_sentinels_agree(), promoted);
  // The write reached the replica before the kill.
  EXPECT_EQ(group.command(promoted, {"GET", "k"}), std::vector<std::string>{"v"});
  std::printf("sentinel: up in %.2f s, failover in %.2f s\n", startup_s, failover_s);

  // The old master comes back as a replica of the new one, and the
  // deployment is ready for another failover.
  group.restart_node(first, redis_sentinel_group::restart_role::replica_of_current_master);
  EXPECT_EQ(group.role_of(first), "slave");
  group.wait_until_ready(20s);
}

TEST(replicated_harness, sentinels_can_be_killed_paused_and_restarted) {
  redis_sentinel_group_options o;
  o.requirepass = "data-secret";
  o.sentinel_requirepass = "sentinel-secret";
  redis_sentinel_group group(o);
  const auto master = group.master_port();
  // The harness authenticates to both kinds of process.
  EXPECT_EQ(group.command(group.sentinel_ports().front(), {"PING"}),
            std::vector<std::string>{"PONG"});
  EXPECT_EQ(group.command(master, {"PING"}), std::vector<std::string>{"PONG"});

  group.pause_sentinel(0);
  EXPECT_TRUE(group.sentinel(0).paused());
  EXPECT_EQ(group.master_port(), master);  // asks the next one
  group.resume_sentinel(0);
  EXPECT_EQ(group.master_port_from(0), master);

  group.kill_all_sentinels();
  EXPECT_THROW(group.master_port(), std::runtime_error);
  EXPECT_EQ(group.sentinel(1).pid(), -1);
  group.start_all_sentinels();  // same ports, remembered config
  EXPECT_EQ(group.master_port(), master);
  for (std::size_t i = 0; i < group.sentinel_count(); ++i) EXPECT_TRUE(group.sentinel(i).running());

  // The restarted sentinels still fail over, through the passwords
  // (sentinel auth-pass to the data nodes, masterauth between them).
  const auto killed = group.kill_master();
  const auto promoted = group.wait_for_failover(killed, 30s);
  EXPECT_NE(promoted, killed);
  EXPECT_EQ(group.role_of(promoted), "master");
}

TEST(replicated_harness, cluster_finds_moves_and_fails_over_a_slot) {
  const auto start = std::chrono::steady_clock::now();
  redis_cluster cluster;
  const double startup_s = since(start);
  ASSERT_EQ(cluster.ports().size(), 6u);
  ASSERT_EQ(cluster.seed_urls().size(), 6u);
  EXPECT_EQ(cluster.master_ports().size(), 3u);

  const std::string key = "baton:lease";
  const int slot = cluster.key_slot(key);
  EXPECT_EQ(slot, cluster.key_slot("{baton:lease}other"));
  const auto owner = cluster.master_port_for_slot(slot);
  cluster.command(owner, {"SET", key, "holder"});
  const auto replicas = cluster.replica_ports_of(owner);
  ASSERT_EQ(replicas.size(), 1u);
  EXPECT_EQ(cluster.node_id(owner), cluster.command(owner, {"CLUSTER", "MYID"}).front());

  // Moved in two steps, with the key still on the source in between.
  auto masters = cluster.master_ports();
  const auto target =
      *std::find_if(masters.begin(), masters.end(), [&](auto p) { return p != owner; });
  cluster.begin_migration(slot, target);
  EXPECT_EQ(cluster.master_port_for_slot(slot), owner);
  EXPECT_EQ(cluster.command(owner, {"GET", key}), std::vector<std::string>{"holder"});
  EXPECT_EQ(cluster.move_keys(slot), 1u);
  const auto move_started = std::chrono::steady_clock::now();
  cluster.finish_migration(slot);
  const double migrate_s = since(move_started);
  EXPECT_EQ(cluster.master_port_for_slot(slot), target);
  EXPECT_EQ(cluster.command(target, {"GET", key}), std::vector<std::string>{"holder"});
  EXPECT_EQ(cluster.command(owner, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)}),
            std::vector<std::string>{"0"});

  // migrate_slot in one call, back again.
  cluster.migrate_slot(slot, owner);
  EXPECT_EQ(cluster.master_port_for_slot(slot), owner);

  // Let the write reach the replica, then kill its master.
  cluster.wait_for_replication(owner);
  const auto replica = cluster.replica_ports_of(owner).front();
  const auto killed_at = std::chrono::steady_clock::now();
  const auto promoted = cluster.failover_slot_master(slot, 30s);
  const double failover_s = since(killed_at);
  EXPECT_EQ(promoted, replica);
  EXPECT_FALSE(cluster.node(owner).running());
  EXPECT_EQ(cluster.master_port_for_slot(slot), promoted);
  EXPECT_EQ(cluster.command(promoted, {"GET", key}), std::vector<std::string>{"holder"});
  EXPECT_EQ(cluster.node_id(owner).size(), 40u);  // still known once killed

  // The killed master rejoins as the replica of its successor.
  cluster.restart_node(owner);
  EXPECT_EQ(cluster.replica_ports_of(promoted), std::vector<unsigned short>{owner});

  // And a graceful failover hands the slot back.
  cluster.manual_failover(owner);
  EXPECT_EQ(cluster.master_port_for_slot(slot), owner);
  std::printf("cluster: up in %.2f s, slot move %.2f s, failover %.2f s\n", startup_s, migrate_s,
              failover_s);
}

TEST(replicated_harness, tls_cluster_serves_and_migrates_over_tls) {
  const baton::testing::test_pki pki;
  redis_cluster_options o;
  o.tls_cert_file = pki.server().cert;
  o.tls_key_file = pki.server().key;
  o.tls_ca_file = pki.ca_file();
  // The server certificate is for serverAuth only; the bus demands a client one.
  o.tls_client_cert_file = pki.client().cert;
  o.tls_client_key_file = pki.client().key;
  o.requirepass = "cluster-secret";
  const auto start = std::chrono::steady_clock::now();
  redis_cluster cluster(o);
  const double startup_s = since(start);
  ASSERT_TRUE(cluster.tls());
  ASSERT_EQ(cluster.tls_seed_urls().size(), 6u);
  const auto port = cluster.ports().front();
  EXPECT_EQ(cluster.tls_seed_urls().front(),
            "rediss://127.0.0.1:" + std::to_string(cluster.tls_port_of(port)));

  // CLUSTER SHARDS names both ports of every node.
  const auto shards = cluster.command(port, {"CLUSTER", "SHARDS"});
  const auto tls_at = std::find(shards.begin(), shards.end(), "tls-port");
  ASSERT_NE(tls_at, shards.end());
  ASSERT_NE(tls_at + 1, shards.end());
  bool found = false;
  for (const auto p : cluster.ports())
    found = found || std::to_string(cluster.tls_port_of(p)) == *(tls_at + 1);
  EXPECT_TRUE(found);

  // MIGRATE (over TLS, with AUTH) moves a key.
  const std::string key = "baton:tls";
  const int slot = cluster.key_slot(key);
  const auto owner = cluster.master_port_for_slot(slot);
  cluster.command(owner, {"SET", key, "x"});
  auto masters = cluster.master_ports();
  const auto target =
      *std::find_if(masters.begin(), masters.end(), [&](auto p) { return p != owner; });
  cluster.migrate_slot(slot, target);
  EXPECT_EQ(cluster.command(target, {"GET", key}), std::vector<std::string>{"x"});

  // A failover over the TLS bus.
  cluster.wait_for_replication(target);
  const auto killed_at = std::chrono::steady_clock::now();
  const auto promoted = cluster.failover_slot_master(slot, 30s);
  const double failover_s = since(killed_at);
  EXPECT_EQ(cluster.command(promoted, {"GET", key}), std::vector<std::string>{"x"});
  std::printf("tls cluster: up in %.2f s, failover %.2f s\n", startup_s, failover_s);
}

}  // namespace
