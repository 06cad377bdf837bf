// store.kind: which store holds the lease. Default redis; from YAML
// (`store: {kind: redis}`), BATON_STORE_KIND or --store-kind; an unknown kind
// is one line naming the option, the known kinds and where it came from;
// SIGHUP cannot change it; the redis: options are unaffected.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "baton/config_reload.hpp"
#include "baton/redis_settings.hpp"
#include "baton/store_registry.hpp"
#include "config_test_util.hpp"

namespace baton {
namespace {

using namespace config_test_util;
using namespace std::chrono_literals;

std::string kind_error_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "store.kind");
    return e.what();
  }
  ADD_FAILURE() << "no config_error";
  return {};
}

TEST(store_kind, defaults_to_redis_and_check_config_shows_it) {
  EXPECT_EQ(default_config().store.kind, "redis");
  EXPECT_EQ(default_store_kind().name, "redis");
  const auto inv = parse({"check-config", "--election", "e"});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  EXPECT_EQ(inv.cfg.store.kind, "redis");
  const std::string yaml = describe_config(inv.cfg);
  EXPECT_NE(yaml.find("store:\n  kind: \"redis\"\nredis:\n"), std::string::npos) << yaml;
  EXPECT_EQ(from_yaml(yaml).store.kind, "redis");
}

TEST(store_kind, redis_is_accepted_from_every_source) {
  EXPECT_EQ(from_yaml("store: {kind: redis}").store.kind, "redis");
  EXPECT_EQ(
      redis_settings_of(from_yaml("store:\n  kind: redis\nredis: {url: \"redis://h:7000/2\"}\n"))
          .url,
      "redis://h:7000/2");
  EXPECT_EQ(from_yaml("store:\n").store.kind, "redis");
  EXPECT_EQ(from_yaml("", {{"BATON_STORE_KIND", "redis"}}).store.kind, "redis");
  const auto inv = parse({"run", "--election", "e", "--store-kind", "redis", "--redis-url", "redis://h:1"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(inv.cfg.store.kind, "redis");
  EXPECT_EQ(redis_settings_of(inv.cfg).url, "redis://h:1");
}

TEST(store_kind, an_unknown_kind_names_the_option_the_known_kinds_and_the_source) {
  EXPECT_EQ(kind_error_of([] { from_yaml("store: {kind: consul}"); }),
            "store.kind: consul is not allowed: must be a store kind this build knows: redis, "
            "sentinel, cluster, redlock, postgres, etcd, zookeeper "
            "(from test.yaml)");
  EXPECT_EQ(kind_error_of([] {
              from_yaml("", {{"BATON_STORE_KIND", "consul"}});
            }),
            "store.kind: consul is not allowed: must be a store kind this build knows: redis, "
            "sentinel, cluster, redlock, postgres, etcd, zookeeper "
            "(from BATON_STORE_KIND)");
  EXPECT_EQ(kind_error_of([] { from_yaml("store: {kind: \"\"}"); }),
            "store.kind: \"\" is not allowed: must be a store kind this build knows: redis, "
            "sentinel, cluster, redlock, postgres, etcd, zookeeper "
            "(from test.yaml)");
  // Exact spelling: kinds are names, not guesses.
  EXPECT_NE(kind_error_of([] { from_yaml("store: {kind: Redis}"); }).find("store.kind: Redis"),
            std::string::npos);

  const auto inv = parse({"run", "--election", "e", "--store-kind", "consul"});
  EXPECT_EQ(inv.what, invocation::verb::exit_now);
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_EQ(inv.message,
            "baton: store.kind: consul is not allowed: must be a store kind this build knows: redis, sentinel, cluster, redlock, postgres, etcd, zookeeper "
            "(from --store-kind)");
}

TEST(store_kind, the_store_section_is_checked_like_the_others) {
  std::string message;
  try {
    from_yaml("store: redis");
  } catch (const config_error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("store: a value is not allowed: must be a map of options"),
            std::string::npos)
      << message;
  try {
    from_yaml("store: {knd: redis}");
  } catch (const config_error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("unknown option store.knd (did you mean store.kind?)"), std::string::npos)
      << message;
}

TEST(store_kind, sighup_cannot_change_it) {
  config running = default_config();
  running.election = "jobs";
  running.node_id = "n1";
  fill_derived_defaults(running);
  config fresh = running;
  fresh.store.kind = "other";
  const auto plan = plan_reload(running, fresh);
  EXPECT_TRUE(plan.changes.empty());
  ASSERT_EQ(plan.refused.size(), 1u);
  EXPECT_EQ(plan.refused[0], "store.kind: redis -> other");
  EXPECT_EQ(plan.next.store.kind, "redis");
}

}  // namespace
}  // namespace baton
