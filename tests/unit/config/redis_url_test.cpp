// redis.url forms (TCP, IPv6, Unix socket, user-info, db) and their errors,
// which must name redis.url and never show a password.
#include <gtest/gtest.h>

#include "baton/config.hpp"
#include "baton/redis_url.hpp"

namespace baton {
namespace {

std::string url_error_of(const std::string& url) {
  try {
    parse_redis_url(url);
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "redis.url");
    return e.what();
  }
  ADD_FAILURE() << "no error for " << url;
  return {};
}

TEST(redis_url, host_only_uses_default_port_and_db) {
  const auto ep = parse_redis_url("redis://redis.example.com");
  EXPECT_EQ(ep.kind, redis_endpoint::transport::tcp);
  EXPECT_EQ(ep.host, "redis.example.com");
  EXPECT_EQ(ep.port, 6379);
  EXPECT_EQ(ep.db, 0);
  EXPECT_EQ(ep.password, "");
  EXPECT_EQ(ep.username, "");
}

TEST(redis_url, host_port_db) {
  const auto ep = parse_redis_url("redis://10.0.0.5:6380/3");
  EXPECT_EQ(ep.host, "10.0.0.5");
  EXPECT_EQ(ep.port, 6380);
  EXPECT_EQ(ep.db, 3);
  EXPECT_EQ(parse_redis_url("redis://h:1/").db, 0);
  EXPECT_EQ(parse_redis_url("redis://h:65535/15").port, 65535);
}

TEST(redis_url, password_and_user) {
  auto ep = parse_redis_url("redis://:s3cret@localhost:6379");
  EXPECT_EQ(ep.username, "");
  EXPECT_EQ(ep.password, "s3cret");
  ep = parse_redis_url("redis://alice:pa%40ss%3Aword@localhost");
  EXPECT_EQ(ep.username, "alice");
  EXPECT_EQ(ep.password, "pa@ss:word");
  // The last '@' ends the user-info even when the password holds '@' or '/'.
  ep = parse_redis_url("redis://:p@s/s@localhost:7000/2");
  EXPECT_EQ(ep.password, "p@s/s");
  EXPECT_EQ(ep.host, "localhost");
  EXPECT_EQ(ep.port, 7000);
  EXPECT_EQ(ep.db, 2);
}

TEST(redis_url, ipv6) {
  const auto ep = parse_redis_url("redis://[::1]:6390/1");
  EXPECT_EQ(ep.host, "::1");
  EXPECT_EQ(ep.port, 6390);
  EXPECT_EQ(ep.db, 1);
  EXPECT_EQ(parse_redis_url("redis://[fe80::1]").port, 6379);
}

TEST(redis_url, unix_socket) {
  auto ep = parse_redis_url("unix:///run/redis/redis.sock");
  EXPECT_EQ(ep.kind, redis_endpoint::transport::unix_socket);
  EXPECT_EQ(ep.path, "/run/redis/redis.sock");
  EXPECT_EQ(ep.db, 0);
  ep = parse_redis_url("unix:///tmp/r.sock?db=7");
  EXPECT_EQ(ep.path, "/tmp/r.sock");
  EXPECT_EQ(ep.db, 7);
  ep = parse_redis_url("unix://:pw@/tmp/r.sock");
  EXPECT_EQ(ep.password, "pw");
  EXPECT_EQ(ep.path, "/tmp/r.sock");
}

TEST(redis_url, rediss_is_tls) {
  EXPECT_TRUE(baton::parse_redis_url("rediss://localhost:6380").tls);
  EXPECT_FALSE(baton::parse_redis_url("redis://localhost:6380").tls);
}

TEST(redis_url, rejects_malformed_urls) {
  for (const char* bad :
       {"", "localhost:6379", "http://localhost", "redis://", "redis://:6379", "redis://host:0",
        "redis://host:65536", "redis://host:99999999", "redis://host:port", "redis://host:",
        "redis://host/16", "redis://host/-1", "redis://host/x", "redis://host/1/2", "redis://host?db=1",
        "redis://host#frag", "redis://ho st", "redis://::1:6379", "redis://[::1", "redis://[::1]x",
        "redis://[abc]", "redis://user@host", "redis://:%zz@host", "redis://:%4@host",
        "unix://", "unix://relative.sock", "unix://host/tmp/x.sock", "unix:///tmp/x.sock?db=16",
        "unix:///tmp/x.sock?timeout=3", "unix:///", "REDIS://host"}) {
    EXPECT_FALSE(url_error_of(bad).empty()) << bad;
  }
}

TEST(redis_url, errors_name_the_rule) {
  EXPECT_NE(url_error_of("redis://host:70000").find("1 to 65535"), std::string::npos);
  EXPECT_NE(url_error_of("redis://host/16").find("0 to 15"), std::string::npos);
  EXPECT_NE(url_error_of("ftp://host").find("redis://"), std::string::npos);
}

TEST(redis_url, errors_never_show_the_password) {
  for (const char* bad : {"redis://:hunter2@host:99999", "redis://u:hunter2@host/99",
                          "redis://:hun@ter2@ho st", "rediss://:hunter2@host:0"}) {
    const std::string message = url_error_of(bad);
    EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
    EXPECT_EQ(message.find("ter2"), std::string::npos) << message;
    EXPECT_NE(message.find("***"), std::string::npos) << message;
  }
}

TEST(redis_url, redacted_masks_the_password_and_round_trips) {
  auto ep = parse_redis_url("redis://alice:s3cret@10.1.2.3:6380/4");
  EXPECT_EQ(ep.redacted(), "redis://alice:***@10.1.2.3:6380/4");
  EXPECT_EQ(parse_redis_url("redis://host").redacted(), "redis://host:6379");
  EXPECT_EQ(parse_redis_url("redis://[::1]:7/2").redacted(), "redis://[::1]:7/2");
  EXPECT_EQ(parse_redis_url("unix://:x@/tmp/s?db=3").redacted(), "unix://:***@/tmp/s?db=3");
  EXPECT_EQ(parse_redis_url("unix:///tmp/s").redacted(), "unix:///tmp/s");
  const auto again = parse_redis_url(ep.redacted());
  EXPECT_EQ(again.host, ep.host);
  EXPECT_EQ(again.port, ep.port);
  EXPECT_EQ(again.db, ep.db);
  EXPECT_EQ(again.username, "alice");
}

}  // namespace
}  // namespace baton
