// Operator findings: commands that cannot run, two sources of one password,
// passwords in flags, unknown BATON_* variables, a bare 0 for derived
// durations, the log level as written, quoting in argv words, the capped
// stop_timeout shown by check-config, and a stable default node id.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <regex>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "config_test_util.hpp"
#include "config/executable_check.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;
using namespace config_test_util;

std::string error_of(const std::string& yaml, std::map<std::string, std::string> env = {}) {
  try {
    from_yaml(yaml, std::move(env));
  } catch (const config_error& e) {
    return e.what();
  }
  return "(no error)";
}

// A PATH directory holding an executable `notify`, a plain file `plain` and
// a directory `adir`.
struct path_dir {
  temp_dir dir;
  std::string notify = dir.write("notify", "#!/bin/sh\nexit 0\n");
  std::string plain = dir.write("plain", "not a program\n");
  path_dir() {
    ::chmod(notify.c_str(), 0755);
    ::chmod(plain.c_str(), 0644);
    ::mkdir(dir.path("adir").c_str(), 0755);
  }
  std::string path() const { return dir.path(""); }
};

// 1. Commands that cannot be executed.

TEST(executable_check, bare_names_are_searched_in_path_like_execvp) {
  path_dir d;
  EXPECT_EQ(executable_problem("notify", d.path()), "");
  EXPECT_EQ(executable_problem(d.notify, std::nullopt), "");
  EXPECT_NE(executable_problem("notify", "/nonexistent-dir").find("not found in PATH"),
            std::string::npos);
  EXPECT_NE(executable_problem("plain", d.path()).find("not executable"), std::string::npos);
  EXPECT_NE(executable_problem("adir", d.path()).find("is a directory"), std::string::npos);
  EXPECT_EQ(executable_problem(d.plain, d.path()), "not executable");
  EXPECT_EQ(executable_problem(d.dir.path("adir"), d.path()), "is a directory");
  EXPECT_EQ(executable_problem(d.dir.path("missing"), d.path()), "no such file");
  // A later hit wins over an earlier unusable one, as execvp does.
  temp_dir other;
  const std::string later = other.write("plain", "#!/bin/sh\n");
  ::chmod(later.c_str(), 0755);
  EXPECT_EQ(executable_problem("plain", d.path() + ":/nonexistent:" + other.path("")), "");
  EXPECT_NE(executable_problem("plain", d.path() + ":/nonexistent").find("not executable"),
            std::string::npos);
  // Unset PATH: execvp's /bin:/usr/bin.
  EXPECT_EQ(executable_problem("sh", std::nullopt), "");
}

TEST(executable_check, config_refuses_what_cannot_run_naming_option_and_path) {
  path_dir d;
  const std::map<std::string, std::string> env{{"PATH", d.path()}};
  EXPECT_NO_THROW(from_yaml("hooks: {on_start: [notify, --msg, hi]}", env));
  const std::string missing = error_of("hooks: {on_start: [notfy]}", env);
  EXPECT_NE(missing.find("hooks.on_start"), std::string::npos) << missing;
  EXPECT_NE(missing.find("notfy"), std::string::npos) << missing;
  EXPECT_NE(missing.find("not found in PATH"), std::string::npos) << missing;
  const std::string plain = error_of("hooks: {on_stop: [" + d.plain + "]}", env);
  EXPECT_NE(plain.find("hooks.on_stop"), std::string::npos) << plain;
  EXPECT_NE(plain.find(d.plain + ": not executable"), std::string::npos) << plain;
  const std::string dir = error_of("child: {command: [" + d.dir.path("adir") + "]}", env);
  EXPECT_NE(dir.find("child.command"), std::string::npos) << dir;
  EXPECT_NE(dir.find("is a directory"), std::string::npos) << dir;
  const std::string nofile = error_of("child: {command: [/nonexistent/worker]}", env);
  EXPECT_NE(nofile.find("/nonexistent/worker: no such file"), std::string::npos) << nofile;
}

TEST(executable_check, run_and_check_config_exit_2) {
  path_dir d;
  for (const char* verb : {"run", "check-config"}) {
    const auto inv =
        parse({verb, "--election", "e", "--on-start", "notfy", "--", "notify"}, {{"PATH", d.path()}});
    EXPECT_EQ(inv.what, invocation::verb::exit_now);
    EXPECT_EQ(inv.exit_code, 2);
    EXPECT_NE(inv.message.find("hooks.on_start: cannot execute notfy: not found in PATH"),
              std::string::npos)
        << inv.message;
    EXPECT_EQ(inv.message.find('\n'), std::string::npos);
    const auto child = parse({verb, "--election", "e", "--", "nothere"}, {{"PATH", d.path()}});
    EXPECT_EQ(child.exit_code, 2);
    EXPECT_NE(child.message.find("child.command: cannot execute nothere"), std::string::npos)
        << child.message;
  }
}

// 2. The password from two places.

TEST(redis_password, variable_and_file_together_are_refused_without_the_secret) {
  temp_dir dir;
  const std::string file = dir.write("pw", "fromfile\n");
  for (const auto& yaml : {"redis: {password_file: " + file + "}", std::string()}) {
    std::map<std::string, std::string> env{{"BATON_REDIS_PASSWORD", "s3cr3t-env"}};
    if (yaml.empty()) env["BATON_REDIS_PASSWORD_FILE"] = file;
    const std::string e = error_of(yaml, env);
    EXPECT_NE(e.find("BATON_REDIS_PASSWORD"), std::string::npos) << e;
    EXPECT_NE(e.find("redis.password_file"), std::string::npos) << e;
    EXPECT_EQ(e.find("s3cr3t-env"), std::string::npos) << e;
    EXPECT_EQ(e.find("fromfile"), std::string::npos) << e;
  }
  const auto flag = parse({"check-config", "--election", "e", "--redis-password-file", file},
                          {{"BATON_REDIS_PASSWORD", "s3cr3t-env"}});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_NE(flag.message.find("--redis-password-file"), std::string::npos) << flag.message;
  EXPECT_EQ(flag.message.find("s3cr3t-env"), std::string::npos) << flag.message;
  // Either alone is fine.
  EXPECT_EQ(redis_settings_of(from_yaml("", {{"BATON_REDIS_PASSWORD", "a"}})).password, "a");
  EXPECT_EQ(redis_settings_of(from_yaml("redis: {password_file: " + file + "}")).password,
            "fromfile");
}

TEST(redis_password, url_password_with_another_source_is_refused) {
  temp_dir dir;
  const std::string file = dir.write("pw", "fromfile\n");
  const std::string url = "redis: {url: \"redis://:urlsecret@h:6379\"";
  for (const auto& [yaml, env] :
       std::vector<std::pair<std::string, std::map<std::string, std::string>>>{
           {url + "}", {{"BATON_REDIS_PASSWORD", "envsecret"}}},
           {url + ", password_file: " + file + "}", {}}}) {
    const std::string e = error_of(yaml, env);
    EXPECT_NE(e.find("redis.url"), std::string::npos) << e;
    EXPECT_TRUE(e.find("BATON_REDIS_PASSWORD") != std::string::npos ||
                e.find("redis.password_file") != std::string::npos)
        << e;
    EXPECT_EQ(e.find("urlsecret"), std::string::npos) << e;
    EXPECT_EQ(e.find("envsecret"), std::string::npos) << e;
    EXPECT_EQ(e.find("fromfile"), std::string::npos) << e;
  }
  EXPECT_EQ(redis_settings_of(from_yaml(url + "}")).password, "urlsecret");
}

// 3. Passwords in flags.

TEST(password_flags, are_refused_without_repeating_the_secret) {
  const std::vector<std::vector<std::string>> cases = {
      {"run", "--election", "e", "--redis-password", "hunter2-secret"},
      {"run", "--election", "e", "--redis-password=hunter2-secret"},
      {"check-config", "--password", "hunter2-secret", "--election", "e"},
      {"--redis-password", "hunter2-secret", "run"},
      {"run", "--Redis-Passwd=hunter2-secret"},
      {"check-config", "--db-password", "hunter2-secret", "--bogus", "hunter2-secret"},
  };
  for (const auto& args : cases) {
    const auto inv = parse(args);
    EXPECT_EQ(inv.what, invocation::verb::exit_now);
    EXPECT_EQ(inv.exit_code, 2);
    EXPECT_EQ(inv.message.find("hunter2"), std::string::npos) << inv.message;
    EXPECT_NE(inv.message.find("BATON_REDIS_PASSWORD"), std::string::npos) << inv.message;
    EXPECT_NE(inv.message.find("--redis-password-file"), std::string::npos) << inv.message;
    EXPECT_EQ(inv.message.find('\n'), std::string::npos) << inv.message;
  }
  // The real flag still works; the child's own flags are its business.
  temp_dir dir;
  const std::string file = dir.write("pw", "p\n");
  EXPECT_EQ(parse({"check-config", "--election", "e", "--redis-password-file=" + file}).what,
            invocation::verb::check_config);
  EXPECT_EQ(parse({"check-config", "--election", "e", "--", "/bin/sh", "--password", "x"}).what,
            invocation::verb::check_config);
}

// 4. Unknown BATON_* variables.

TEST(unknown_variables, are_warned_about_with_a_suggestion) {
  const std::vector<std::string> names = {
      "PATH",          "BATON_LEASE_TLL",  "BATON_ELECTION",   "BATON_TOKEN",
      "BATON_EVENT",   "BATON_REASON",     "BATON_LEASE_TTL_MS", "BATON_CONFIG",
      "BATON_REDIS_PASSWORD", "BATON_FAULT_RECORDS", "BATON_PROPERTY_SEED", "BATON_BINARY",
      "BATON_ZZZZZZZZZZZZZZZ", "BATON_LEASE_TLL"};
  config_loader loader(fake_env({{"BATON_LEASE_TLL", "s3cret?"}}));
  loader.note_variable_names(names);
  ASSERT_EQ(loader.warnings().size(), 2u);
  EXPECT_EQ(loader.warnings()[0],
            "unknown environment variable BATON_LEASE_TLL is ignored (did you mean BATON_LEASE_TTL?)");
  EXPECT_EQ(loader.warnings()[1], "unknown environment variable BATON_ZZZZZZZZZZZZZZZ is ignored");
  for (const auto& w : loader.warnings()) EXPECT_EQ(w.find("s3cret"), std::string::npos);

  std::vector<std::string> args = {"baton", "check-config", "--election", "e"};
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  const auto inv = parse_invocation(4, argv.data(), fake_env({}), {"BATON_HOOKS_ON_STRAT"});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  ASSERT_EQ(inv.warnings.size(), 1u);
  EXPECT_NE(inv.warnings[0].find("did you mean BATON_HOOKS_ON_START?"), std::string::npos);
  args[1] = "run";
  argv[1] = args[1].c_str();
  EXPECT_EQ(parse_invocation(4, argv.data(), fake_env({}), {"BATON_X"}).warnings.size(), 1u);
}

// 5. A bare 0 where 0 means "derived".

TEST(derived_zero, bare_zero_is_accepted_only_where_it_derives) {
  const config cfg = from_yaml(
      "lease: {renew_interval: 0, renew_deadline: 0, retry_interval: 0, resign_cooldown: 0}\n"
      "redis: {command_timeout: 0}");
  EXPECT_EQ(cfg.lease.renew_interval, cfg.lease.ttl / 3);
  EXPECT_EQ(cfg.lease.resign_cooldown, cfg.lease.ttl);
  EXPECT_EQ(from_yaml("", {{"BATON_LEASE_RENEW_INTERVAL", "0"}}).lease.renew_interval, 3333ms);
  const auto inv = parse({"check-config", "--election", "e", "--renew-interval", "0",
                          "--redis-timeout=0"});
  EXPECT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  EXPECT_NE(error_of("lease: {renew_interval: 5}").find("bare number"), std::string::npos);
  EXPECT_NE(error_of("lease: {ttl: 0}").find("bare number"), std::string::npos);
  EXPECT_NE(error_of("hooks: {timeout: 0}").find("bare number"), std::string::npos);
  EXPECT_NE(error_of("child: {stop_timeout: 0}").find("bare number"), std::string::npos);
  EXPECT_NE(error_of("lease: {renew_interval: 0.0}").find("bare number"), std::string::npos);
}

// 6. The log level as written.

TEST(log_level, warn_and_warning_are_shown_as_written) {
  for (const char* level : {"warn", "warning"}) {
    const auto inv = parse({"check-config", "--election", "e", "--log-level", level});
    ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
    EXPECT_NE(describe_config(inv.cfg).find("level: \"" + std::string(level) + "\"\n"),
              std::string::npos);
  }
  EXPECT_NE(error_of("log: {level: warnings}").find("log.level"), std::string::npos);
}

// 7. Quotes in argv words.

TEST(argv_words, follow_posix_shell_quoting) {
  using v = std::vector<std::string>;
  EXPECT_EQ(parse_argv_text("hooks.on_start", "notify --msg 'hello world'"),
            (v{"notify", "--msg", "hello world"}));
  EXPECT_EQ(parse_argv_text("hooks.on_start", R"(a "b \"c\" \\ \n $x" --m='x y'z '' "")"),
            (v{"a", R"(b "c" \ \n $x)", "--m=x yz", "", ""}));
  EXPECT_EQ(parse_argv_text("hooks.on_start", R"(a\ b c\'d 'it'\''s')"),
            (v{"a b", "c'd", "it's"}));
  EXPECT_EQ(parse_argv_text("hooks.on_start", "  x \t y  "), (v{"x", "y"}));
  for (const char* bad : {"a 'b", "a \"b", "a b\\"}) {
    try {
      parse_argv_text("hooks.on_start", bad);
      ADD_FAILURE() << bad;
    } catch (const config_error& e) {
      EXPECT_EQ(e.option(), "hooks.on_start");
      EXPECT_NE(std::string(e.what()).find("JSON array"), std::string::npos) << e.what();
    }
  }
  const auto inv = parse({"check-config", "--election", "e", "--on-start",
                          "/bin/sh -c 'echo hello world'"});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  EXPECT_EQ(inv.cfg.hooks.on_start, (v{"/bin/sh", "-c", "echo hello world"}));
}

// 8. stop_timeout capped by the lease's validity.

TEST(describe_stop_timeout, says_when_it_is_capped) {
  const config capped = from_yaml("child: {stop_timeout: 20s}");
  EXPECT_NE(describe_config(capped).find(
                "stop_timeout: 20s  # capped at 9898ms by the lease's validity (ttl - drift)\n"),
            std::string::npos)
      << describe_config(capped);
  const config fits = from_yaml("child: {stop_timeout: 9898ms}");
  EXPECT_EQ(describe_config(fits).find("capped"), std::string::npos);
  // The comment does not stop the output from loading again.
  config_loader again(fake_env({}));
  again.load_yaml(describe_config(capped), "described");
  EXPECT_EQ(again.current().child.stop_timeout, 20s);
}

// 9. A stable default node id.

TEST(default_node_id, is_stable_and_differs_by_election_and_socket) {
  config a;
  a.election = "jobs";
  const std::string id = default_node_id(a);
  EXPECT_TRUE(std::regex_match(id, std::regex(R"([A-Za-z0-9._@-]+-[0-9a-f]{6})"))) << id;
  EXPECT_EQ(default_node_id(a), id);
  EXPECT_EQ(from_yaml("").node_id, from_yaml("").node_id);
  config b = a;
  b.election = "mail";
  EXPECT_NE(default_node_id(b), id);
  config c = a;
  c.socket.path = "/run/baton/other.sock";
  EXPECT_NE(default_node_id(c), id);
  config d = a;
  d.http.listen = "127.0.0.1:9465";
  EXPECT_NE(default_node_id(d), id);
  // Same prefix: only the suffix differs.
  EXPECT_EQ(default_node_id(b).substr(0, id.size() - 6), id.substr(0, id.size() - 6));
}

}  // namespace
}  // namespace baton
