// The lease-store contract against zookeeper_store and a real standalone
// ZooKeeper (tests/support/servers/zookeeper_server.hpp), one server per test. The
// election has run before (its record is created first), so only the reset
// case waits out a hold-back. Losing data the ZooKeeper way is a wiped
// server: its data directory emptied and the server started again, so that
// zxids begin again and the stores' old sessions are refused. Unreachable is
// the server killed.
#include <utility>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <stdexcept>
#include <string>

#include "contract_harness.hpp"
#include "lease_store_contract.hpp"
#include "support/servers/zookeeper_server.hpp"
#include "zookeeper/zookeeper_store.hpp"

namespace baton::contract {
namespace {

constexpr const char* election = "contract";

class zookeeper_harness final : public contract_harness {
 public:
  zookeeper_harness() {
    // `baton init-store`'s way: the record exists, so no first-start hold-back.
    auto store = make_store("init", milliseconds(1000), 0);
    bool done = false;
    store_error failure;
    store->async_create_record([&](store_error e, record_answer) {
      failure = std::move(e);
      done = true;
    });
    for (int i = 0; i < 1000 && !done; ++i) io_.run_one_for(std::chrono::milliseconds(50));
    store.reset();
    io_.restart();
    if (!done || failure) {
      throw std::runtime_error("cannot create the election's record: " + failure.message() + "\n" +
                               server_.log_tail());
    }
  }

  std::string name() const override { return "zookeeper"; }
  boost::asio::io_context& io() override { return io_; }
  std::unique_ptr<lease_store> make_candidate(const candidate_spec& who) override {
    zookeeper_store_options o;
    o.servers = server_.address();
    o.identity = {election, who.node_id, who.ttl, who.priority, who.peer_address};
    o.connect_timeout = milliseconds(3000);
    o.command_timeout = milliseconds(2000);
    return std::make_unique<zookeeper_store>(io_, std::move(o));
  }
  void reset_store() override { server_.wipe_and_restart(); }
  bool can_make_unreachable() const override { return true; }
  void make_unreachable() override { server_.stop(true); }
  // A session expires on the server's tick after its timeout.
  milliseconds expiry_slack() const override { return milliseconds(server_.options().tick_ms); }
  bool records_cooldown() const override { return true; }
  bool tells_last_attempt() const override { return false; }
  std::string diagnostics() const override { return "zookeeper log:\n" + server_.log_tail(); }

 private:
  baton::testing::zookeeper_server server_;
  boost::asio::io_context io_;
};

const contract_kind zookeeper_contract_kind{
    "zookeeper", [] { return std::make_unique<zookeeper_harness>(); }};

INSTANTIATE_TEST_SUITE_P(contract, lease_store_contract,
                         ::testing::Values(zookeeper_contract_kind), contract_kind_name);
// The kind carries lease.failsafe peers out.
INSTANTIATE_TEST_SUITE_P(contract, failsafe_contract, ::testing::Values(zookeeper_contract_kind),
                         contract_kind_name);

}  // namespace
}  // namespace baton::contract
