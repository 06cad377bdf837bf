// check-store's verdicts: the exit code follows the worst line, and the
// eviction policy's line says which keys it can take.
#include <gtest/gtest.h>

#include "baton/store_check.hpp"
#include "redis/redis_server_check.hpp"

namespace baton {
namespace {

using store_check_detail::eviction_line;

TEST(check_report, the_exit_code_follows_the_worst_line) {
  check_report r;
  EXPECT_EQ(r.exit_code(), 0);
  r.lines.push_back({check_verdict::ok, "reachable", ""});
  r.lines.push_back({check_verdict::note, "clock", ""});
  EXPECT_EQ(r.exit_code(), 0);
  r.lines.push_back({check_verdict::hazard, "eviction", ""});
  EXPECT_EQ(r.exit_code(), 1);
  r.lines.insert(r.lines.begin(), {check_verdict::failure, "acl", ""});
  EXPECT_EQ(r.exit_code(), 2);
}

TEST(check_report, eviction_policies) {
  EXPECT_EQ(eviction_line("allkeys-lru", 0).verdict, check_verdict::ok);
  EXPECT_EQ(eviction_line("noeviction", 1 << 20).verdict, check_verdict::ok);
  const auto volatile_ttl = eviction_line("volatile-ttl", 1 << 20);
  EXPECT_EQ(volatile_ttl.verdict, check_verdict::hazard);
  EXPECT_NE(volatile_ttl.text.find("can evict the lease key early"), std::string::npos);
  const auto allkeys = eviction_line("allkeys-random", 1 << 20);
  EXPECT_EQ(allkeys.verdict, check_verdict::hazard);
  EXPECT_NE(allkeys.text.find("token counter"), std::string::npos);
}

}  // namespace
}  // namespace baton
