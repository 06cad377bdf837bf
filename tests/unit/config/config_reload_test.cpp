// SIGHUP reload planning: allowed changes are listed and applied together;
// any change that needs a restart refuses the whole reload.
#include "baton/config_reload.hpp"
#include "baton/config_load.hpp"
#include "baton/redis_settings.hpp"
#include "postgres/postgres_settings.hpp"

#include <gtest/gtest.h>

namespace baton {
namespace {

using namespace std::chrono_literals;

config base() {
  config c = default_config();
  c.election = "jobs";
  c.node_id = "node-a";
  c.lease.ttl = 9000ms;
  c.lease.renew_interval = 3000ms;
  c.lease.renew_deadline = 6000ms;
  c.lease.retry_interval = 1000ms;
  c.lease.resign_cooldown = 9000ms;
  redis_settings_of(c).command_timeout = 1000ms;
  return c;
}

TEST(config_reload, nothing_changed_means_an_empty_plan) {
  auto plan = plan_reload(base(), base());
  EXPECT_TRUE(plan.changes.empty());
  EXPECT_TRUE(plan.refused.empty());
}

TEST(config_reload, hooks_timeouts_and_level_change_at_runtime) {
  auto fresh = base();
  fresh.hooks.on_start = {"/bin/echo", "hi"};
  fresh.hooks.timeout = 10s;
  fresh.child.stop_timeout = 4s;
  fresh.log.level = "debug";
  auto plan = plan_reload(base(), fresh);
  EXPECT_TRUE(plan.refused.empty());
  ASSERT_EQ(plan.changes.size(), 4u);
  EXPECT_EQ(plan.changes[0], "child.stop_timeout: 10s -> 4s");
  EXPECT_EQ(plan.next.hooks.on_start, fresh.hooks.on_start);
  EXPECT_EQ(plan.next.hooks.timeout, 10s);
  EXPECT_EQ(plan.next.child.stop_timeout, 4s);
  EXPECT_EQ(plan.next.log.level, "debug");
}

TEST(config_reload, election_redis_lease_and_socket_are_refused) {
  auto fresh = base();
  fresh.election = "other";
  fresh.lease.ttl = 5000ms;
  redis_settings_of(fresh).url = "redis://10.0.0.1:6379";
  fresh.socket.path = "/run/baton/x.sock";
  fresh.http.listen = "127.0.0.1:9464";
  fresh.log.level = "debug";
  auto plan = plan_reload(base(), fresh);
  EXPECT_EQ(plan.changes.size(), 1u);
  ASSERT_EQ(plan.refused.size(), 5u);
  std::string all;
  for (auto& line : plan.refused) all += line + "\n";
  EXPECT_NE(all.find("election: jobs -> other"), std::string::npos) << all;
  EXPECT_NE(all.find("lease.ttl: 9s -> 5s"), std::string::npos) << all;
  EXPECT_NE(all.find("redis.url"), std::string::npos) << all;
  EXPECT_NE(all.find("socket.path"), std::string::npos) << all;
  EXPECT_NE(all.find("http.listen"), std::string::npos) << all;
}

// A shorter ttl moves every derived timeout, also those of stores the
// election does not use: the refusal names only what the running store reads.
TEST(config_reload, another_stores_options_are_not_named) {
  auto running = base();
  postgres_settings_of(running).command_timeout = 1000ms;
  auto fresh = base();
  fresh.lease.ttl = 3000ms;
  redis_settings_of(fresh).command_timeout = 500ms;
  postgres_settings_of(fresh).command_timeout = 500ms;
  auto plan = plan_reload(running, fresh);
  std::string all;
  for (auto& line : plan.refused) all += line + "\n";
  EXPECT_NE(all.find("lease.ttl: 9s -> 3s"), std::string::npos) << all;
  EXPECT_NE(all.find("redis.command_timeout: 1s -> 500ms"), std::string::npos) << all;
  EXPECT_EQ(all.find("postgres."), std::string::npos) << all;

  // On a postgres election it is the other way round.
  running.store.kind = fresh.store.kind = "postgres";
  plan = plan_reload(running, fresh);
  all.clear();
  for (auto& line : plan.refused) all += line + "\n";
  EXPECT_NE(all.find("postgres.command_timeout: 1s -> 500ms"), std::string::npos) << all;
  EXPECT_EQ(all.find("redis."), std::string::npos) << all;

  // Moving to another store names the options of both.
  running.store.kind = "redis";
  plan = plan_reload(running, fresh);
  all.clear();
  for (auto& line : plan.refused) all += line + "\n";
  EXPECT_NE(all.find("store.kind: redis -> postgres"), std::string::npos) << all;
  EXPECT_NE(all.find("postgres.command_timeout"), std::string::npos) << all;
  EXPECT_NE(all.find("redis.command_timeout"), std::string::npos) << all;
}

TEST(config_reload, the_password_is_never_compared_nor_shown) {
  auto running = base();
  redis_settings_of(running).password = "hunter2";
  auto fresh = base();  // the environment that held it was scrubbed
  auto plan = plan_reload(running, fresh);
  EXPECT_TRUE(plan.refused.empty());
  EXPECT_TRUE(plan.changes.empty());
  EXPECT_EQ(redis_settings_of(plan.next).password, "hunter2");
}

}  // namespace
}  // namespace baton
