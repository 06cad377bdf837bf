// The zookeeper kind's world: one standalone ZooKeeper server. The lease is
// the ephemeral node /baton/ELECTION/lease (zookeeper.path /baton,
// docs/stores/zookeeper.md), which another client of the server deletes.
#include <memory>
#include <stdexcept>
#include <string>

#include "support/servers/zookeeper_delete.hpp"
#include "support/servers/zookeeper_server.hpp"
#include "support/worlds/world_kinds.hpp"

namespace baton::testing::worlds {
namespace {

class zookeeper_world final : public store_world {
 public:
  std::string kind() const override { return "zookeeper"; }
  store_options options() const override {
    return {text_option("store.kind", "zookeeper"),
            list_option("zookeeper.servers", {server_.address()})};
  }
  void delete_lease(const std::string& election) override {
    const std::string node = "/baton/" + election + "/lease";
    const int rc = delete_zookeeper_node(server_.port(), node);
    // No node is no lease to delete: the scenario asked for one that is held.
    if (rc != 0)
      throw std::runtime_error("zookeeper: delete " + node + ": error " + std::to_string(rc));
  }
  std::string diagnostics() const override { return "zookeeper log:\n" + server_.log_tail(); }

 private:
  zookeeper_server server_;
};

}  // namespace

std::unique_ptr<store_world> make_zookeeper_world() {
  return std::make_unique<zookeeper_world>();
}

}  // namespace baton::testing::worlds
