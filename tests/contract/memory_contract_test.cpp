// The lease-store contract against the in-memory store
// (tests/support/fakes/memory_lease_store.hpp): a fresh backend per test, with a
// small latency so that every call really is in flight for a while.
#include <utility>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "contract_harness.hpp"
#include "lease_store_contract.hpp"
#include "support/fakes/memory_lease_store.hpp"

namespace baton::contract {
namespace {

class memory_harness final : public contract_harness {
 public:
  std::string name() const override { return "memory"; }
  boost::asio::io_context& io() override { return io_; }
  std::unique_ptr<lease_store> make_candidate(const candidate_spec& who) override {
    return std::make_unique<testing::memory_lease_store>(
        io_, backend_,
        store_identity{"jobs", who.node_id, who.ttl, who.priority, who.peer_address});
  }
  void reset_store() override { backend_.reset("memory backend reset by the test"); }
  bool records_cooldown() const override { return true; }
  bool can_make_unreachable() const override { return true; }
  void make_unreachable() override { backend_.set_unavailable(true); }

 private:
  boost::asio::io_context io_;
  testing::memory_lease_backend backend_{milliseconds{1}};
};

INSTANTIATE_TEST_SUITE_P(contract, lease_store_contract,
                         ::testing::Values(contract_kind{
                             "memory", [] { return std::make_unique<memory_harness>(); }}),
                         contract_kind_name);

}  // namespace
}  // namespace baton::contract
