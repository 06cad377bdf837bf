// The option table drives every source and every view of an option: each
// test walks the whole table, so an option added to it is covered here
// without a new test (only a sample value when the generic one is invalid).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "baton/config_reload.hpp"
#include "baton/redis_settings.hpp"
#include "config/option_table.hpp"
#include "config_schema/option_value.hpp"
#include "config_test_util.hpp"
#include "support/built_paths.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;
using namespace config_test_util;

// A value of each kind as a person would type it, unlike every default.
std::string generic_sample(value_kind kind) {
  switch (kind) {
    case value_kind::text:
      return "sample-1";
    case value_kind::secret_text:  // a URL of the section's own store: see sample_of
      return {};
    case value_kind::duration:
      return "1234ms";
    case value_kind::number:
      return "0.25";
    case value_kind::integer:
      return "5";
    case value_kind::argv:
      return "/bin/echo -v";
    case value_kind::file_mode:
      return "0600";
    case value_kind::exit_policy:
      return "exit";
    case value_kind::boolean:
      return "true";
    case value_kind::uid_list:
      return "7,8";
    case value_kind::word:  // the row's own words: see sample_of
      return {};
    case value_kind::log_format:
      return "json";
    case value_kind::url_list:
      return "redis://s1:7000,redis://s2:7000";
  }
  return {};
}

// A sample unlike the option's default: the generic one of its kind, except
// where that is the default (a boolean that defaults to true) or not a
// value of the option at all (a table name cannot hold '-').
std::string sample_of(const option_spec& spec) {
  if (spec.key == "postgres.create_schema" || spec.key == "child.park") return "false";
  if (spec.key == "postgres.table") return "sample_1";
  if (spec.key == "redis.url") return "redis://sample:7000/3";
  if (spec.key == "postgres.url") return "postgresql://sample:7000/app";
  if (spec.key == "redis.replica_ack") return "3";
  if (spec.key == "redis.tls_verify") return "ca";
  if (spec.key == "lease.failsafe") return "peers";
  if (spec.key == "lease.failsafe_listen") return "127.0.0.1:9465";
  if (spec.key == "lease.failsafe_address") return "10.0.0.1:9465";
  return generic_sample(spec.kind());
}

// A peer secret of the length lease.failsafe peers asks for.
const std::string& failsafe_secret_file() {
  static const temp_dir dir;
  static const std::string path = dir.write("peer-secret", std::string(40, 'k') + "\n");
  return path;
}

// A sample that also passes validation (in the context below), for the
// sources that go through finish(). store.kind has no valid value other than
// its default today; store_kind_test.cpp shows its flag and variable reach it
// through the rejection message instead.
std::string valid_sample(const option_spec& spec) {
  static const std::map<std::string_view, std::string> overrides = {
      {"store.kind", "redis"},
      {"lease.renew_deadline", "5s"},
      {"http.listen", "127.0.0.1:9464"},
      {"log.level", "debug"},
      {"log.format", "json"},
      {"redis.tls_verify", "ca"},
      {"redis.tls_server_name", "redis.internal"},
      {"redis.replica_ack", "2"},
      {"zookeeper.path", "/sample-1"},
      {"priority", "5"},
  };
  // A password file that exists (the password has one source only).
  static const temp_dir dir;
  static const std::string password_file = dir.write("pw", "ctx\n");
  if (spec.key == "redis.password_file" || spec.key == "postgres.password_file") return password_file;
  if (spec.key == "lease.failsafe_secret_file") return failsafe_secret_file();
  // TLS files must exist (the client certificate comes with its key).
  static const std::string pem = dir.write("tls.pem", "-\n");
  if (spec.key == "redis.tls_ca_file" || spec.key == "redis.tls_cert_file" ||
      spec.key == "redis.tls_key_file")
    return pem;
  if (spec.key == "redis.tls_ca_dir") return dir.path(".");
  const auto it = overrides.find(spec.key);
  return it != overrides.end() ? it->second : sample_of(spec);
}

// What every option needs besides its own sample to pass validation: a
// socket (for socket.require_ack), a fixed node_id (so configs compare), a
// rediss:// URL (for the redis.tls_* options), and a client certificate's
// partner file for `key` when it is one of the pair.
std::map<std::string, std::string> context_env(std::string_view key = {}) {
  std::map<std::string, std::string> env{{"BATON_SOCKET_PATH", "/tmp/ctx.sock"},
                                         {"BATON_NODE_ID", "ctx-node"},
                                         {"BATON_REDIS_URL", "rediss://ctx:6380"}};
  // lease.failsafe peers needs its secret and its peer port.
  if (key == "lease.failsafe") {
    env["BATON_LEASE_FAILSAFE_SECRET_FILE"] = failsafe_secret_file();
    env["BATON_LEASE_FAILSAFE_LISTEN"] = "127.0.0.1:9465";
  }
  if (key == "redis.tls_cert_file") env["BATON_REDIS_TLS_KEY_FILE"] = "/dev/null";
  if (key == "redis.tls_key_file") env["BATON_REDIS_TLS_CERT_FILE"] = "/dev/null";
  return env;
}

// The config that setting `key` to `text` through config_loader::set gives,
// in the same context: what every other source must agree with.
config reference(const option_spec& spec, const std::string& text) {
  config_loader loader(fake_env(context_env(spec.key)));
  loader.set("election", "e", "test");
  loader.load_environment();
  loader.set(std::string(spec.key), text, "test");
  return loader.finish();
}

bool differs_from_default(const option_spec& spec, const config& cfg) {
  return shown_option_value(spec, cfg) != shown_option_value(spec, default_config());
}

TEST(option_table, entries_are_well_formed) {
  std::set<std::string_view> keys, envs, flags, sections_done;
  std::string_view section = "(none yet)";
  for (const auto& spec : option_table()) {
    SCOPED_TRACE(std::string(spec.key));
    EXPECT_TRUE(keys.insert(spec.key).second) << "duplicate key";
    EXPECT_FALSE(spec.help.empty());
    EXPECT_TRUE(std::visit(
        [](const auto& f) {
          if constexpr (std::is_same_v<std::decay_t<decltype(f)>, word_field>) {
            return f.at != nullptr && f.read != nullptr && f.spelled != nullptr && f.copy != nullptr;
          } else {
            return f.get != nullptr;
          }
        },
        spec.field));
    // A section's options are contiguous: describe_config prints its header once.
    if (spec.section() != section) {
      EXPECT_TRUE(sections_done.insert(spec.section()).second) << "section split";
      section = spec.section();
    }
    if (!spec.env.empty()) {
      EXPECT_TRUE(envs.insert(spec.env).second) << "duplicate variable";
      std::string expected = "BATON_";
      for (char c : spec.key) {
        expected += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      }
      EXPECT_EQ(spec.env, expected);
    }
    if (!spec.flag.empty()) {
      EXPECT_TRUE(flags.insert(spec.flag).second) << "duplicate flag";
      EXPECT_EQ(spec.flag_name().rfind("--", 0), 0u);
      EXPECT_EQ(spec.placeholder.empty(), spec.kind() == value_kind::boolean);
    }
    if (spec.secret) {
      EXPECT_TRUE(spec.flag.empty()) << "a secret on argv is visible to every user";
      EXPECT_FALSE(spec.reloadable);
      EXPECT_FALSE(spec.env.empty()) << "a secret needs a source";
    }
    EXPECT_EQ(find_option(spec.key), &spec);
  }
}

TEST(option_table, option_at_finds_each_field_and_refuses_others) {
  const config cfg;
  EXPECT_EQ(option_name(cfg, cfg.lease.ttl), "lease.ttl");
  EXPECT_EQ(option_name(cfg, cfg.store.kind), "store.kind");
  EXPECT_EQ(option_name(cfg, redis_settings_of(cfg).password), "redis.password");
  for (const auto& spec : option_table()) {
    std::visit(
        [&](const auto& f) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(f)>, word_field>) {
            EXPECT_EQ(&option_at(cfg, f.get(const_cast<config&>(cfg))), &spec) << spec.key;
          }
        },
        spec.field);
  }
  // A word is found by its type and address alike.
  EXPECT_EQ(option_name(cfg, redis_settings_of(cfg).tls_verify), "redis.tls_verify");
  EXPECT_EQ(option_name(cfg, redis_settings_of(cfg).replica_ack), "redis.replica_ack");
  // Same address as lease.ttl, but not an option.
  EXPECT_THROW(option_at(cfg, cfg.lease), std::logic_error);
  const std::string elsewhere;
  EXPECT_THROW(option_at(cfg, elsewhere), std::logic_error);
}

TEST(option_table, every_variable_sets_its_option) {
  for (const auto& spec : option_table()) {
    if (spec.env.empty() || spec.secret) continue;
    SCOPED_TRACE(std::string(spec.env));
    const std::string text = sample_of(spec);
    config_loader from_env(fake_env({{std::string(spec.env), text}}));
    from_env.load_environment();
    config_loader by_key(fake_env({}));
    by_key.set(std::string(spec.key), text, "test");
    EXPECT_TRUE(differs_from_default(spec, from_env.current()));
    // The whole config, so the variable set this option and no other.
    EXPECT_EQ(describe_config(from_env.current()), describe_config(by_key.current()));
  }
}

TEST(option_table, every_flag_sets_its_option) {
  const std::string help = parse({"run", "--help"}).message;
  for (const auto& spec : option_table()) {
    if (spec.flag.empty()) continue;
    SCOPED_TRACE(std::string(spec.flag));
    const std::string text = valid_sample(spec);
    const auto inv = parse({"check-config", "--election", "e",
                            std::string(spec.flag_name()) + "=" + text},
                           context_env(spec.key));
    ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
    if (spec.key != "store.kind") EXPECT_TRUE(differs_from_default(spec, inv.cfg));
    EXPECT_EQ(describe_config(inv.cfg), describe_config(reference(spec, text)));
    EXPECT_NE(help.find(std::string(spec.flag_name()) + " "), std::string::npos) << help;
    EXPECT_NE(help.find("[" + std::string(spec.env) + "]"), std::string::npos) << help;
  }
}

TEST(option_table, every_yaml_key_sets_its_option) {
  for (const auto& spec : option_table()) {
    if (spec.secret) continue;
    SCOPED_TRACE(std::string(spec.key));
    const std::string text = sample_of(spec);
    // As YAML: argv is a real list; everything else a quoted scalar.
    std::string value = "\"" + text + "\"";
    if (spec.kind() == value_kind::argv) value = "[/bin/echo, -v]";
    if (spec.kind() == value_kind::url_list) value = "[redis://s1:7000, redis://s2:7000]";
    const std::string yaml = spec.section().empty()
                                 ? std::string(spec.key) + ": " + value
                                 : std::string(spec.section()) + ": {" + std::string(spec.name()) +
                                       ": " + value + "}";
    config_loader from_yaml_text(fake_env({}));
    from_yaml_text.load_yaml(yaml, "test.yaml");
    config_loader by_key(fake_env({}));
    by_key.set(std::string(spec.key), text, "test");
    EXPECT_TRUE(differs_from_default(spec, from_yaml_text.current()));
    EXPECT_EQ(describe_config(from_yaml_text.current()), describe_config(by_key.current()));
  }
}

TEST(option_table, check_config_lists_every_option_and_no_secret) {
  config cfg = from_yaml("", {{"BATON_REDIS_PASSWORD", "hunter2"}});
  ASSERT_EQ(redis_settings_of(cfg).password, "hunter2");
  const std::string text = describe_config(cfg);
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
  const YAML::Node yaml = YAML::Load(text);
  std::size_t top_level = 0;
  std::set<std::string_view> sections;
  for (const auto& spec : option_table()) {
    SCOPED_TRACE(std::string(spec.key));
    const YAML::Node node =
        spec.section().empty() ? yaml[std::string(spec.key)]
                               : yaml[std::string(spec.section())][std::string(spec.name())];
    if (spec.section().empty()) {
      ++top_level;
    } else {
      sections.insert(spec.section());
    }
    if (spec.secret) {
      EXPECT_FALSE(node.IsDefined()) << text;
      EXPECT_NE(text.find("  # " + std::string(spec.name()) + ": \"***\""), std::string::npos) << text;
      continue;
    }
    ASSERT_TRUE(node.IsDefined()) << text;
    // Printed from the table: loads back to the same value.
    config_loader again(fake_env({}));
    again.load_yaml(text, "described");
    EXPECT_EQ(shown_option_value(spec, again.current()), shown_option_value(spec, cfg));
  }
  EXPECT_EQ(yaml.size(), top_level + sections.size()) << "an option check-config prints is not in the table";
}

TEST(option_table, reload_rule_matches_plan_reload) {
  const config redis_election = from_yaml("", {{"BATON_NODE_ID", "n1"}});
  for (const auto& spec : option_table()) {
    SCOPED_TRACE(std::string(spec.key));
    config running = redis_election;
    // Another store's option is not compared at all; the store that reads
    // it (each store section is named as its kind) sorts it by the rule.
    if (!store_reads_section(running.store.kind, spec.section())) {
      config fresh = running;
      parse_option_text(spec, fresh, sample_of(spec));
      const reload_plan plan = plan_reload(running, fresh);
      EXPECT_TRUE(plan.changes.empty());
      EXPECT_TRUE(plan.refused.empty());
      running.store.kind = std::string(spec.section());
      ASSERT_TRUE(store_reads_section(running.store.kind, spec.section()));
    }
    config fresh = running;
    parse_option_text(spec, fresh, sample_of(spec));
    const reload_plan plan = plan_reload(running, fresh);
    const std::string prefix = std::string(spec.key) + ": ";
    if (spec.secret) {
      EXPECT_TRUE(plan.changes.empty());
      EXPECT_TRUE(plan.refused.empty());
      EXPECT_EQ(redis_settings_of(plan.next).password, redis_settings_of(running).password);
    } else if (spec.reloadable) {
      ASSERT_EQ(plan.changes.size(), 1u);
      EXPECT_EQ(plan.changes[0].rfind(prefix, 0), 0u) << plan.changes[0];
      EXPECT_TRUE(plan.refused.empty());
      EXPECT_EQ(shown_option_value(spec, plan.next), shown_option_value(spec, fresh));
    } else {
      ASSERT_EQ(plan.refused.size(), 1u);
      EXPECT_EQ(plan.refused[0].rfind(prefix, 0), 0u) << plan.refused[0];
      EXPECT_TRUE(plan.changes.empty());
      EXPECT_EQ(shown_option_value(spec, plan.next), shown_option_value(spec, running));
    }
  }
}

// docs/configuration.md (Reloading) documents this list; a flag flipped by mistake fails here.
TEST(option_table, reloadable_options_are_the_documented_ones) {
  std::set<std::string_view> reloadable;
  for (const auto& spec : option_table()) {
    if (spec.reloadable) reloadable.insert(spec.key);
  }
  EXPECT_EQ(reloadable, (std::set<std::string_view>{"child.stop_timeout", "hooks.on_start",
                                                    "hooks.on_stop", "hooks.timeout",
                                                    "lease.resign_cooldown", "log.level"}));
}

// config/baton.yaml is the reference users read: every option is in it with
// its variable and flag.
TEST(option_table, example_config_documents_every_option) {
  const auto path =
      std::filesystem::path(baton::testing::source_root_path()) / "config" / "baton.yaml";
  std::ifstream file(path);
  ASSERT_TRUE(file) << path;
  std::stringstream buffer;
  buffer << file.rdbuf();
  const std::string text = buffer.str();
  const YAML::Node yaml = YAML::Load(text);
  for (const auto& spec : option_table()) {
    SCOPED_TRACE(std::string(spec.key));
    if (!spec.env.empty()) EXPECT_NE(text.find(spec.env), std::string::npos);
    if (spec.secret) continue;
    if (!spec.flag.empty()) EXPECT_NE(text.find(spec.flag_name()), std::string::npos);
    const YAML::Node node =
        spec.section().empty() ? yaml[std::string(spec.key)]
                               : yaml[std::string(spec.section())][std::string(spec.name())];
    EXPECT_TRUE(node.IsDefined());
  }
}

}  // namespace
}  // namespace baton
