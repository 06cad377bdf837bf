// The ZooKeeper store's error codes onto the store-neutral conditions, and
// the client's result codes onto them, as a table.
#include "zookeeper/zookeeper_error.hpp"

#include <gtest/gtest.h>
#include <zookeeper/zookeeper.h>

#include <vector>

namespace baton {
namespace {

TEST(zookeeper_error, codes_map_onto_store_conditions) {
  struct row {
    zookeeper_errc code;
    store_errc condition;
  };
  const std::vector<row> rows = {
      {zookeeper_errc::connect_failed, store_errc::unavailable},
      {zookeeper_errc::connection_lost, store_errc::unavailable},
      {zookeeper_errc::session_expired, store_errc::unavailable},
      {zookeeper_errc::timeout, store_errc::timeout},
      {zookeeper_errc::auth_failed, store_errc::auth},
      {zookeeper_errc::unexpected_reply, store_errc::protocol},
      {zookeeper_errc::no_access, store_errc::refused},
      {zookeeper_errc::session_too_short, store_errc::refused},
      {zookeeper_errc::server_error, store_errc::refused},
      {zookeeper_errc::contention, store_errc::refused},
  };
  for (const auto& r : rows) {
    const std::error_code ec = r.code;
    EXPECT_EQ(ec, r.condition) << ec.message();
    EXPECT_FALSE(ec.message().empty());
    EXPECT_STREQ(ec.category().name(), "baton.zookeeper");
  }
}

TEST(zookeeper_error, client_results_are_classified) {
  struct row {
    int rc;
    zookeeper_errc code;
  };
  const std::vector<row> rows = {
      {ZCONNECTIONLOSS, zookeeper_errc::connection_lost},
      {ZCLOSING, zookeeper_errc::connection_lost},
      {ZINVALIDSTATE, zookeeper_errc::connection_lost},
      {ZSESSIONEXPIRED, zookeeper_errc::session_expired},
      {ZSESSIONMOVED, zookeeper_errc::session_expired},
      {ZOPERATIONTIMEOUT, zookeeper_errc::timeout},
      {ZAUTHFAILED, zookeeper_errc::auth_failed},
      {ZNOAUTH, zookeeper_errc::no_access},
      {ZMARSHALLINGERROR, zookeeper_errc::server_error},
      {ZAPIERROR, zookeeper_errc::server_error},
  };
  for (const auto& r : rows) EXPECT_EQ(classify_zoo_result(r.rc), r.code) << r.rc;
}

}  // namespace
}  // namespace baton
