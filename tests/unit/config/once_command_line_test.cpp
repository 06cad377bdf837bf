// `baton once [options] [--wait D] -- CMD`: a run of one term (config::once),
// a command required, --wait parsed as a duration, and no app socket or HTTP
// endpoint unless once's own flags ask for them.
#include <gtest/gtest.h>

#include <string>

#include "baton/command_line.hpp"
#include "config_test_util.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;
using namespace config_test_util;

TEST(once_command_line, is_a_run_of_one_term_with_the_command) {
  const auto inv = parse({"once", "--election", "jobs", "--", "/bin/echo", "nightly"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_TRUE(inv.cfg.once.enabled);
  EXPECT_EQ(inv.cfg.once.wait, 0ms);
  EXPECT_EQ(inv.cfg.child.command, (std::vector<std::string>{"/bin/echo", "nightly"}));
}

TEST(once_command_line, run_is_not_one_term) {
  const auto inv = parse({"run", "--election", "jobs", "--", "/bin/echo"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_FALSE(inv.cfg.once.enabled);
}

TEST(once_command_line, wait_is_a_duration) {
  const auto inv = parse({"once", "--election", "jobs", "--wait", "1.5s", "--", "/bin/true"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(inv.cfg.once.wait, 1500ms);
}

TEST(once_command_line, a_bad_wait_is_a_usage_error_naming_it) {
  const auto inv = parse({"once", "--election", "jobs", "--wait", "soon", "--", "/bin/true"});
  EXPECT_EQ(inv.what, invocation::verb::exit_now);
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("--wait"), std::string::npos) << inv.message;
}

TEST(once_command_line, wait_belongs_to_once_alone) {
  const auto inv = parse({"run", "--election", "jobs", "--wait", "5s", "--", "/bin/true"});
  EXPECT_EQ(inv.what, invocation::verb::exit_now);
  EXPECT_EQ(inv.exit_code, 2);
}

TEST(once_command_line, refuses_never_lead_by_name) {
  const auto inv = parse({"once", "--election", "jobs", "--never-lead", "--", "/bin/true"});
  EXPECT_EQ(inv.what, invocation::verb::exit_now);
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("never_lead is set"), std::string::npos) << inv.message;
}

TEST(once_command_line, needs_a_command) {
  const auto inv = parse({"once", "--election", "jobs"});
  EXPECT_EQ(inv.what, invocation::verb::exit_now);
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("baton once [options] -- CMD"), std::string::npos) << inv.message;
}

TEST(once_command_line, a_command_from_the_file_is_enough) {
  temp_dir dir;
  const auto file = dir.write("b.yaml", "election: jobs\nchild: {command: [/bin/true]}\n");
  const auto inv = parse({"once", "--config", file});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(inv.cfg.child.command, std::vector<std::string>{"/bin/true"});
}

TEST(once_command_line, the_file_and_environment_open_no_listener) {
  temp_dir dir;
  const auto file = dir.write(
      "b.yaml", "election: jobs\nsocket: {path: /run/baton/jobs.sock, require_ack: true}\n"
                "http: {listen: 127.0.0.1:9000}\n");
  const auto inv = parse({"once", "--config", file, "--", "/bin/true"},
                         {{"BATON_HTTP_LISTEN", "127.0.0.1:9001"}});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(inv.cfg.socket.path, "");
  EXPECT_FALSE(inv.cfg.socket.require_ack);
  EXPECT_EQ(inv.cfg.http.listen, "");
}

TEST(once_command_line, its_own_flags_open_them) {
  const auto inv = parse({"once", "--election", "jobs", "--socket", "/tmp/once.sock",
                          "--http-listen", "127.0.0.1:9002", "--", "/bin/true"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(inv.cfg.socket.path, "/tmp/once.sock");
  EXPECT_EQ(inv.cfg.http.listen, "127.0.0.1:9002");
}

TEST(once_command_line, help_lists_the_exit_codes) {
  const auto inv = parse({"once", "--help"});
  EXPECT_EQ(inv.exit_code, 0);
  for (const char* code : {"75:", "69:", "70:", "143, 130:", "127:"}) {
    EXPECT_NE(inv.message.find(code), std::string::npos) << code;
  }
  EXPECT_NE(inv.message.find("--wait DURATION"), std::string::npos);
}

TEST(once_command_line, baton_help_lists_once) {
  const auto inv = parse({"--help"});
  EXPECT_NE(inv.message.find("once"), std::string::npos);
}

}  // namespace
}  // namespace baton
