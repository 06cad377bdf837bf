// The binary as an operator meets it: bad configuration is one line naming the
// option and exit code 2; check-config prints the effective config with the
// password masked; version answers.
#include <gtest/gtest.h>

#include <fstream>

#include "support/baton_process.hpp"
#include "support/fault_proxy.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

struct cli_outcome {
  int code;
  std::string output;
};

cli_outcome run_baton(std::vector<std::string> args, env_list env = {}) {
  temp_dir dir("baton-cli-");
  baton_process p(std::move(args), std::move(env), dir / "out.log");
  auto code = p.wait_exit(10s);
  EXPECT_TRUE(code) << "baton did not exit";
  return {code.value_or(-1), p.log_text()};
}

TEST(command_line, bad_duration_names_the_option_and_exits_2) {
  auto r = run_baton({"run", "--election", "jobs", "--ttl", "10", "--", "/bin/true"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("lease.ttl"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

TEST(command_line, contradictory_timing_names_both_options) {
  auto r = run_baton({"run", "--election", "jobs", "--ttl", "3s", "--renew-deadline", "3s"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("lease.renew_deadline"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("lease.renew_interval"), std::string::npos) << r.output;
}

TEST(command_line, missing_election_and_unknown_yaml_key_exit_2) {
  EXPECT_EQ(run_baton({"run", "--", "/bin/true"}).code, 2);
  temp_dir dir("baton-cli-");
  std::ofstream(dir / "c.yaml") << "election: jobs\nlease:\n  tll: 3s\n";
  auto r = run_baton({"check-config", "--config", (dir / "c.yaml").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("lease.tll"), std::string::npos) << r.output;
}

TEST(command_line, env_config_error_exits_2) {
  auto r = run_baton({"check-config"}, {{"BATON_ELECTION", "jobs"}, {"BATON_LEASE_TTL", "fast"}});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("BATON_LEASE_TTL"), std::string::npos) << r.output;
}

TEST(command_line, check_config_masks_the_password) {
  auto r = run_baton({"check-config", "--election", "jobs"},
                     {{"BATON_REDIS_PASSWORD", "s3cret-value"}});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("s3cret-value"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("***"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("renew_interval: 3333ms"), std::string::npos) << r.output;
}

TEST(command_line, socket_path_in_use_is_a_start_up_failure) {
  temp_dir dir("baton-cli-");
  auto sock = (dir / "s.sock").string();
  baton_process first({"run", "--election", "a", "--redis-url", "redis://127.0.0.1:1",
                       "--socket", sock},
                      {}, dir / "first.log");
  ASSERT_TRUE(first.wait_for_log("socket: listening", 10s)) << first.log_text();
  auto r = run_baton({"run", "--election", "a", "--redis-url", "redis://127.0.0.1:1", "--socket",
                      sock});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("another process is listening"), std::string::npos) << r.output;
}

TEST(command_line, version_answers) {
  auto r = run_baton({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("baton 0.1.0"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace baton::testing

namespace baton::testing {
namespace {

// `baton init-store` against a real redis-server: the first call creates the
// election's record (the counter, from TIME), a second changes nothing, and
// an unreachable store is exit 1 with the cause.
TEST(init_store, creates_the_record_once_and_reports_an_unreachable_store) {
  redis_server server;
  const std::string url = "redis://127.0.0.1:" + std::to_string(server.port());
  auto first = run_baton({"init-store", "--election", "fresh", "--redis-url", url});
  EXPECT_EQ(first.code, 0) << first.output;
  EXPECT_NE(first.output.find("created the record of election fresh"), std::string::npos)
      << first.output;
  const auto counter = server.command({"GET", "baton:{fresh}:token"});
  ASSERT_EQ(counter.size(), 1U);
  EXPECT_GT(std::stoull(counter[0]), 1'700'000'000'000'000ULL);
  EXPECT_EQ(server.command({"EXISTS", "baton:{fresh}:fence"}), std::vector<std::string>{"0"});

  auto second = run_baton({"init-store", "--election", "fresh", "--redis-url", url});
  EXPECT_EQ(second.code, 0) << second.output;
  EXPECT_NE(second.output.find("already has a record"), std::string::npos) << second.output;
  EXPECT_EQ(server.command({"GET", "baton:{fresh}:token"}), counter);

  server.kill_and_wait();
  auto down = run_baton({"init-store", "--election", "fresh", "--redis-url", url,
                         "--redis-connect-timeout", "300ms", "--redis-timeout", "300ms"});
  EXPECT_EQ(down.code, 1) << down.output;
  EXPECT_NE(down.output.find("baton: init-store: "), std::string::npos) << down.output;
  EXPECT_NE(down.output.find("127.0.0.1"), std::string::npos) << down.output;
}

// A server slower than the command timeout is tried three times, each try
// said, then exit 1: an admin command on a busy server gets more than the
// renewal-sized timeout, but is not waited for forever. The proxy's delay
// lets the connection be made (its timeout is long) and every command time out.
TEST(init_store, a_server_slower_than_the_timeout_is_tried_three_times) {
  redis_server server;
  fault_proxy slow(server.port());
  slow.delay(std::chrono::milliseconds(250));
  auto r = run_baton({"init-store", "--election", "fresh", "--redis-url", slow.url(),
                      "--redis-connect-timeout", "5s", "--redis-timeout", "300ms"});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("trying again (2 of 3)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("trying again (3 of 3)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("(4 of 3)"), std::string::npos) << r.output;
  EXPECT_EQ(server.command({"EXISTS", "baton:{fresh}:token"}), std::vector<std::string>{"1"})
      << "the tries reached the server";
}

// Redlock: one master down is a record missing there, exit 1, said once as
// `baton: init-store: ...` (the store's message names no command of its own).
TEST(init_store, a_redlock_master_down_is_named_in_one_prefixed_line) {
  redis_server a, b, c;
  std::string masters;
  for (const auto* s : {&a, &b, &c}) {
    masters += (masters.empty() ? "" : ",") + std::string("redis://127.0.0.1:") +
               std::to_string(s->port());
  }
  c.kill_and_wait();
  auto r = run_baton({"init-store", "--election", "fresh", "--store-kind", "redlock",
                      "--redlock-masters", masters, "--redis-connect-timeout", "300ms",
                      "--redis-timeout", "300ms"});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(r.output.rfind("baton: init-store: the record is missing on 1 of 3 masters", 0), 0u)
      << r.output;
  EXPECT_EQ(r.output.find("init-store:"), r.output.rfind("init-store:")) << r.output;
  EXPECT_NE(r.output.find(std::to_string(c.port())), std::string::npos) << r.output;
}

}  // namespace
}  // namespace baton::testing
