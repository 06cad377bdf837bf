// make_lease_store builds every kind validation accepts, with the identity
// from the configuration, and refuses others with a message naming the kind.
#include "baton/store_factory.hpp"
#include "baton/config_load.hpp"
#include "baton/redis_settings.hpp"
#include "baton/store_registry.hpp"
#include "etcd/etcd_settings.hpp"
#include "redlock/redlock_settings.hpp"
#include "zookeeper/zookeeper_settings.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace baton {
namespace {

using namespace std::chrono_literals;

config base_config() {
  config cfg = default_config();
  cfg.election = "jobs";
  cfg.node_id = "web-1";
  cfg.lease.ttl = 3s;
  redis_settings_of(cfg).url = "redis://127.0.0.1:6399";
  redlock_settings_of(cfg).masters = {"redis://127.0.0.1:6401", "redis://127.0.0.1:6402",
                                      "redis://127.0.0.1:6403"};
  etcd_settings_of(cfg).endpoints = {"http://127.0.0.1:2399"};
  etcd_settings_of(cfg).command_timeout = 1s;
  zookeeper_settings_of(cfg).servers = {"127.0.0.1:2399"};
  zookeeper_settings_of(cfg).command_timeout = 1s;
  return cfg;
}

TEST(store_factory, builds_every_known_kind_with_the_configured_identity) {
  boost::asio::io_context io;
  for (const store_kind* each : store_kinds()) {
    const std::string kind(each->name);
    auto cfg = base_config();
    cfg.store.kind = kind;
    auto store = make_lease_store(io, cfg);
    ASSERT_NE(store, nullptr) << kind;
    EXPECT_EQ(store->identity().election, "jobs") << kind;
    EXPECT_EQ(store->identity().node_id, "web-1") << kind;
    EXPECT_EQ(store->identity().ttl, 3s) << kind;
    EXPECT_EQ(store->status().kind, kind);
    // Lazily connected: nothing was attempted, so nothing failed yet.
    EXPECT_EQ(store->status().last_error, "") << kind;
  }
}

TEST(store_factory, the_redis_endpoint_is_shown_without_its_password) {
  boost::asio::io_context io;
  auto cfg = base_config();
  redis_settings_of(cfg).url = "redis://:hunter2@127.0.0.1:6399/2";
  redis_settings_of(cfg).password = "hunter2";
  auto store = make_lease_store(io, cfg);
  const auto endpoint = store->status().endpoint;
  EXPECT_EQ(endpoint.find("hunter2"), std::string::npos) << endpoint;
  EXPECT_NE(endpoint.find("127.0.0.1:6399"), std::string::npos) << endpoint;
}

TEST(store_factory, an_unknown_kind_is_refused_by_name) {
  boost::asio::io_context io;
  auto cfg = base_config();
  cfg.store.kind = "consul";
  try {
    make_lease_store(io, cfg);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"consul\""), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton
