// The lease-store contract against the sentinel kind: redis_store with a
// sentinel_locator, over a real master and its sentinel
// (tests/support/servers/redis_sentinel_group.hpp), fresh per test. One sentinel and
// no replica: the contract is about the store's answers, and a single
// sentinel needs no discovery, so the group is up in a fraction of a second.
// Failovers, acknowledgement and several sentinels are the fault suite's
// (tests/faults/sentinel_faults_test.cpp). Losing data is the master
// restarting empty on its port before the sentinel would call it down;
// unreachable is the sentinel and the master killed.
#include <utility>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "contract_harness.hpp"
#include "integration/redis/store_test_util.hpp"
#include "lease_store_contract.hpp"
#include "redis/redis_store.hpp"
#include "redis/sentinel_locator.hpp"
#include "support/servers/redis_sentinel_group.hpp"

namespace baton::contract {
namespace {

namespace util = baton::testing::store_test_util;
using namespace std::chrono_literals;

baton::testing::redis_sentinel_group_options group_options() {
  baton::testing::redis_sentinel_group_options o;
  o.replicas = 0;
  o.sentinels = 1;
  o.quorum = 1;
  // No failover while the contract restarts the master on purpose.
  o.down_after = 60s;
  return o;
}

class sentinel_harness final : public contract_harness {
 public:
  sentinel_harness() : group_(group_options()) {
    util::seed_counter(group_.node(group_.initial_master_port()));
  }

  std::string name() const override { return "sentinel"; }
  boost::asio::io_context& io() override { return io_; }
  std::unique_ptr<lease_store> make_candidate(const candidate_spec& who) override {
    redis_detail::sentinel_locator_options s;
    for (auto port : group_.sentinel_ports()) {
      redis_endpoint e;
      e.port = port;
      s.sentinels.push_back(e);
    }
    s.master_name = group_.master_name();
    redis_store_options o;
    o.identity = {util::election, who.node_id, who.ttl, who.priority, who.peer_address};
    o.locator = redis_detail::sentinel_locator::create(io_, std::move(s));
    o.replicated = true;
    o.kind = "sentinel";
    o.label = "Redis Sentinel";
    return std::make_unique<redis_store>(io_, std::move(o));
  }
  void reset_store() override { group_.node(group_.initial_master_port()).restart(); }
  bool records_cooldown() const override { return true; }
  bool can_make_unreachable() const override { return true; }
  void make_unreachable() override {
    group_.kill_all_sentinels();
    group_.kill_node(group_.initial_master_port());
  }
  std::string diagnostics() const override { return group_.log_tails(); }

 private:
  baton::testing::redis_sentinel_group group_;
  boost::asio::io_context io_;
};

const contract_kind sentinel_contract_kind{"sentinel",
                                           [] { return std::make_unique<sentinel_harness>(); }};

INSTANTIATE_TEST_SUITE_P(contract, lease_store_contract, ::testing::Values(sentinel_contract_kind),
                         contract_kind_name);
// The kind carries lease.failsafe peers out.
INSTANTIATE_TEST_SUITE_P(contract, failsafe_contract, ::testing::Values(sentinel_contract_kind),
                         contract_kind_name);

}  // namespace
}  // namespace baton::contract
