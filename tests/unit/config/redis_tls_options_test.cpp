// The redis.username and redis.tls_* options: rediss:// URLs, each option
// from YAML, a variable or a flag; TLS options without a rediss:// URL, a
// certificate without its key, a file that is not there, and an unknown
// verification mode are each one line naming the option.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include "baton/config_load.hpp"
#include "baton/redis_settings.hpp"
#include "baton/redis_url.hpp"
#include "config_test_util.hpp"
#include "redlock/redlock_settings.hpp"

namespace baton {
namespace {

using namespace config_test_util;

std::string tls_error_of(const std::function<void()>& load, const std::string& option) {
  try {
    load();
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), option) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no config_error";
  return {};
}

std::string existing_file() {
  const std::string path = ::testing::TempDir() + "/baton-tls-ca.pem";
  std::ofstream(path) << "not read by validation\n";
  return path;
}

TEST(redis_tls_options, rediss_urls_parse_and_print_with_their_scheme) {
  const auto e = parse_redis_url("rediss://user:pw@redis.example:6380/2");
  EXPECT_TRUE(e.tls);
  EXPECT_EQ(e.host, "redis.example");
  EXPECT_EQ(e.port, 6380);
  EXPECT_EQ(e.db, 2);
  EXPECT_EQ(e.username, "user");
  EXPECT_EQ(e.redacted(), "rediss://user:***@redis.example:6380/2");
  EXPECT_FALSE(parse_redis_url("redis://h").tls);
}

TEST(redis_tls_options, the_settings_reach_the_endpoint) {
  const auto ca = existing_file();
  const auto cfg = from_yaml("redis:\n  url: rediss://10.0.0.5:6380\n  username: baton\n"
                             "  tls_ca_file: " + ca + "\n  tls_verify: ca\n"
                             "  tls_server_name: redis.internal\n");
  const auto e = redis_endpoint_for(redis_settings_of(cfg), redis_settings_of(cfg).url);
  EXPECT_TRUE(e.tls);
  EXPECT_EQ(e.username, "baton");
  EXPECT_EQ(e.tls_settings.ca_file, ca);
  EXPECT_EQ(e.tls_settings.verify, tls_verify::ca);
  EXPECT_EQ(e.tls_settings.server_name, "redis.internal");
  // Without a server name, the URL's host is what the certificate must name.
  const auto plain = from_yaml("redis:\n  url: rediss://10.0.0.5:6380\n");
  EXPECT_EQ(redis_endpoint_for(redis_settings_of(plain), redis_settings_of(plain).url)
                .tls_settings.server_name,
            "10.0.0.5");
  EXPECT_EQ(redis_endpoint_for(redis_settings_of(plain), redis_settings_of(plain).url)
                .tls_settings.verify,
            tls_verify::full);
  // The same from variables.
  const auto env = from_yaml("", {{"BATON_REDIS_URL", "rediss://h"}, {"BATON_REDIS_TLS_VERIFY", "none"},
                                  {"BATON_REDIS_USERNAME", "u"}});
  EXPECT_EQ(redis_settings_of(env).tls_verify, tls_verify::none);
  EXPECT_EQ(redis_settings_of(env).username, "u");
}

TEST(redis_tls_options, tls_options_without_a_rediss_url_are_refused) {
  const auto ca = existing_file();
  const auto why =
      tls_error_of([&] { from_yaml("redis:\n  tls_ca_file: " + ca + "\n"); }, "redis.tls_ca_file");
  EXPECT_NE(why.find("redis.url is not a rediss:// URL"), std::string::npos) << why;
  tls_error_of([] { from_yaml("redis:\n  tls_verify: none\n"); }, "redis.tls_verify");
}

TEST(redis_tls_options, a_bad_mode_a_lone_certificate_and_a_missing_file_are_named) {
  const auto ca = existing_file();
  auto why = tls_error_of([] { from_yaml("redis:\n  url: rediss://h\n  tls_verify: strict\n"); },
                          "redis.tls_verify");
  EXPECT_NE(why.find("must be full (chain and server name), ca (chain only) or none"),
            std::string::npos)
      << why;
  why = tls_error_of([&] { from_yaml("redis:\n  url: rediss://h\n  tls_cert_file: " + ca + "\n"); },
                     "redis.tls_key_file");
  EXPECT_NE(why.find("a client certificate needs both"), std::string::npos) << why;
  why = tls_error_of(
      [] { from_yaml("redis:\n  url: rediss://h\n  tls_ca_file: /nonexistent/ca.pem\n"); },
      "redis.tls_ca_file");
  EXPECT_NE(why.find("the path does not exist"), std::string::npos) << why;
  why = tls_error_of([&] { from_yaml("redis:\n  url: rediss://h\n  tls_ca_dir: " + ca + "\n"); },
                     "redis.tls_ca_dir");
  EXPECT_NE(why.find("must be a directory"), std::string::npos) << why;
}

TEST(redis_tls_options, a_user_given_twice_differently_is_refused) {
  const auto why = tls_error_of(
      [] { from_yaml("redis:\n  url: redis://alice:@h\n  username: bob\n"); }, "redis.username");
  EXPECT_NE(why.find("given twice"), std::string::npos) << why;
  EXPECT_NO_THROW(from_yaml("redis:\n  url: redis://bob:@h\n  username: bob\n"));
}

TEST(redis_tls_options, redlock_masters_may_use_tls) {
  const auto ca = existing_file();
  const auto cfg = from_yaml("store: {kind: redlock}\nredlock:\n  masters: [rediss://a:1, "
                             "rediss://b:1, rediss://c:1]\nredis:\n  tls_ca_file: " + ca + "\n");
  for (const auto& url : redlock_master_urls(redlock_settings_of(cfg))) {
    EXPECT_TRUE(redis_endpoint_for(redis_settings_of(cfg), url).tls) << url;
  }
}

}  // namespace
}  // namespace baton
