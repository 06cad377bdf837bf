// The lease-store contract against postgres_store and a real PostgreSQL
// (tests/support/servers/postgres_server.hpp), one server per test. The election has
// run before (its row is created first), so only the reset case waits out a
// hold-back. Losing data the PostgreSQL way is a restore from a backup (or a
// promoted replica that missed the last writes): the server comes back with
// another epoch (here it restarts in immediate mode, which changes the
// postmaster's start time as a restore does) and an older row (here the
// current term is made expired and the last token taken back).
// Unreachable is the server killed.
#include <utility>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <stdexcept>
#include <string>

#include "contract_harness.hpp"
#include "lease_store_contract.hpp"
#include "postgres/postgres_store.hpp"
#include "support/servers/postgres_server.hpp"

namespace baton::contract {
namespace {

constexpr const char* election = "contract";

class postgres_harness final : public contract_harness {
 public:
  postgres_harness() {
    // `baton init-store`'s way: the row exists, so no first-start hold-back.
    auto store = make_store("init", milliseconds(1000), 0);
    bool done = false;
    store_error failure;
    store->async_create_record([&](store_error e, record_answer) {
      failure = std::move(e);
      done = true;
    });
    for (int i = 0; i < 1000 && !done; ++i) io_.run_one_for(std::chrono::milliseconds(50));
    io_.restart();
    if (!done || failure) {
      throw std::runtime_error("cannot create the election's row: " + failure.message() + "\n" +
                               server_.log_tail());
    }
  }

  std::string name() const override { return "postgres"; }
  boost::asio::io_context& io() override { return io_; }
  std::unique_ptr<lease_store> make_candidate(const candidate_spec& who) override {
    postgres_store_options o;
    o.conninfo = server_.conninfo("postgres");
    o.identity = {election, who.node_id, who.ttl, who.priority, who.peer_address};
    o.connect_timeout = milliseconds(2000);
    o.command_timeout = milliseconds(2000);
    return std::make_unique<postgres_store>(io_, std::move(o));
  }
  void reset_store() override {
    server_.restart_immediate();
    server_.query("UPDATE baton_lease SET expires_at = '-infinity', token = token - 1");
  }
  bool records_cooldown() const override { return true; }
  bool can_make_unreachable() const override { return true; }
  void make_unreachable() override { server_.kill_and_wait(); }
  std::string diagnostics() const override { return "postgres log:\n" + server_.log_tail(); }

 private:
  baton::testing::postgres_server server_;
  boost::asio::io_context io_;
};

INSTANTIATE_TEST_SUITE_P(contract, lease_store_contract,
                         ::testing::Values(contract_kind{
                             "postgres", [] { return std::make_unique<postgres_harness>(); }}),
                         contract_kind_name);

}  // namespace
}  // namespace baton::contract
