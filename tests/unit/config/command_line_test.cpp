// parse_invocation: subcommands, flags, precedence across sources, the child
// command after --, help/version/usage exit codes, describe_config, and a
// barrage of garbage that must never escape as an exception.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "baton/redis_settings.hpp"
#include "baton/store_registry.hpp"
#include "config_test_util.hpp"
#include "postgres/postgres_settings.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;
using namespace config_test_util;

TEST(command_line, run_with_flags) {
  const auto inv = parse({"run", "--election", "jobs", "--node-id", "n1", "--ttl", "20s",
                          "--renew-interval", "5s", "--renew-deadline", "12s", "--retry-interval",
                          "700ms", "--drift-factor", "0.02", "--redis-url", "redis://h:7000/1",
                          "--redis-connect-timeout", "3s", "--redis-timeout", "400ms",
                          "--on-start", R"(["/bin/echo","a b"])", "--on-stop", "/bin/true -q",
                          "--hook-timeout", "5s", "--stop-timeout", "6s", "--on-child-exit", "exit",
                          "--socket", "/tmp/b.sock", "--socket-mode", "600", "--log-level", "debug"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  const config& c = inv.cfg;
  EXPECT_EQ(c.election, "jobs");
  EXPECT_EQ(c.node_id, "n1");
  EXPECT_EQ(c.lease.ttl, 20s);
  EXPECT_EQ(c.lease.renew_interval, 5s);
  EXPECT_EQ(c.lease.renew_deadline, 12s);
  EXPECT_EQ(c.lease.retry_interval, 700ms);
  EXPECT_DOUBLE_EQ(c.lease.drift_factor, 0.02);
  EXPECT_EQ(redis_settings_of(c).url, "redis://h:7000/1");
  EXPECT_EQ(redis_settings_of(c).connect_timeout, 3s);
  EXPECT_EQ(redis_settings_of(c).command_timeout, 400ms);
  EXPECT_EQ(c.hooks.on_start, (std::vector<std::string>{"/bin/echo", "a b"}));
  EXPECT_EQ(c.hooks.on_stop, (std::vector<std::string>{"/bin/true", "-q"}));
  EXPECT_EQ(c.hooks.timeout, 5s);
  EXPECT_EQ(c.child.stop_timeout, 6s);
  EXPECT_EQ(c.child.on_exit, child_exit_policy::exit);
  EXPECT_EQ(c.socket.path, "/tmp/b.sock");
  EXPECT_EQ(c.socket.mode, 0600u);
  EXPECT_EQ(c.log.level, "debug");
  EXPECT_TRUE(c.child.command.empty());
}

TEST(command_line, flag_equals_form) {
  const auto inv = parse({"check-config", "--election=jobs", "--ttl=3s"});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  EXPECT_EQ(inv.cfg.lease.ttl, 3s);
}

TEST(command_line, everything_after_double_dash_is_the_child) {
  const auto inv = parse({"run", "--election", "jobs", "--", "/bin/cat", "--help", "--ttl",
                          "x y", "--"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(inv.cfg.child.command,
            (std::vector<std::string>{"/bin/cat", "--help", "--ttl", "x y", "--"}));
  EXPECT_EQ(inv.cfg.lease.ttl, 10s);
}

TEST(command_line, child_on_the_command_line_replaces_the_file) {
  temp_dir dir;
  const std::string file = dir.write("b.yaml", "election: f\nchild: {command: [/bin/ls]}\n");
  const auto inv = parse({"run", "--config", file, "--", "/bin/cat"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(inv.cfg.child.command, (std::vector<std::string>{"/bin/cat"}));
  const auto kept = parse({"run", "--config", file});
  EXPECT_EQ(kept.cfg.child.command, (std::vector<std::string>{"/bin/ls"}));
}

TEST(command_line, nothing_after_double_dash_is_an_error) {
  const auto inv = parse({"run", "--election", "jobs", "--"});
  EXPECT_EQ(inv.what, invocation::verb::exit_now);
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("child.command"), std::string::npos) << inv.message;
}

TEST(command_line, positional_without_double_dash_hints_at_it) {
  const auto inv = parse({"run", "--election", "jobs", "/bin/cat"});
  EXPECT_EQ(inv.what, invocation::verb::exit_now);
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("after --"), std::string::npos) << inv.message;
  EXPECT_EQ(inv.message.find('\n'), std::string::npos) << inv.message;
}

// A boolean flag takes its value after a space as after '=', but only a
// boolean word: anything else is not its value, and the words after -- are
// the child's.
TEST(command_line, a_boolean_flag_takes_a_boolean_word_after_a_space) {
  struct row {
    std::vector<std::string> args;
    bool create_schema;
    bool park;
  };
  for (const auto& r : std::vector<row>{
           {{"--postgres-create-schema", "false"}, false, true},
           {{"--postgres-create-schema=false"}, false, true},
           {{"--postgres-create-schema", "OFF", "--park", "no"}, false, false},
           {{"--park", "0", "--postgres-create-schema", "yes"}, true, false},
           {{"--park", "--postgres-create-schema", "false"}, false, true},
           {{"--park", "false", "--", "/bin/echo", "true"}, true, false},
           {{"--park", "--", "/bin/echo", "false"}, true, true},
       }) {
    std::vector<std::string> args{"run", "--election", "jobs"};
    args.insert(args.end(), r.args.begin(), r.args.end());
    if (std::find(args.begin(), args.end(), "--") == args.end()) {
      args.insert(args.end(), {"--", "/bin/true"});
    }
    const auto inv = parse(args);
    ASSERT_EQ(inv.what, invocation::verb::run) << args[3] << ": " << inv.message;
    EXPECT_EQ(postgres_settings_of(inv.cfg).create_schema, r.create_schema) << args[3];
    EXPECT_EQ(inv.cfg.child.park, r.park) << args[3];
  }
  const auto child = parse({"run", "--election", "jobs", "--park", "--", "/bin/echo", "false"});
  EXPECT_EQ(child.cfg.child.command, (std::vector<std::string>{"/bin/echo", "false"}));
  // A word that is not a boolean stays a stray word.
  const auto stray = parse({"run", "--election", "jobs", "--park", "maybe"});
  EXPECT_EQ(stray.what, invocation::verb::exit_now);
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.message.find("maybe"), std::string::npos) << stray.message;
}

// A flag that does not exist names the one probably meant, as an unknown
// variable does: a near miss, or an option's YAML name typed as a flag.
TEST(command_line, an_unknown_flag_names_the_flag_meant) {
  struct row {
    std::vector<std::string> args;
    std::string said;
  };
  for (const auto& r : std::vector<row>{
           {{"--lease-ttl", "3s"}, "unknown flag --lease-ttl (did you mean --ttl, the flag of lease.ttl?)"},
           {{"--lease.ttl=3s"}, "unknown flag --lease.ttl (did you mean --ttl, the flag of lease.ttl?)"},
           {{"--redis-command-timeout", "1s"},
            "unknown flag --redis-command-timeout (did you mean --redis-timeout, the flag of "
            "redis.command_timeout?)"},
           {{"--redis-comand-timeout", "1s"},
            "unknown flag --redis-comand-timeout (did you mean --redis-timeout?)"},
           {{"--tll", "1s"}, "unknown flag --tll (did you mean --ttl?)"},
           {{"--confg", "x.yaml"}, "unknown flag --confg (did you mean --config?)"},
           {{"--frobnicate"}, "unknown flag --frobnicate; see baton --help"},
       }) {
    for (const char* verb : {"run", "check-config", "check-store", "init-store"}) {
      std::vector<std::string> args{verb, "--election", "jobs"};
      args.insert(args.end(), r.args.begin(), r.args.end());
      const auto inv = parse(args);
      EXPECT_EQ(inv.what, invocation::verb::exit_now) << r.args[0];
      EXPECT_EQ(inv.exit_code, 2) << r.args[0];
      EXPECT_EQ(inv.message.rfind("baton: ", 0), 0u) << inv.message;
      EXPECT_NE(inv.message.find(r.said), std::string::npos) << verb << ": " << inv.message;
      EXPECT_EQ(inv.message.find('\n'), std::string::npos) << inv.message;
    }
  }
}

// Precedence: one test per level, each adding a source over the previous.
TEST(precedence, default_when_nothing_is_set) {
  const auto inv = parse({"check-config", "--election", "e"});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  EXPECT_EQ(inv.cfg.lease.ttl, 10s);
  EXPECT_EQ(inv.cfg.log.level, "info");
}

TEST(precedence, file_over_default) {
  temp_dir dir;
  const std::string file = dir.write("b.yaml", "election: e\nlease: {ttl: 20s}\nlog: {level: warn}\n");
  const auto inv = parse({"check-config", "--config", file});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  EXPECT_EQ(inv.cfg.lease.ttl, 20s);
  EXPECT_EQ(inv.cfg.log.level, "warn");
}

TEST(precedence, env_over_file) {
  temp_dir dir;
  const std::string file = dir.write("b.yaml", "election: e\nlease: {ttl: 20s}\nlog: {level: warn}\n");
  const auto inv = parse({"check-config", "--config", file}, {{"BATON_LEASE_TTL", "30s"}});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  EXPECT_EQ(inv.cfg.lease.ttl, 30s);
  EXPECT_EQ(inv.cfg.log.level, "warn");  // not overridden: still from the file
}

TEST(precedence, flag_over_env) {
  temp_dir dir;
  const std::string file = dir.write("b.yaml", "election: e\nlease: {ttl: 20s}\n");
  const auto inv =
      parse({"check-config", "--config", file, "--ttl", "40s"}, {{"BATON_LEASE_TTL", "30s"}});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  EXPECT_EQ(inv.cfg.lease.ttl, 40s);
}

TEST(precedence, config_path_from_env_and_flag_wins) {
  temp_dir dir;
  const std::string a = dir.write("a.yaml", "election: from-a\n");
  const std::string b = dir.write("b.yaml", "election: from-b\n");
  EXPECT_EQ(parse({"check-config"}, {{"BATON_CONFIG", a}}).cfg.election, "from-a");
  EXPECT_EQ(parse({"check-config", "--config", b}, {{"BATON_CONFIG", a}}).cfg.election, "from-b");
  EXPECT_EQ(parse({"check-config", "-c", b}).cfg.election, "from-b");
}

TEST(precedence, derived_defaults_follow_the_winning_ttl) {
  const auto inv = parse({"check-config", "--election", "e", "--ttl", "3s"}, {{"BATON_LEASE_TTL", "30s"}});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  EXPECT_EQ(inv.cfg.lease.renew_interval, 1s);
  EXPECT_EQ(inv.cfg.lease.renew_deadline, 2s);
}

TEST(command_line, help_exits_zero_with_text) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"run", "--help"}, {"check-config", "-h"}}) {
    const auto inv = parse(args);
    EXPECT_EQ(inv.what, invocation::verb::exit_now) << args.front();
    EXPECT_EQ(inv.exit_code, 0) << args.front();
    EXPECT_NE(inv.message.find("--"), std::string::npos) << inv.message;
  }
  const auto run_help = parse({"run", "--help"});
  EXPECT_NE(run_help.message.find("--ttl"), std::string::npos) << run_help.message;
  EXPECT_NE(run_help.message.find("BATON_LEASE_TTL"), std::string::npos) << run_help.message;
  EXPECT_EQ(run_help.message.find("--redis-password "), std::string::npos);
}

// Its first line says what baton is: on every store the registry holds, not
// on Redis alone.
TEST(command_line, help_names_every_store_kind) {
  const auto help = parse({"--help"}).message;
  const auto first_line = help.substr(0, help.find('\n'));
  for (const store_kind* kind : store_kinds()) {
    EXPECT_NE(first_line.find(std::string(kind->label)), std::string::npos)
        << kind->name << " is missing from: " << first_line;
  }
}

TEST(command_line, help_does_not_need_a_valid_config) {
  const auto inv = parse({"run", "--help"}, {{"BATON_LEASE_TTL", "garbage"}});
  EXPECT_EQ(inv.exit_code, 0);
}

TEST(command_line, version_forms) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"version"}, {"--version"}}) {
    const auto inv = parse(args);
    EXPECT_EQ(inv.what, invocation::verb::version) << args.front();
    EXPECT_EQ(inv.message, std::string("baton ") + BATON_VERSION);
  }
}

TEST(command_line, no_subcommand_prints_usage_and_exits_two) {
  auto inv = parse({});
  EXPECT_EQ(inv.what, invocation::verb::exit_now);
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("run"), std::string::npos) << inv.message;
  EXPECT_NE(inv.message.find("check-config"), std::string::npos) << inv.message;
  const char* only_name[] = {"baton", nullptr};
  inv = parse_invocation(1, only_name, fake_env({}));
  EXPECT_EQ(inv.exit_code, 2);
  inv = parse_invocation(0, nullptr, fake_env({}));
  EXPECT_EQ(inv.exit_code, 2);
}

TEST(command_line, usage_errors_exit_two_with_one_line) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"frobnicate"},
           {"run", "--no-such-flag"},
           {"run", "--ttl"},
           {"--ttl", "5s", "run"},
           {"version", "--ttl", "5s"},
           {"--redis-password", "x"},
           {"run", "--redis-password", "x"},
       }) {
    const auto inv = parse(args);
    EXPECT_EQ(inv.what, invocation::verb::exit_now) << args.front();
    EXPECT_EQ(inv.exit_code, 2) << args.front();
    EXPECT_EQ(inv.message.rfind("baton: ", 0), 0u) << inv.message;
    EXPECT_EQ(inv.message.find('\n'), std::string::npos) << inv.message;
  }
}

TEST(command_line, config_errors_exit_two_naming_the_option) {
  auto inv = parse({"run", "--election", "jobs", "--ttl", "10"});
  EXPECT_EQ(inv.what, invocation::verb::exit_now);
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_EQ(inv.message.rfind("baton: lease.ttl: 10 is not allowed: ", 0), 0u) << inv.message;
  EXPECT_NE(inv.message.find("(from --ttl)"), std::string::npos) << inv.message;

  inv = parse({"run"});
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("election is required"), std::string::npos) << inv.message;

  inv = parse({"run", "--election", "e", "--config", "/nonexistent/baton.yaml"});
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("/nonexistent/baton.yaml"), std::string::npos) << inv.message;

  inv = parse({"run", "--election", "e", "--on-child-exit", "restart"});
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("child.on_exit"), std::string::npos) << inv.message;
}

TEST(command_line, password_is_refused_in_a_flag_url) {
  const auto inv = parse({"run", "--election", "e", "--redis-url", "redis://:hunter2@h:1"});
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("BATON_REDIS_PASSWORD"), std::string::npos) << inv.message;
  EXPECT_EQ(inv.message.find("hunter2"), std::string::npos) << inv.message;
  // In the environment it is accepted (and used).
  const auto ok = parse({"run", "--election", "e"}, {{"BATON_REDIS_URL", "redis://:hunter2@h:1"}});
  ASSERT_EQ(ok.what, invocation::verb::run) << ok.message;
  EXPECT_EQ(redis_settings_of(ok.cfg).password, "hunter2");
}

TEST(describe_config, masks_the_password_and_loads_again) {
  temp_dir dir;
  // One password source only: two of them are refused (operator_findings_test).
  const auto inv = parse({"check-config", "--election", "e", "--on-start", R"(["/bin/echo","a: b # c"])",
                          "--socket", "/tmp/with space.sock", "--", "/bin/ls", "-v"},
                         {{"BATON_REDIS_URL", "redis://bob:urlsecret@h:6380/3"}});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  EXPECT_EQ(redis_settings_of(inv.cfg).password, "urlsecret");
  const std::string yaml = describe_config(inv.cfg);
  EXPECT_EQ(yaml.find("hunter2"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("urlsecret"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("password: \"***\""), std::string::npos) << yaml;

  config_loader loader(fake_env({}));
  loader.load_yaml(yaml, "described");
  const config again = loader.finish();
  EXPECT_EQ(again.election, inv.cfg.election);
  EXPECT_EQ(again.node_id, inv.cfg.node_id);
  EXPECT_EQ(again.lease.ttl, inv.cfg.lease.ttl);
  EXPECT_EQ(again.lease.renew_interval, inv.cfg.lease.renew_interval);
  EXPECT_EQ(again.lease.renew_deadline, inv.cfg.lease.renew_deadline);
  EXPECT_EQ(again.lease.retry_interval, inv.cfg.lease.retry_interval);
  EXPECT_DOUBLE_EQ(again.lease.drift_factor, inv.cfg.lease.drift_factor);
  EXPECT_EQ(redis_settings_of(again).command_timeout, redis_settings_of(inv.cfg).command_timeout);
  EXPECT_EQ(again.hooks.on_start, inv.cfg.hooks.on_start);
  EXPECT_EQ(again.child.command, inv.cfg.child.command);
  EXPECT_EQ(again.socket.path, inv.cfg.socket.path);
  EXPECT_EQ(again.socket.mode, inv.cfg.socket.mode);
  EXPECT_EQ(again.child.on_exit, inv.cfg.child.on_exit);
  EXPECT_EQ(again.log.level, inv.cfg.log.level);
}

TEST(describe_config, says_when_there_is_no_password) {
  const auto inv = parse({"check-config", "--election", "e"});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  const std::string yaml = describe_config(inv.cfg);
  EXPECT_EQ(yaml.find("***"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("ttl: 10s"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("renew_interval: 3333ms"), std::string::npos) << yaml;
}

// Garbage in any position must come back as exit_now or a verb, never an
// exception or a crash. Bounded: a fixed number of seeded cases.
TEST(command_line, garbage_never_throws) {
  const std::vector<std::string> pieces = {
      "run", "check-config", "version", "--version", "--help", "-h", "--", "-", "---", "--=",
      "--ttl", "--ttl=", "10", "10s", "-1s", "1e400h", "--election", "", " ", "\n", "\xff\xfe",
      "--on-start", "[", "[\"a\"", "[1]", "--socket-mode", "9999", "--redis-url", "redis://",
      "rediss://x", "unix://", "redis://:@[", "--config", "/dev/null", "/", "--drift-factor",
      "nan", "inf", "-0", "0.5", "--log-level", "LOUD", "--on-child-exit", "maybe", "-c",
      "--node-id", "a@b", std::string(5000, 'x'), "--socket", std::string(300, '/'), "\t--ttl",
      "-abc", "--help-all", "@file", "--renew-deadline", "99999h"};
  std::mt19937 rng(12345);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(0, 8);
  const auto env = fake_env({{"BATON_LEASE_TTL", "1s"}, {"BATON_CONFIG", "/dev/null"}});
  for (int round = 0; round < 1500; ++round) {
    std::vector<std::string> args = {"baton"};
    const int n = length(rng);
    for (int i = 0; i < n; ++i) args.push_back(pieces[pick(rng)]);
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    argv.push_back(nullptr);
    invocation inv;
    ASSERT_NO_THROW(inv = parse_invocation(static_cast<int>(args.size()), argv.data(), env))
        << "round " << round;
    if (inv.what == invocation::verb::exit_now) {
      EXPECT_TRUE(inv.exit_code == 0 || inv.exit_code == 2) << inv.exit_code;
      EXPECT_FALSE(inv.message.empty());
    }
  }
}

TEST(command_line, null_argv_entries_and_empty_env_function) {
  const char* argv[] = {"baton", "run", nullptr, "--election", "e", nullptr};
  invocation inv;
  ASSERT_NO_THROW(inv = parse_invocation(5, argv, environment{}));
  EXPECT_EQ(inv.exit_code, 2);  // the empty argument is an unexpected positional
  const char* ok[] = {"baton", "run", "--election", "e", nullptr};
  inv = parse_invocation(4, ok, environment{});
  EXPECT_EQ(inv.what, invocation::verb::run) << inv.message;
}

}  // namespace
}  // namespace baton
