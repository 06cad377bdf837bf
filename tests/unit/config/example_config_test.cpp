// config/baton.yaml, the documented example, must load with the real loader
// and hold the defaults it claims to show.
#include <gtest/gtest.h>

#include <filesystem>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "baton/redis_settings.hpp"
#include "support/built_paths.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

std::string example_path() {
  return (std::filesystem::path(baton::testing::source_root_path()) / "config" / "baton.yaml")
      .string();
}

TEST(example_config, loads_and_matches_the_defaults) {
  ASSERT_TRUE(std::filesystem::exists(example_path())) << example_path();
  config_loader loader([](const std::string&) -> std::optional<std::string> { return std::nullopt; });
  loader.load_file(example_path());
  const config& raw = loader.current();
  const config defaults;
  EXPECT_EQ(raw.election, "example");
  EXPECT_EQ(raw.node_id, defaults.node_id);
  EXPECT_EQ(redis_settings_of(raw).url, redis_settings_of(defaults).url);
  EXPECT_EQ(redis_settings_of(raw).password_file, redis_settings_of(defaults).password_file);
  EXPECT_EQ(redis_settings_of(raw).connect_timeout, redis_settings_of(defaults).connect_timeout);
  EXPECT_EQ(redis_settings_of(raw).command_timeout, redis_settings_of(defaults).command_timeout);
  EXPECT_EQ(raw.lease.ttl, defaults.lease.ttl);
  EXPECT_EQ(raw.lease.renew_interval, defaults.lease.renew_interval);
  EXPECT_EQ(raw.lease.renew_deadline, defaults.lease.renew_deadline);
  EXPECT_EQ(raw.lease.retry_interval, defaults.lease.retry_interval);
  EXPECT_DOUBLE_EQ(raw.lease.drift_factor, defaults.lease.drift_factor);
  EXPECT_EQ(raw.hooks.on_start, defaults.hooks.on_start);
  EXPECT_EQ(raw.hooks.on_stop, defaults.hooks.on_stop);
  EXPECT_EQ(raw.hooks.timeout, defaults.hooks.timeout);
  EXPECT_EQ(raw.child.command, defaults.child.command);
  EXPECT_EQ(raw.child.stop_timeout, defaults.child.stop_timeout);
  EXPECT_EQ(raw.child.on_exit, defaults.child.on_exit);
  EXPECT_EQ(raw.socket.path, defaults.socket.path);
  EXPECT_EQ(raw.socket.mode, defaults.socket.mode);
  EXPECT_EQ(raw.socket.require_ack, defaults.socket.require_ack);
  EXPECT_EQ(raw.socket.allowed_uids, defaults.socket.allowed_uids);
  EXPECT_EQ(raw.log.level, defaults.log.level);
  EXPECT_EQ(raw.log.format, defaults.log.format);
  EXPECT_EQ(raw.http.listen, defaults.http.listen);
  EXPECT_EQ(raw.lease.resign_cooldown, defaults.lease.resign_cooldown);

  const config cfg = loader.finish();
  EXPECT_EQ(cfg.lease.renew_interval, 3333ms);
}

TEST(example_config, check_config_accepts_it) {
  const std::string path = example_path();
  const char* argv[] = {"baton", "check-config", "--config", path.c_str(), nullptr};
  const auto inv = parse_invocation(4, argv, [](const std::string&) -> std::optional<std::string> {
    return std::nullopt;
  });
  EXPECT_EQ(inv.what, invocation::verb::check_config) << inv.message;
}

}  // namespace
}  // namespace baton
