// The lease-store contract against redis_store and a real redis-server
// (tests/support/servers/redis_server.hpp), one server per test. The election has run
// before (its token counter is seeded), so only the reset case waits out a
// hold-back. Losing data is the server restarting empty on the same port; the
// stores notice at their next call (a changed run_id). Unreachable is the
// server killed.
#include <utility>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "contract_harness.hpp"
#include "integration/redis/store_test_util.hpp"
#include "lease_store_contract.hpp"
#include "redis/redis_store.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::contract {
namespace {

namespace util = baton::testing::store_test_util;

class redis_harness final : public contract_harness {
 public:
  redis_harness() { util::seed_counter(server_); }

  std::string name() const override { return "redis"; }
  boost::asio::io_context& io() override { return io_; }
  std::unique_ptr<lease_store> make_candidate(const candidate_spec& who) override {
    auto o = util::options_for(server_, who.node_id, who.ttl);
    o.identity.priority = who.priority;
    o.identity.peer_address = who.peer_address;
    return std::make_unique<redis_store>(io_, std::move(o));
  }
  void reset_store() override { server_.restart(); }
  bool records_cooldown() const override { return true; }
  bool can_make_unreachable() const override { return true; }
  void make_unreachable() override { server_.kill_and_wait(); }
  std::string diagnostics() const override { return "redis-server log:\n" + server_.log_tail(); }

 private:
  baton::testing::redis_server server_;
  boost::asio::io_context io_;
};

const contract_kind redis_contract_kind{"redis", [] { return std::make_unique<redis_harness>(); }};

INSTANTIATE_TEST_SUITE_P(contract, lease_store_contract, ::testing::Values(redis_contract_kind),
                         contract_kind_name);
// The kind carries lease.failsafe peers out.
INSTANTIATE_TEST_SUITE_P(contract, failsafe_contract, ::testing::Values(redis_contract_kind),
                         contract_kind_name);

}  // namespace
}  // namespace baton::contract
