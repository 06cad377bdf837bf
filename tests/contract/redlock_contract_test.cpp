// The lease-store contract against redlock_store over three real
// redis-servers (tests/support/servers/redis_server.hpp), started fresh per test. The
// election has run before on every master (each counter is seeded). Losing
// data is every master restarting empty on its port; unreachable is every
// master killed. What a minority of masters going away does is the fault
// suite's (tests/faults/redlock_faults_test.cpp).
#include <utility>

#include <array>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "contract_harness.hpp"
#include "integration/redis/store_test_util.hpp"
#include "integration/redlock/redlock_test_util.hpp"
#include "lease_store_contract.hpp"
#include "redlock/redlock_store.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::contract {
namespace {

namespace util = baton::testing::store_test_util;
namespace redlock_util = baton::testing::redlock_test_util;

class redlock_harness final : public contract_harness {
 public:
  redlock_harness() {
    for (const auto& server : servers_) util::seed_counter(server);
  }

  std::string name() const override { return "redlock"; }
  boost::asio::io_context& io() override { return io_; }
  std::unique_ptr<lease_store> make_candidate(const candidate_spec& who) override {
    auto o = redlock_util::options_for(servers_, who.node_id, who.ttl);
    o.identity.priority = who.priority;
    o.identity.peer_address = who.peer_address;
    return std::make_unique<redlock_store>(io_, std::move(o));
  }
  void reset_store() override {
    for (auto& server : servers_) server.restart();
  }
  bool records_cooldown() const override { return true; }
  bool can_make_unreachable() const override { return true; }
  void make_unreachable() override {
    for (auto& server : servers_) server.kill_and_wait();
  }
  std::string diagnostics() const override {
    std::string out;
    for (const auto& server : servers_) {
      out += "redis-server :" + std::to_string(server.port()) + " log:\n" + server.log_tail();
    }
    return out;
  }

 private:
  std::array<baton::testing::redis_server, 3> servers_;
  boost::asio::io_context io_;
};

const contract_kind redlock_contract_kind{"redlock",
                                          [] { return std::make_unique<redlock_harness>(); }};

INSTANTIATE_TEST_SUITE_P(contract, lease_store_contract, ::testing::Values(redlock_contract_kind),
                         contract_kind_name);
// The kind carries lease.failsafe peers out.
INSTANTIATE_TEST_SUITE_P(contract, failsafe_contract, ::testing::Values(redlock_contract_kind),
                         contract_kind_name);

}  // namespace
}  // namespace baton::contract
