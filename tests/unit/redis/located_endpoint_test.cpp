// A located store's status endpoint names the master's address only once a
// connection has one: while the transport is still asking (or asking again
// after the master went away), its peer is the locator's own description.
#include <gtest/gtest.h>

#include "redis/master_locator.hpp"

namespace baton::redis_detail {
namespace {

TEST(located_endpoint, an_address_is_added_once_there_is_one) {
  const std::string how = "master jobs-redis via 1 sentinel";
  EXPECT_EQ(located_endpoint_text(how, "127.0.0.1:7100"), how + ", at 127.0.0.1:7100");
  EXPECT_EQ(located_endpoint_text(how, ""), how);
  // Disconnected, asking the sentinels again: no repeat of the description.
  EXPECT_EQ(located_endpoint_text(how, how), how);
}

}  // namespace
}  // namespace baton::redis_detail
