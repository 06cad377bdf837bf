// One rule keeps every store's secrets away from the app and its hooks:
// the option table says which variables are secret. These tests walk the
// table, so a secret option a new store kind declares is covered without a
// new test, and they name today's secrets so that none can silently lose its
// mark.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/secret_variables.hpp"
#include "config/option_table.hpp"

namespace baton {
namespace {

bool names_servers(const option_spec& spec) {
  return spec.may_carry_credentials || spec.kind() == value_kind::secret_text;
}

TEST(secret_variables, every_secret_options_variable_is_secret_whatever_its_value) {
  int secrets = 0;
  for (const auto& spec : option_table()) {
    if (!spec.secret) continue;
    ASSERT_FALSE(spec.env.empty()) << spec.key << ": a secret is only taken from its variable";
    EXPECT_TRUE(is_secret_variable(spec.env, "x")) << spec.env;
    EXPECT_TRUE(is_secret_variable(spec.env, "")) << spec.env;
    ++secrets;
  }
  EXPECT_GE(secrets, 2);
}

TEST(secret_variables, the_stores_passwords_are_secret) {
  EXPECT_TRUE(is_secret_variable("BATON_REDIS_PASSWORD", "pw"));
  EXPECT_TRUE(is_secret_variable("BATON_POSTGRES_PASSWORD", "pw"));
}

TEST(secret_variables, a_url_variable_is_secret_only_with_credentials) {
  int urls = 0;
  for (const auto& spec : option_table()) {
    if (spec.env.empty() || !names_servers(spec)) continue;
    ++urls;
    for (const std::string with : {"redis://:pw@127.0.0.1:6379", "rediss://user:pw@db:6380/2",
                                   "redis://a:1,redis://:pw@b:2",
                                   "postgresql://app:pw@127.0.0.1/app",
                                   "host=127.0.0.1 password=pw dbname=app",
                                   "postgresql://127.0.0.1/app?Password=pw"}) {
      EXPECT_TRUE(is_secret_variable(spec.env, with)) << spec.env << "=" << with;
    }
    for (const std::string without : {"redis://127.0.0.1:6379/0", "unix:///run/redis.sock?db=1",
                                      "redis://a:1,redis://b:2", "host=127.0.0.1 dbname=app"}) {
      EXPECT_FALSE(is_secret_variable(spec.env, without)) << spec.env << "=" << without;
    }
  }
  // redis.url, postgres.url, sentinel.addresses, cluster.nodes, redlock.masters
  EXPECT_GE(urls, 5);
  EXPECT_TRUE(is_secret_variable("BATON_POSTGRES_URL", "postgresql://baton:pw@db/app"));
  EXPECT_TRUE(is_secret_variable("BATON_POSTGRES_URL", "host=db password=pw"));
  EXPECT_TRUE(is_secret_variable("BATON_SENTINEL_ADDRESSES", "redis://:pw@s1:26379"));
}

TEST(secret_variables, other_variables_are_not_secret) {
  for (const auto& spec : option_table()) {
    if (spec.env.empty() || spec.secret || names_servers(spec)) continue;
    EXPECT_FALSE(is_secret_variable(spec.env, "password@example")) << spec.env;
  }
  EXPECT_FALSE(is_secret_variable("PATH", "/usr/bin"));
  EXPECT_FALSE(is_secret_variable("MY_APP_PASSWORD", "mine"));  // the app's own business
  EXPECT_FALSE(is_secret_variable("", "x"));
}

TEST(secret_variables, secret_variables_in_names_them_in_an_environment) {
  std::vector<std::string> entries{"PATH=/usr/bin",
                                   "BATON_POSTGRES_PASSWORD=pw",
                                   "BATON_POSTGRES_URL=postgresql://u:pw@h/db",
                                   "BATON_REDIS_URL=redis://127.0.0.1:6379",
                                   "BATON_REDIS_PASSWORD=",
                                   "NOEQUALS"};
  std::vector<char*> environment;
  for (auto& entry : entries) environment.push_back(entry.data());
  environment.push_back(nullptr);
  EXPECT_EQ(secret_variables_in(environment.data()),
            (std::vector<std::string>{"BATON_POSTGRES_PASSWORD", "BATON_POSTGRES_URL",
                                      "BATON_REDIS_PASSWORD"}));
}

}  // namespace
}  // namespace baton
