// The etcd kind's world: one etcd member. The lease is the key
// baton/ELECTION/lease (etcd.prefix baton/, docs/stores/etcd.md), which an
// operator deletes with `etcdctl del`.
#include <memory>
#include <stdexcept>
#include <string>

#include "support/servers/etcd_server.hpp"
#include "support/worlds/world_kinds.hpp"

namespace baton::testing::worlds {
namespace {

class etcd_world final : public store_world {
 public:
  std::string kind() const override { return "etcd"; }
  store_options options() const override {
    return {text_option("store.kind", "etcd"),
            list_option("etcd.endpoints", {server_.client_url()})};
  }
  void delete_lease(const std::string& election) override {
    // etcdctl prints how many keys it deleted.
    const std::string key = "baton/" + election + "/lease";
    const std::string deleted = server_.etcdctl("del " + key);
    if (deleted.substr(0, deleted.find_first_of("\r\n")) != "1") {
      throw std::runtime_error("etcdctl del " + key + ": " + deleted);
    }
  }
  std::string diagnostics() const override { return "etcd log:\n" + server_.log_tail(); }

 private:
  etcd_server server_;
};

}  // namespace

std::unique_ptr<store_world> make_etcd_world() {
  return std::make_unique<etcd_world>();
}

}  // namespace baton::testing::worlds
