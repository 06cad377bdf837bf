// validate_config: every rule, each failure a one-line config_error that
// names the option.
#include <gtest/gtest.h>

#include <functional>

#include "baton/config_load.hpp"
#include "baton/redis_settings.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

config valid() {
  config cfg = default_config();
  cfg.election = "jobs";
  cfg.node_id = "node-1";
  fill_derived_defaults(cfg);
  return cfg;
}

// Applies `change` to a valid config and returns the error (or "" if none).
std::string error_after(const std::function<void(config&)>& change, std::string* option = nullptr) {
  config cfg = valid();
  change(cfg);
  try {
    validate_config(cfg);
  } catch (const config_error& e) {
    if (option != nullptr) *option = e.option();
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  return {};
}

struct rule_case {
  const char* name;
  std::function<void(config&)> change;
  const char* option;
  const char* expect;  ///< part of the message
};

TEST(validate, a_valid_config_passes) { EXPECT_NO_THROW(validate_config(valid())); }

TEST(validate, each_rule_names_its_option) {
  const rule_case cases[] = {
      {"election missing", [](config& c) { c.election.clear(); }, "election",
       "election is required"},
      {"election too long", [](config& c) { c.election = std::string(65, 'a'); }, "election",
       "1 to 64 characters"},
      {"election bad char", [](config& c) { c.election = "a b"; }, "election", "A-Z a-z 0-9 . _ -"},
      {"election no @", [](config& c) { c.election = "a@b"; }, "election", "is not allowed"},
      {"node_id too long", [](config& c) { c.node_id = std::string(129, 'n'); }, "node_id",
       "1 to 128 characters"},
      {"node_id bad char", [](config& c) { c.node_id = "n/1"; }, "node_id", "@"},
      {"redis url", [](config& c) { redis_settings_of(c).url = "redis://h:0"; }, "redis.url",
       "1 to 65535"},
      {"connect timeout", [](config& c) { redis_settings_of(c).connect_timeout = 0ms; },
       "redis.connect_timeout", "greater than 0"},
      {"command timeout", [](config& c) { redis_settings_of(c).command_timeout = -1ms; },
       "redis.command_timeout", "greater than 0"},
      {"ttl too small", [](config& c) { c.lease.ttl = 99ms; }, "lease.ttl", "at least 100ms"},
      {"drift negative", [](config& c) { c.lease.drift_factor = -0.1; }, "lease.drift_factor",
       "less than 0.5"},
      {"drift too big", [](config& c) { c.lease.drift_factor = 0.5; }, "lease.drift_factor",
       "lease.drift_factor: 0.5 is not allowed"},
      {"drift nan",
       [](config& c) { c.lease.drift_factor = std::numeric_limits<double>::quiet_NaN(); },
       "lease.drift_factor", "at least 0"},
      {"renew interval zero", [](config& c) { c.lease.renew_interval = 0ms; },
       "lease.renew_interval", "greater than 0"},
      {"retry zero", [](config& c) { c.lease.retry_interval = 0ms; }, "lease.retry_interval",
       "greater than 0"},
      {"deadline below interval",
       [](config& c) { c.lease.renew_deadline = c.lease.renew_interval; }, "lease.renew_deadline",
       "greater than lease.renew_interval"},
      {"deadline past ttl minus drift", [](config& c) { c.lease.renew_deadline = 9898ms; },
       "lease.renew_deadline", "less than lease.ttl minus drift (9898ms)"},
      {"hook timeout", [](config& c) { c.hooks.timeout = 0ms; }, "hooks.timeout", "greater than 0"},
      {"hook empty program",
       [](config& c) {
         c.hooks.on_start = {"", "x"};
       },
       "hooks.on_start", "program"},
      {"on_stop empty program", [](config& c) { c.hooks.on_stop = {""}; }, "hooks.on_stop",
       "program"},
      {"child empty program", [](config& c) { c.child.command = {""}; }, "child.command",
       "program"},
      {"stop timeout", [](config& c) { c.child.stop_timeout = 0ms; }, "child.stop_timeout",
       "greater than 0"},
      {"on_exit", [](config& c) { c.child.on_exit = static_cast<child_exit_policy>(7); },
       "child.on_exit", "compete or exit"},
      {"socket mode", [](config& c) { c.socket.mode = 01000; }, "socket.mode",
       "socket.mode: 01000 is not allowed: must be at most 0777"},
      {"socket path", [](config& c) { c.socket.path = "/" + std::string(107, 'p'); }, "socket.path",
       "107 bytes"},
      {"log level", [](config& c) { c.log.level = "verbose"; }, "log.level",
       "trace, debug, info, warn (or warning), error, critical, off"},
      {"log level case", [](config& c) { c.log.level = "INFO"; }, "log.level", "must be one of"},
  };
  for (const auto& c : cases) {
    std::string option;
    const std::string message = error_after(c.change, &option);
    EXPECT_EQ(option, c.option) << c.name << ": " << message;
    EXPECT_NE(message.find(c.expect), std::string::npos) << c.name << ": " << message;
    EXPECT_EQ(message.rfind(c.option, 0), 0u) << c.name << ": " << message;
  }
}

TEST(validate, boundaries_that_are_allowed) {
  EXPECT_EQ(error_after([](config& c) {
              c.lease.ttl = 100ms;
              c.lease.drift_factor = 0;
              c.lease.renew_interval = 30ms;
              c.lease.renew_deadline = 97ms;  // < 100 - 2
            }),
            "");
  EXPECT_EQ(error_after([](config& c) { c.lease.drift_factor = 0.499; c.lease.renew_deadline = 4s; }), "");
  EXPECT_EQ(error_after([](config& c) { c.socket.mode = 0777; }), "");
  EXPECT_EQ(error_after([](config& c) { c.election = std::string(64, 'e'); }), "");
  EXPECT_EQ(error_after([](config& c) { c.node_id = std::string(128, 'n'); }), "");
  EXPECT_EQ(error_after([](config& c) { c.node_id = "A.z_0-9@host"; }), "");
  for (const char* level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    EXPECT_EQ(error_after([level](config& c) { c.log.level = level; }), "") << level;
  }
}

TEST(validate, deadline_message_shows_both_bounds) {
  const std::string message = error_after([](config& c) {
    c.lease.ttl = 10s;
    c.lease.renew_interval = 3s;
    c.lease.renew_deadline = 9900ms;
  });
  EXPECT_EQ(message,
            "lease.renew_deadline: 9900ms is not allowed: must be greater than lease.renew_interval "
            "(3s) and less than lease.ttl minus drift (9898ms)");
}

TEST(validate, drift_is_ttl_times_factor_plus_two_ms) {
  lease_config lease;
  lease.ttl = 10s;
  lease.drift_factor = 0.01;
  EXPECT_EQ(lease_drift(lease), 102ms);
  lease.drift_factor = 0;
  EXPECT_EQ(lease_drift(lease), 2ms);
  lease.ttl = 333ms;
  lease.drift_factor = 0.01;
  EXPECT_EQ(lease_drift(lease), 6ms);  // 3.33 rounds up to 4
}

TEST(validate, origin_is_appended_when_known) {
  config cfg = valid();
  cfg.lease.ttl = 50ms;
  try {
    validate_config(cfg, {{"lease.ttl", "from --ttl"}});
    FAIL() << "expected config_error";
  } catch (const config_error& e) {
    EXPECT_STREQ(e.what(), "lease.ttl: 50ms is not allowed: must be at least 100ms (from --ttl)");
  }
}

TEST(validate, blames_the_option_the_user_set) {
  config_loader loader({});
  loader.set("election", "e", "test");
  loader.set("lease.renew_interval", "8s", "--renew-interval");
  try {
    loader.finish();
    FAIL() << "expected config_error";
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "lease.renew_interval");
    EXPECT_STREQ(e.what(),
                 "lease.renew_interval: 8s is not allowed: must be less than lease.renew_deadline "
                 "(6666ms) (from --renew-interval)");
  }
  config_loader derived({});
  derived.set("election", "e", "test");
  derived.set("lease.drift_factor", "0.49", "--drift-factor");
  derived.set("lease.ttl", "100ms", "--ttl");
  try {
    derived.finish();
    FAIL() << "expected config_error";
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "lease.renew_deadline");
    EXPECT_NE(std::string(e.what()).find("(default: lease.ttl * 2 / 3)"), std::string::npos) << e.what();
  }
}

TEST(config_error_format, one_line_with_escapes_and_quotes) {
  EXPECT_STREQ(config_error("a.b", "", "x").what(), "a.b: \"\" is not allowed: x");
  EXPECT_STREQ(config_error("a.b", "1\n2", "x").what(), "a.b: 1\\n2 is not allowed: x");
  const std::string long_value(500, 'v');
  EXPECT_LT(std::string(config_error("a", long_value, "x").what()).size(), 200u);
  EXPECT_STREQ(config_error::with_message("o", "line\nbreak").what(), "line\\nbreak");
  EXPECT_EQ(config_error::with_message("o", "m").option(), "o");
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

// describe_config writes YAML, which holds only UTF-8: a path or argv word
// with other bytes would come back as a different value, so it is refused.
TEST(validate_utf8, non_utf8_bytes_in_a_path_or_argv_are_refused) {
  config cfg = default_config();
  cfg.election = "jobs";
  cfg.node_id = "n1";
  fill_derived_defaults(cfg);
  EXPECT_NO_THROW(validate_config(cfg));
  cfg.socket.path = "/run/baton/caf\xc3\xa9.sock";  // é: valid
  EXPECT_NO_THROW(validate_config(cfg));
  for (const char* bad : {"/tmp/\xff", "/tmp/\xc3", "/tmp/\xc0\xaf", "/tmp/\xed\xa0\x80"}) {
    cfg.socket.path = bad;
    try {
      validate_config(cfg);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const config_error& e) {
      EXPECT_EQ(e.option(), "socket.path");
      EXPECT_NE(std::string(e.what()).find("UTF-8"), std::string::npos) << e.what();
    }
  }
  cfg.socket.path.clear();
  cfg.child.command = {"/bin/echo", "\xfe"};
  EXPECT_THROW(validate_config(cfg), config_error);
}

}  // namespace
}  // namespace baton
