// The lease-store contract against etcd_store and a real one-member etcd
// (tests/support/etcd_server.hpp), one member per test. The election has run
// before (its record is created first, then a snapshot is saved), so only
// the reset case waits out a hold-back. Losing data the etcd way is a
// restore of that older snapshot: the revision goes back, the cluster id
// stays. Unreachable is the member killed.
#include <utility>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <stdexcept>
#include <string>

#include "contract_harness.hpp"
#include "etcd/etcd_store.hpp"
#include "lease_store_contract.hpp"
#include "support/etcd_server.hpp"

namespace baton::contract {
namespace {

constexpr const char* election = "contract";

class etcd_harness final : public contract_harness {
 public:
  etcd_harness() {
    // `baton init-store`'s way: the record exists, so no first-start hold-back.
    auto store = make_store("init", milliseconds(1000));
    bool done = false;
    store_error failure;
    store->async_create_record([&](store_error e, record_answer) {
      failure = std::move(e);
      done = true;
    });
    for (int i = 0; i < 1000 && !done; ++i) io_.run_one_for(std::chrono::milliseconds(50));
    io_.restart();
    if (!done || failure) {
      throw std::runtime_error("cannot create the election's record: " + failure.message() + "\n" +
                               server_.log_tail());
    }
    server_.save_snapshot();
  }

  std::string name() const override { return "etcd"; }
  boost::asio::io_context& io() override { return io_; }
  std::unique_ptr<lease_store> make_store(const std::string& node_id, milliseconds ttl) override {
    etcd_store_options o;
    o.endpoints = {server_.client_url()};
    o.identity = {election, node_id, ttl};
    o.connect_timeout = milliseconds(2000);
    o.command_timeout = milliseconds(2000);
    return std::make_unique<etcd_store>(io_, std::move(o));
  }
  void reset_store() override { server_.restore_snapshot(); }
  bool can_make_unreachable() const override { return true; }
  void make_unreachable() override { server_.stop(); }
  // etcd keeps a lease up to its TTL, which is the ttl rounded up to whole
  // seconds, and checks for expired leases every 500 ms.
  milliseconds expiry_slack() const override { return milliseconds(1000); }
  std::string diagnostics() const override { return "etcd log:\n" + server_.log_tail(); }

 private:
  baton::testing::etcd_server server_;
  boost::asio::io_context io_;
};

INSTANTIATE_TEST_SUITE_P(contract, lease_store_contract,
                         ::testing::Values(contract_kind{
                             "etcd", [] { return std::make_unique<etcd_harness>(); }}),
                         contract_kind_name);

}  // namespace
}  // namespace baton::contract
