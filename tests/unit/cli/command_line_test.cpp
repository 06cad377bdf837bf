// run_client_command's own duties: which argv it takes, flags and usage
// errors, --help, and where it looks for the socket.
#include "cli_test_util.hpp"

namespace baton::cli_test {
namespace {

using client_command_line_test = cli_test;

TEST_F(client_command_line_test, other_verbs_are_left_to_main) {
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{},
                                             {"run"},
                                             {"check-config"},
                                             {"version"},
                                             {"--version"},
                                             {"--help"},
                                             {"Status"},
                                             {"--socket", "x", "status"}}) {
    auto r = run_cli(args);
    EXPECT_FALSE(r.code.has_value()) << (args.empty() ? "" : args[0]);
    EXPECT_EQ(r.out + r.err, "");
  }
  std::ostringstream out, err;
  EXPECT_FALSE(run_client_command(0, nullptr, env_of(), out, err));
  const char* only_null[] = {"baton", nullptr};
  EXPECT_FALSE(run_client_command(2, only_null, env_of(), out, err));
}

TEST_F(client_command_line_test, help_goes_to_stdout_with_exit_0) {
  for (const char* verb : {"status", "health", "watch", "resign"}) {
    auto r = run_cli({verb, "--help"});
    EXPECT_EQ(r.code, 0) << verb;
    EXPECT_NE(r.out.find("--socket"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--timeout"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
  }
  EXPECT_NE(run_cli({"resign", "-h"}).out.find("--wait"), std::string::npos);
  EXPECT_NE(run_cli({"status", "--help"}).out.find("--json"), std::string::npos);
}

TEST_F(client_command_line_test, usage_errors_are_one_line_and_exit_2) {
  const std::vector<std::vector<std::string>> bad = {
      {"status", "--bogus"},         {"status", "extra"},
      {"status", "--wait"},          {"resign", "--json"},
      {"health", "--socket"},        {"watch", "--timeout", "10"},
      {"status", "--timeout", "0s"}, {"status", "--timeout", "soon"},
      {"status", "--socket", ""},    {"status", "--config", ""},
  };
  for (const auto& args : bad) {
    auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args[0] << " " << args[1];
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("baton: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("; see baton " + args[0] + " --help\n"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

TEST_F(client_command_line_test, timeout_without_a_unit_says_what_to_write) {
  auto r = run_cli({"status", "--timeout", "10"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--timeout"), std::string::npos);
  EXPECT_NE(r.err.find("10s"), std::string::npos) << r.err;
}

// Which daemon answered tells which path was used: each fake has its own node_id.
class socket_precedence_test : public cli_test {
 protected:
  fake_daemon flag{socket_path("flag.sock"), {{"node_id", "flag"}}};
  fake_daemon file{socket_path("file.sock"), {{"node_id", "file"}}};
  fake_daemon variable{socket_path("variable.sock"), {{"node_id", "variable"}}};
  fake_daemon env_file{socket_path("env-file.sock"), {{"node_id", "env-file"}}};
  std::string file_config = write_file("file.yaml", "socket:\n  path: \"" + file.path() + "\"\n");
  std::string env_config =
      write_file("env.yaml", "election: jobs\nsocket:\n  path: \"" + env_file.path() + "\"\n");
  std::string no_socket_config = write_file("none.yaml", "election: jobs\n");

  std::string answered_by(std::vector<std::string> args, std::map<std::string, std::string> vars) {
    args.insert(args.begin(), {"status", "--json"});
    auto r = run_cli(args, env_of(std::move(vars)));
    if (r.code != 0 && r.code != 3)
      return "exit " + std::to_string(r.code.value_or(-1)) + ": " + r.err;
    return json::parse(r.out).value("node_id", "?");
  }
};

TEST_F(socket_precedence_test, first_source_that_names_a_path_wins) {
  const std::map<std::string, std::string> all_vars = {{"BATON_SOCKET_PATH", variable.path()},
                                                       {"BATON_CONFIG", env_config}};
  EXPECT_EQ(answered_by({"--socket", flag.path(), "--config", file_config}, all_vars), "flag");
  EXPECT_EQ(answered_by({"--config", file_config}, all_vars), "file");
  EXPECT_EQ(answered_by({"-c", file_config}, all_vars), "file");
  EXPECT_EQ(answered_by({}, all_vars), "variable");
  EXPECT_EQ(answered_by({}, {{"BATON_CONFIG", env_config}}), "env-file");
  EXPECT_EQ(answered_by({}, {{"BATON_SOCKET_PATH", ""}, {"BATON_CONFIG", env_config}}), "env-file");
  // A config file without socket.path passes the question on.
  EXPECT_EQ(answered_by({"--config", no_socket_config}, all_vars), "variable");
  EXPECT_EQ(answered_by({}, {{"BATON_CONFIG", no_socket_config}}).find(default_socket_path) !=
                std::string::npos,
            true);
}

TEST_F(client_command_line_test, default_path_is_used_when_nothing_names_one) {
  auto r = run_cli({"status", "--timeout", "1s"});
  if (r.code == 1) {
    EXPECT_NE(r.err.find(std::string("at ") + default_socket_path + ":"), std::string::npos)
        << r.err;
  }
}

TEST_F(client_command_line_test, config_errors_exit_2) {
  auto missing = run_cli({"status", "--config", socket_path("missing.yaml")});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err.rfind("baton: ", 0), 0u) << missing.err;
  EXPECT_NE(missing.err.find("missing.yaml"), std::string::npos) << missing.err;

  auto malformed = write_file("bad.yaml", "socket: [\n");
  EXPECT_EQ(run_cli({"status", "--config", malformed}).code, 2);
  auto bad_value = write_file("bad-value.yaml", "socket:\n  path: \"x\"\n  mode: \"9999\"\n");
  EXPECT_EQ(run_cli({"status", "--config", bad_value}).code, 2);
  auto unknown = write_file("unknown.yaml", "sockett:\n  path: \"x\"\n");
  EXPECT_EQ(run_cli({"status", "--config", unknown}).code, 2);

  // BATON_CONFIG is read only when it decides the path, and then its errors count too.
  EXPECT_EQ(run_cli({"status"}, env_of({{"BATON_CONFIG", malformed}})).code, 2);
  fake_daemon daemon(socket_path());
  EXPECT_EQ(
      run_cli({"status", "--socket", daemon.path()}, env_of({{"BATON_CONFIG", malformed}})).code,
      0);
}

TEST_F(client_command_line_test, config_needs_only_the_socket) {
  // The daemon's other settings (a required election, a password file this
  // user cannot read) are none of the client's business.
  fake_daemon daemon(socket_path());
  auto config = write_file("partial.yaml",
                           "redis:\n  password_file: \"/nonexistent/secret\"\n"
                           "socket:\n  path: \"" +
                               daemon.path() + "\"\n");
  EXPECT_EQ(run_cli({"status", "--config", config}).code, 0);
}

}  // namespace
}  // namespace baton::cli_test
