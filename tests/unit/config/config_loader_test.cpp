// config_loader: YAML keys and types, BATON_* variables, argv lists, derived
// defaults, node_id, and the password sources.
#include <gtest/gtest.h>

#include <random>
#include <regex>

#include "baton/config_load.hpp"
#include "baton/redis_settings.hpp"
#include "config_test_util.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;
using namespace config_test_util;

std::string error_from_yaml(const std::string& yaml, std::string* option = nullptr) {
  try {
    from_yaml(yaml);
  } catch (const config_error& e) {
    if (option != nullptr) *option = e.option();
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return {};
}

TEST(config_yaml, reads_every_key) {
  const config cfg = from_yaml(R"(
election: payroll
node_id: node-1@dc2
redis:
  url: redis://10.0.0.1:6380/2
  connect_timeout: 2s
  command_timeout: 300ms
lease:
  ttl: 15s
  renew_interval: 4s
  renew_deadline: 9s
  retry_interval: 500ms
  drift_factor: 0.02
hooks:
  on_start: ["/bin/echo", "--fast", "a b"]
  on_stop: [/bin/true]
  timeout: 1m
child:
  command: [/bin/cat, -v]
  stop_timeout: 20s
  on_exit: exit
socket:
  path: /run/baton.sock
  mode: "0600"
log:
  level: debug
)");
  EXPECT_EQ(cfg.election, "payroll");
  EXPECT_EQ(cfg.node_id, "node-1@dc2");
  EXPECT_EQ(redis_settings_of(cfg).url, "redis://10.0.0.1:6380/2");
  EXPECT_EQ(redis_settings_of(cfg).connect_timeout, 2s);
  EXPECT_EQ(redis_settings_of(cfg).command_timeout, 300ms);
  EXPECT_EQ(cfg.lease.ttl, 15s);
  EXPECT_EQ(cfg.lease.renew_interval, 4s);
  EXPECT_EQ(cfg.lease.renew_deadline, 9s);
  EXPECT_EQ(cfg.lease.retry_interval, 500ms);
  EXPECT_DOUBLE_EQ(cfg.lease.drift_factor, 0.02);
  EXPECT_EQ(cfg.hooks.on_start, (std::vector<std::string>{"/bin/echo", "--fast", "a b"}));
  EXPECT_EQ(cfg.hooks.on_stop, (std::vector<std::string>{"/bin/true"}));
  EXPECT_EQ(cfg.hooks.timeout, 1min);
  EXPECT_EQ(cfg.child.command, (std::vector<std::string>{"/bin/cat", "-v"}));
  EXPECT_EQ(cfg.child.stop_timeout, 20s);
  EXPECT_EQ(cfg.child.on_exit, child_exit_policy::exit);
  EXPECT_EQ(cfg.socket.path, "/run/baton.sock");
  EXPECT_EQ(cfg.socket.mode, 0600u);
  EXPECT_EQ(cfg.log.level, "debug");
}

TEST(config_yaml, empty_file_and_empty_sections_are_fine) {
  EXPECT_EQ(from_yaml("").lease.ttl, 10s);
  EXPECT_EQ(from_yaml("# only a comment\n").lease.ttl, 10s);
  EXPECT_EQ(from_yaml("lease:\nredis:\n").lease.ttl, 10s);
  EXPECT_EQ(from_yaml("lease:\n  ttl:\n").lease.ttl, 10s);  // no value keeps the default
}

TEST(config_yaml, socket_mode_is_always_octal) {
  EXPECT_EQ(from_yaml("socket: {mode: 0660}").socket.mode, 0660u);
  EXPECT_EQ(from_yaml("socket: {mode: \"0640\"}").socket.mode, 0640u);
  EXPECT_EQ(from_yaml("socket: {mode: 600}").socket.mode, 0600u);
  EXPECT_EQ(from_yaml("socket: {mode: 0o700}").socket.mode, 0700u);
  std::string option;
  EXPECT_NE(error_from_yaml("socket: {mode: 0680}", &option).find("octal"), std::string::npos);
  EXPECT_EQ(option, "socket.mode");
  EXPECT_NE(error_from_yaml("socket: {mode: 01777}", &option).find("at most 0777"), std::string::npos);
  EXPECT_EQ(option, "socket.mode");
}

TEST(config_yaml, unknown_key_names_the_full_dotted_option) {
  std::string option;
  const std::string message = error_from_yaml("lease:\n  tll: 5s\n", &option);
  EXPECT_EQ(option, "lease.tll");
  EXPECT_NE(message.find("unknown option lease.tll"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean lease.ttl?"), std::string::npos) << message;
  EXPECT_NE(message.find("test.yaml"), std::string::npos) << message;

  EXPECT_NE(error_from_yaml("colour: blue\n", &option).find("unknown option colour"), std::string::npos);
  EXPECT_NE(error_from_yaml("leese: {ttl: 5s}\n", &option).find("unknown option leese"),
            std::string::npos);
  EXPECT_NE(error_from_yaml("lease: {ttl: {deep: 1}}\n", &option).find("lease.ttl"), std::string::npos);
  EXPECT_NE(error_from_yaml("hooks: {on_start: [a], extra: 1}\n").find("unknown option hooks.extra"),
            std::string::npos);
}

TEST(config_yaml, password_in_the_file_is_refused_with_advice) {
  const std::string message = error_from_yaml("redis:\n  password: hunter2\n");
  EXPECT_NE(message.find("BATON_REDIS_PASSWORD"), std::string::npos) << message;
  EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
}

TEST(config_yaml, duplicate_keys_are_errors) {
  std::string option;
  const std::string message = error_from_yaml("lease:\n  ttl: 5s\n  ttl: 6s\n", &option);
  EXPECT_EQ(option, "lease.ttl");
  EXPECT_NE(message.find("twice"), std::string::npos) << message;
}

TEST(config_yaml, wrong_types_are_errors) {
  struct row {
    const char* yaml;
    const char* option;
    const char* expect;
  };
  for (const row& r : {
           row{"lease: 5", "lease", "must be a map"},
           row{"lease: [1, 2]", "lease", "must be a map"},
           row{"lease: {ttl: [5s]}", "lease.ttl", "duration"},
           row{"lease: {ttl: 10}", "lease.ttl", "add a unit"},
           row{"lease: {ttl: ten}", "lease.ttl", "duration"},
           row{"lease: {drift_factor: lots}", "lease.drift_factor", "number"},
           row{"lease: {drift_factor: .nan}", "lease.drift_factor", "number"},
           row{"hooks: {on_start: /bin/promote}", "hooks.on_start", "list of strings"},
           row{"hooks: {on_start: {a: b}}", "hooks.on_start", "list of strings"},
           row{"hooks: {on_stop: [[nested]]}", "hooks.on_stop", "list of strings"},
           row{"election: [a, b]", "election", "single string"},
           row{"election: {a: b}", "election", "single string"},
           row{"child: {on_exit: restart}", "child.on_exit", "compete"},
           row{"log: {level: [info]}", "log.level", "single string"},
       }) {
    std::string option;
    const std::string message = error_from_yaml(r.yaml, &option);
    EXPECT_EQ(option, r.option) << r.yaml;
    EXPECT_NE(message.find(r.expect), std::string::npos) << r.yaml << " -> " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(config_yaml, malformed_yaml_is_a_config_error_with_position) {
  std::string option;
  const std::string message = error_from_yaml("lease:\n  ttl: [unclosed\n", &option);
  EXPECT_EQ(option, "config");
  EXPECT_NE(message.find("test.yaml"), std::string::npos) << message;
  EXPECT_NE(message.find("line"), std::string::npos) << message;
  EXPECT_NE(error_from_yaml("just a string").find("must be a map"), std::string::npos);
  EXPECT_NE(error_from_yaml("- a\n- b\n").find("must be a map"), std::string::npos);
  EXPECT_FALSE(error_from_yaml("? [a]\n: b\n").empty());
}

TEST(config_file, missing_file_names_the_path) {
  temp_dir dir;
  config_loader loader(fake_env({}));
  try {
    loader.load_file(dir.path("nope.yaml"));
    FAIL() << "expected config_error";
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "config");
    EXPECT_NE(std::string(e.what()).find("nope.yaml"), std::string::npos) << e.what();
  }
}

TEST(config_file, loads_from_disk) {
  temp_dir dir;
  const std::string path = dir.write("b.yaml", "election: disk\nlease:\n  ttl: 12s\n");
  config_loader loader(fake_env({}));
  loader.load_file(path);
  const config cfg = loader.finish();
  EXPECT_EQ(cfg.election, "disk");
  EXPECT_EQ(cfg.lease.ttl, 12s);
}

TEST(config_env, reads_every_variable) {
  const config cfg = from_yaml("", {
                                       {"BATON_ELECTION", "envy"},
                                       {"BATON_NODE_ID", "n1"},
                                       {"BATON_REDIS_URL", "redis://h:7000"},
                                       {"BATON_REDIS_CONNECT_TIMEOUT", "3s"},
                                       {"BATON_REDIS_COMMAND_TIMEOUT", "250ms"},
                                       {"BATON_LEASE_TTL", "30s"},
                                       {"BATON_LEASE_RENEW_INTERVAL", "5s"},
                                       {"BATON_LEASE_RENEW_DEADLINE", "20s"},
                                       {"BATON_LEASE_RETRY_INTERVAL", "2s"},
                                       {"BATON_LEASE_DRIFT_FACTOR", "0.05"},
                                       {"BATON_HOOKS_ON_START", R"(["/bin/echo", "a b"])"},
                                       {"BATON_HOOKS_ON_STOP", "/bin/true  -q   now"},
                                       {"BATON_HOOKS_TIMEOUT", "45s"},
                                       {"BATON_CHILD_STOP_TIMEOUT", "4s"},
                                       {"BATON_CHILD_ON_EXIT", "exit"},
                                       {"BATON_SOCKET_PATH", "/tmp/b.sock"},
                                       {"BATON_SOCKET_MODE", "0600"},
                                       {"BATON_LOG_LEVEL", "warn"},
                                       {"BATON_EVENT", "started"},  // ignored, not an error
                                       {"BATON_WHATEVER", "x"},
                                   });
  EXPECT_EQ(cfg.election, "envy");
  EXPECT_EQ(cfg.node_id, "n1");
  EXPECT_EQ(redis_settings_of(cfg).url, "redis://h:7000");
  EXPECT_EQ(redis_settings_of(cfg).connect_timeout, 3s);
  EXPECT_EQ(redis_settings_of(cfg).command_timeout, 250ms);
  EXPECT_EQ(cfg.lease.ttl, 30s);
  EXPECT_EQ(cfg.lease.renew_interval, 5s);
  EXPECT_EQ(cfg.lease.renew_deadline, 20s);
  EXPECT_EQ(cfg.lease.retry_interval, 2s);
  EXPECT_DOUBLE_EQ(cfg.lease.drift_factor, 0.05);
  EXPECT_EQ(cfg.hooks.on_start, (std::vector<std::string>{"/bin/echo", "a b"}));
  EXPECT_EQ(cfg.hooks.on_stop, (std::vector<std::string>{"/bin/true", "-q", "now"}));
  EXPECT_EQ(cfg.hooks.timeout, 45s);
  EXPECT_EQ(cfg.child.stop_timeout, 4s);
  EXPECT_EQ(cfg.child.on_exit, child_exit_policy::exit);
  EXPECT_EQ(cfg.socket.path, "/tmp/b.sock");
  EXPECT_EQ(cfg.socket.mode, 0600u);
  EXPECT_EQ(cfg.log.level, "warn");
}

TEST(config_env, bad_value_names_option_and_variable) {
  try {
    from_yaml("", {{"BATON_LEASE_TTL", "10"}});
    FAIL() << "expected config_error";
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "lease.ttl");
    const std::string message = e.what();
    EXPECT_NE(message.find("lease.ttl: 10 is not allowed"), std::string::npos) << message;
    EXPECT_NE(message.find("add a unit"), std::string::npos) << message;
    EXPECT_NE(message.find("(from BATON_LEASE_TTL)"), std::string::npos) << message;
  }
}

// priority is an integer: a number that is not a whole one is refused as it
// is read, one out of bounds by the rules, each with the same words.
TEST(config_env, priority_is_a_whole_number) {
  EXPECT_EQ(from_yaml("priority: 1e3\n").priority, 1000);
  EXPECT_EQ(from_yaml("priority: -7\n").priority, -7);
  EXPECT_EQ(error_from_yaml("priority: 2.5\n"),
            "priority: 2.5 is not allowed: must be a whole number from -1000 to 1000 (from test.yaml)");
  EXPECT_EQ(error_from_yaml("priority: 1001\n"),
            "priority: 1001 is not allowed: must be a whole number from -1000 to 1000 (from test.yaml)");
  EXPECT_EQ(error_from_yaml("priority: 1e12\n"),
            "priority: 1e+12 is not allowed: must be a whole number from -1000 to 1000 "
            "(from test.yaml)");
  // Bounds are checked with the rules, after a missing election.
  config_loader loader(fake_env({}));
  loader.load_yaml("priority: 5000\n", "test.yaml");
  try {
    loader.finish();
    FAIL() << "expected config_error";
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "election");
  }
}

TEST(config_argv, json_array_or_words) {
  EXPECT_EQ(parse_argv_text("o", R"(["/bin/x","a b"])"), (std::vector<std::string>{"/bin/x", "a b"}));
  EXPECT_EQ(parse_argv_text("o", R"(  [ "/bin/x" , "\"q\"" ] )"),
            (std::vector<std::string>{"/bin/x", "\"q\""}));
  EXPECT_EQ(parse_argv_text("o", "/bin/x -a  b\tc"), (std::vector<std::string>{"/bin/x", "-a", "b", "c"}));
  EXPECT_TRUE(parse_argv_text("o", "").empty());
  EXPECT_TRUE(parse_argv_text("o", "   ").empty());
  EXPECT_TRUE(parse_argv_text("o", "[]").empty());
  for (const char* bad : {"[", "[1, 2]", R"(["a", null])", R"(["a"] x)", "[{}]"}) {
    try {
      parse_argv_text("hooks.on_start", bad);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const config_error& e) {
      EXPECT_EQ(e.option(), "hooks.on_start");
      EXPECT_NE(std::string(e.what()).find("JSON array"), std::string::npos) << e.what();
    }
  }
}

TEST(config_derived, defaults_scale_with_ttl) {
  config cfg = from_yaml("lease: {ttl: 9s}");
  EXPECT_EQ(cfg.lease.renew_interval, 3s);
  EXPECT_EQ(cfg.lease.renew_deadline, 6s);
  EXPECT_EQ(cfg.lease.retry_interval, 1s);   // min(1s, 3s)
  EXPECT_EQ(redis_settings_of(cfg).command_timeout, 1s);  // min(1s, 1.5s)

  cfg = from_yaml("lease: {ttl: 1500ms}");
  EXPECT_EQ(cfg.lease.renew_interval, 500ms);
  EXPECT_EQ(cfg.lease.renew_deadline, 1000ms);
  EXPECT_EQ(cfg.lease.retry_interval, 500ms);
  EXPECT_EQ(redis_settings_of(cfg).command_timeout, 250ms);

  cfg = from_yaml("");
  EXPECT_EQ(cfg.lease.renew_interval, 3333ms);
  EXPECT_EQ(cfg.lease.renew_deadline, 6666ms);
  EXPECT_EQ(cfg.lease.retry_interval, 1s);
  EXPECT_EQ(redis_settings_of(cfg).command_timeout, 1s);
}

TEST(config_derived, explicit_values_are_kept_and_feed_the_others) {
  const config cfg = from_yaml("lease: {ttl: 10s, renew_interval: 600ms}");
  EXPECT_EQ(cfg.lease.renew_interval, 600ms);
  EXPECT_EQ(cfg.lease.retry_interval, 600ms);
  EXPECT_EQ(redis_settings_of(cfg).command_timeout, 300ms);
}

TEST(config_derived, result_holds_no_zeros) {
  const config cfg = from_yaml("");
  EXPECT_GT(redis_settings_of(cfg).command_timeout.count(), 0);
  EXPECT_GT(cfg.lease.renew_interval.count(), 0);
  EXPECT_GT(cfg.lease.renew_deadline.count(), 0);
  EXPECT_GT(cfg.lease.retry_interval.count(), 0);
  EXPECT_FALSE(cfg.node_id.empty());
}

TEST(config_derived, node_id_default_is_hostname_and_six_hex_digits) {
  config c;
  c.election = "jobs";
  const std::string id = default_node_id(c);
  EXPECT_LE(id.size(), 128u);
  EXPECT_TRUE(std::regex_match(id, std::regex(R"([A-Za-z0-9._@-]+-[0-9a-f]{6})"))) << id;
  const config cfg = from_yaml("");
  EXPECT_TRUE(std::regex_match(cfg.node_id, std::regex(R"(.+-[0-9a-f]{6})"))) << cfg.node_id;
}

TEST(config_password, from_environment) {
  const config cfg = from_yaml("", {{"BATON_REDIS_PASSWORD", "envpw"}});
  EXPECT_EQ(redis_settings_of(cfg).password, "envpw");
}

TEST(config_password, from_file_first_line_without_newline) {
  temp_dir dir;
  const std::string file = dir.write("pw", "filepw\nsecond line\n");
  EXPECT_EQ(redis_settings_of(from_yaml("redis: {password_file: " + file + "}")).password,
            "filepw");
  const std::string crlf = dir.write("pw2", "crlf\r\n");
  EXPECT_EQ(redis_settings_of(from_yaml("redis: {password_file: " + crlf + "}")).password, "crlf");
  const std::string no_newline = dir.write("pw3", "bare");
  EXPECT_EQ(redis_settings_of(from_yaml("", {{"BATON_REDIS_PASSWORD_FILE", no_newline}})).password,
            "bare");
}

TEST(config_password, from_url_user_info) {
  EXPECT_EQ(redis_settings_of(from_yaml("redis: {url: \"redis://:urlpw@h:1\"}")).password, "urlpw");
}

TEST(config_password, each_source_alone_gives_the_password) {
  temp_dir dir;
  const std::string file = dir.write("pw", "filepw\n");
  EXPECT_EQ(redis_settings_of(from_yaml("", {{"BATON_REDIS_PASSWORD", "envpw"}})).password,
            "envpw");
  EXPECT_EQ(redis_settings_of(from_yaml("redis: {password_file: " + file + "}")).password,
            "filepw");
  EXPECT_EQ(redis_settings_of(from_yaml("redis: {url: \"redis://:urlpw@h:1\"}")).password, "urlpw");
  // An empty variable counts as unset.
  EXPECT_EQ(redis_settings_of(
                from_yaml("redis: {password_file: " + file + "}", {{"BATON_REDIS_PASSWORD", ""}}))
                .password,
            "filepw");
}

TEST(config_password, unreadable_file_names_redis_password_file) {
  temp_dir dir;
  for (const std::string& path : {dir.path("missing"), dir.path("")}) {
    try {
      from_yaml("redis: {password_file: \"" + path + "\"}");
      ADD_FAILURE() << "no error for " << path;
    } catch (const config_error& e) {
      EXPECT_EQ(e.option(), "redis.password_file");
      EXPECT_NE(std::string(e.what()).find("redis.password_file"), std::string::npos) << e.what();
    }
  }
  const std::string empty = dir.write("empty", "\nsecret-on-line-2\n");
  try {
    from_yaml("redis: {password_file: " + empty + "}");
    ADD_FAILURE() << "no error for an empty first line";
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "redis.password_file");
    EXPECT_EQ(std::string(e.what()).find("secret-on-line-2"), std::string::npos);
  }
}

// Whatever a config file holds, loading it ends in a config or a
// config_error, never another exception or a crash. Bounded and seeded.
TEST(config_yaml, garbage_only_ever_gives_config_error) {
  const std::vector<std::string> pieces = {
      "election: x\n", "lease:\n", "  ttl: 5s\n", "  ttl: [\n", "redis: {url: ", "}", "]", "{",
      "- a\n", "? ", ": ", "&a ", "*a ", "<<: *a\n", "!!binary ", "\"", "'", "\t", "\n", "#",
      "%YAML 1.2\n", "---\n", "...\n", "hooks: {on_start: [", "1, ", "\xff", "socket: {mode: ",
      "0999", "lease: {drift_factor: ", ".inf", "log: {level: ", "child: ", "null", "~", "|\n  x\n"};
  std::mt19937 rng(777);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(0, 12);
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int n = length(rng);
    for (int i = 0; i < n; ++i) text += pieces[pick(rng)];
    try {
      config_loader loader(fake_env({}));
      loader.load_yaml(text, "fuzz.yaml");
      loader.finish();
    } catch (const config_error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "round " << round << ": " << e.what() << "\n" << text;
    }
  }
  // Deep nesting is refused by the parser, not by the stack.
  config_loader loader(fake_env({}));
  EXPECT_THROW(loader.load_yaml(std::string(100000, '['), "deep.yaml"), config_error);
}

}  // namespace
}  // namespace baton
