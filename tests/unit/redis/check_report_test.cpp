// check-store's verdicts: the exit code follows the worst line, the
// eviction policy's line says which keys it can take, and the tls line
// weighs where the password travels.
#include <gtest/gtest.h>

#include <string>

#include "baton/redis_url.hpp"
#include "baton/check_report.hpp"
#include "redis/redis_server_check.hpp"

namespace baton {
namespace {

using store_check_detail::eviction_line;
using store_check_detail::tls_line;

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

// The rule every kind's check-store follows: a password sent over a
// plaintext connection that leaves this host is a hazard; plain TCP without
// one is a note; loopback and Unix sockets never leave the host.
TEST(check_report, a_password_over_plain_tcp_beyond_this_host_is_a_hazard) {
  const auto at = [](const std::string& url) { return parse_redis_url(url); };
  const auto with_password = tls_line(at("redis://10.0.0.5:6379"), true);
  EXPECT_EQ(with_password.verdict, check_verdict::hazard) << with_password.text;
  EXPECT_NE(with_password.text.find("the password travels unencrypted"), std::string::npos)
      << with_password.text;
  EXPECT_NE(with_password.text.find("rediss://"), std::string::npos) << with_password.text;
  const auto without = tls_line(at("redis://10.0.0.5:6379"), false);
  EXPECT_EQ(without.verdict, check_verdict::note) << without.text;
  EXPECT_EQ(tls_line(at("redis://127.0.0.1:6379"), true).verdict, check_verdict::ok);
  EXPECT_EQ(tls_line(at("redis://localhost:6379"), true).verdict, check_verdict::ok);
  EXPECT_EQ(tls_line(at("redis://[::1]:6379"), true).verdict, check_verdict::ok);
  EXPECT_EQ(tls_line(at("unix:///run/redis.sock"), true).verdict, check_verdict::ok);
  EXPECT_EQ(tls_line(at("rediss://10.0.0.5:6379"), true).verdict, check_verdict::ok);
}

}  // namespace
}  // namespace baton
