// The lease-store contract against the cluster kind: redis_store with a
// cluster_locator over a real 3-master cluster without replicas
// (tests/support/servers/redis_cluster.hpp), emptied for every test; the seeds are every
// node, so the map must be read to find the election's slot. Failovers and
// slot migrations are the fault suite's (tests/faults/cluster_faults_test.cpp).
// Losing data is the slot's master restarting empty (it rejoins under its
// id from nodes.conf); unreachable is every node killed.
#include <utility>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "contract_harness.hpp"
#include "integration/redis/store_test_util.hpp"
#include "lease_store_contract.hpp"
#include "redis/cluster_locator.hpp"
#include "redis/lease_keys.hpp"
#include "redis/redis_store.hpp"
#include "support/servers/redis_cluster.hpp"

namespace baton::contract {
namespace {

namespace util = baton::testing::store_test_util;
using baton::testing::redis_cluster;

baton::testing::redis_cluster_options cluster_options() {
  baton::testing::redis_cluster_options o;
  o.replicas_per_master = 0;
  return o;
}

// Making a cluster takes about two seconds, so tests share one: each
// starts from empty masters, and a test that breaks the cluster (a reset, or
// every node killed) has the next one make a new cluster.
std::unique_ptr<redis_cluster>& shared_cluster() {
  static std::unique_ptr<redis_cluster> cluster;
  return cluster;
}

redis_cluster& fresh_cluster() {
  auto& cluster = shared_cluster();
  if (cluster) {
    for (auto port : cluster->master_ports()) cluster->command(port, {"FLUSHALL"});
  } else {
    cluster = std::make_unique<redis_cluster>(cluster_options());
  }
  return *cluster;
}

class cluster_harness final : public contract_harness {
 public:
  cluster_harness() : cluster_(fresh_cluster()) {
    cluster_.command(owner(), {"SET", token_key(util::election), "1000"});
  }
  // Stores are destroyed before the harness; a broken cluster goes with it.
  ~cluster_harness() override {
    if (broken_) shared_cluster().reset();
  }

  std::string name() const override { return "cluster"; }
  boost::asio::io_context& io() override { return io_; }
  std::unique_ptr<lease_store> make_candidate(const candidate_spec& who) override {
    redis_detail::cluster_locator_options c;
    for (auto port : cluster_.ports()) {
      redis_endpoint e;
      e.port = port;
      c.seeds.push_back(e);
    }
    c.key = lease_key(util::election);
    redis_store_options o;
    o.identity = {util::election, who.node_id, who.ttl, who.priority, who.peer_address};
    o.locator = redis_detail::cluster_locator::create(io_, std::move(c));
    o.replicated = true;
    o.sharded_pubsub = true;
    o.kind = "cluster";
    o.label = "Redis Cluster";
    return std::make_unique<redis_store>(io_, std::move(o));
  }
  void reset_store() override {
    broken_ = true;
    const auto port = owner();
    cluster_.kill_node(port);
    cluster_.restart_node(port);
  }
  bool records_cooldown() const override { return true; }
  bool can_make_unreachable() const override { return true; }
  void make_unreachable() override {
    broken_ = true;
    for (auto port : cluster_.ports()) cluster_.kill_node(port);
  }
  std::string diagnostics() const override { return cluster_.log_tails(); }

 private:
  unsigned short owner() const {
    return cluster_.master_port_for_slot(cluster_.key_slot(lease_key(util::election)));
  }

  redis_cluster& cluster_;
  bool broken_ = false;
  boost::asio::io_context io_;
};

const contract_kind cluster_contract_kind{"cluster",
                                          [] { return std::make_unique<cluster_harness>(); }};

INSTANTIATE_TEST_SUITE_P(contract, lease_store_contract, ::testing::Values(cluster_contract_kind),
                         contract_kind_name);
// The kind carries lease.failsafe peers out.
INSTANTIATE_TEST_SUITE_P(contract, failsafe_contract, ::testing::Values(cluster_contract_kind),
                         contract_kind_name);

}  // namespace
}  // namespace baton::contract
