// start(): on_start then the child, the environment they get, and every way
// a start can fail (hook exit code, exec failure, timeout, child spawn).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>

#include "process_test_util.hpp"

namespace baton {
namespace {

using namespace process_test;

TEST(app_controller_start, runs_on_start_then_child_and_reports_started) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io,
                     make_hooks({dir.script("start.sh", "echo on_start >> \"$MARK\"")}, {}),
                     make_child({dir.script("child.sh", "echo child >> \"$MARK\"; exec sleep 100")}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  EXPECT_TRUE(app.active());
  EXPECT_EQ(rec.started, 0) << "callbacks are posted, never inline";
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  pid_t pid = app.child_pid();
  ASSERT_GT(pid, 0);
  EXPECT_EQ(::kill(pid, 0), 0);
  EXPECT_EQ(::getpgid(pid), pid) << "the child leads its own process group";
  ASSERT_TRUE(run_until(io, [&] { return dir.marker() == "on_start\nchild\n"; }));
  ASSERT_EQ(rec.hooks.size(), 1u);
  EXPECT_EQ(std::get<0>(rec.hooks[0]), "on_start");
  EXPECT_TRUE(std::get<2>(rec.hooks[0]));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"hook:on_start:ok", "started"}));

  app.stop(make_context("shutdown"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_FALSE(app.active());
  EXPECT_EQ(app.child_pid(), 0);
  EXPECT_EQ(rec.child_exited, 0) << "an exit caused by stop() is not child_exited";
}

TEST(app_controller_start, the_commands_own_pid_is_the_keepers_child) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, make_hooks({}, {}),
                     make_child({dir.script("child.sh", "echo $$ > \"$MARK\"; exec sleep 100")}),
                     rec.listener(), keeper_options());
  EXPECT_EQ(app.command_pid(), 0) << "nothing runs yet";
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1 && !dir.marker().empty(); }));
  const pid_t keeper = app.child_pid();
  ASSERT_GT(keeper, 0);
  const pid_t command = app.command_pid();
  EXPECT_NE(command, keeper);
  EXPECT_EQ(std::to_string(command) + "\n", dir.marker()) << "the shell's $$ is the command's pid";
  EXPECT_EQ(::getpgid(command), keeper) << "it runs in the keeper's process group";
  app.stop(make_context("shutdown"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_EQ(app.command_pid(), 0);
}

TEST(app_controller_start, neither_hook_nor_child_reports_started_later) {
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{}, child_config{}, rec.listener(), keeper_options());
  app.start(make_context());
  EXPECT_EQ(rec.started, 0);
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  app.stop(make_context("lost"));
  EXPECT_EQ(rec.stopped, 0);
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
}

TEST(app_controller_start, environment_has_term_variables_and_no_secrets) {
  temp_dir dir;
  // Every store's secrets, whatever store.kind is: none may reach a hook.
  ::setenv("BATON_REDIS_PASSWORD", "hunter2", 1);
  ::setenv("BATON_POSTGRES_PASSWORD", "hunter2", 1);
  ::setenv("BATON_POSTGRES_URL", "postgresql://baton:hunter2@127.0.0.1/app", 1);
  ::setenv("BATON_REDIS_URL", "redis://:hunter2@127.0.0.1:6379", 1);
  ::setenv("BATON_EVENT", "stale", 1);
  ::setenv("PROCESS_TEST_INHERITED", "yes", 1);
  ::setenv("NOTIFY_SOCKET", "/run/systemd/notify", 1);
  ::setenv("WATCHDOG_USEC", "10000000", 1);
  boost::asio::io_context io;
  recorder rec;
  {
    app_controller app(
        io,
        make_hooks({dir.script("start.sh", "env > \"$DIR/start.env\"")},
                   {dir.script("stop.sh", "env > \"$DIR/stop.env\"")}),
        make_child({dir.script("child.sh", "env > \"$DIR/child.env.tmp\"; "
                                           "mv \"$DIR/child.env.tmp\" \"$DIR/child.env\"; "
                                           "exec sleep 100")}),
        rec.listener(), keeper_options());
    app.start(make_context());
    ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
    ASSERT_TRUE(run_until(io, [&] { return !temp_dir::read(dir.file("child.env")).empty(); }));
    app.stop(make_context("lost"));
    ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  }
  ::unsetenv("BATON_REDIS_PASSWORD");
  ::unsetenv("BATON_POSTGRES_PASSWORD");
  ::unsetenv("BATON_POSTGRES_URL");
  ::unsetenv("BATON_REDIS_URL");
  ::unsetenv("BATON_EVENT");
  ::unsetenv("PROCESS_TEST_INHERITED");
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");

  for (const char* name : {"start.env", "child.env", "stop.env"}) {
    SCOPED_TRACE(name);
    auto env = lines(temp_dir::read(dir.file(name)));
    auto has = [&](const std::string& line) {
      return std::find(env.begin(), env.end(), line) != env.end();
    };
    bool stop = std::string(name) == "stop.env";
    EXPECT_TRUE(has(stop ? "BATON_EVENT=stop" : "BATON_EVENT=start"));
    EXPECT_FALSE(has("BATON_EVENT=stale"));
    EXPECT_TRUE(has(stop ? "BATON_REASON=lost" : "BATON_REASON=acquired"));
    EXPECT_TRUE(has("BATON_NODE_ID=node-a"));
    EXPECT_TRUE(has("BATON_ELECTION=jobs"));
    EXPECT_TRUE(has("BATON_LEASE_TTL_MS=10000"));
    EXPECT_TRUE(has("BATON_TOKEN=42"));
    EXPECT_TRUE(has("PROCESS_TEST_INHERITED=yes"));
    for (auto& line : env) {
      EXPECT_EQ(line.rfind("BATON_REDIS_PASSWORD", 0), std::string::npos) << line;
      EXPECT_EQ(line.find("hunter2"), std::string::npos) << line;
      // systemd's notification channel is the daemon's, not the app's.
      EXPECT_EQ(line.rfind("NOTIFY_SOCKET=", 0), std::string::npos) << line;
      EXPECT_EQ(line.rfind("WATCHDOG_USEC=", 0), std::string::npos) << line;
    }
  }
}

TEST(app_controller_start, failing_on_start_reports_start_failed_and_spawns_no_child) {
  temp_dir dir;
  log_capture log;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io,
                     make_hooks({dir.script("start.sh", "echo on_start >> \"$MARK\"; exit 3")},
                                {dir.script("stop.sh", "echo on_stop >> \"$MARK\"")}),
                     make_child({dir.script("child.sh", "echo child >> \"$MARK\"")}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.start_failed == 1; }));
  EXPECT_EQ(rec.failure, "on_start: failed with exit code 3");
  EXPECT_TRUE(log.has(spdlog::level::err, "on_start: failed with exit code 3"));
  EXPECT_EQ(app.child_pid(), 0);
  EXPECT_TRUE(app.active()) << "stop() is still expected after start_failed";
  ASSERT_EQ(rec.hooks.size(), 1u);
  EXPECT_FALSE(std::get<2>(rec.hooks[0]));

  app.stop(make_context("start-failed"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_EQ(dir.marker(), "on_start\non_stop\n");
  EXPECT_EQ(rec.started, 0);
}

TEST(app_controller_start, missing_hook_command_is_a_clear_failure) {
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, make_hooks({"/nonexistent/baton-hook", "arg"}, {}), child_config{},
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.start_failed == 1; }));
  EXPECT_EQ(rec.failure, "on_start: cannot execute /nonexistent/baton-hook: No such file or directory");
  app.stop(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
}

TEST(app_controller_start, non_executable_hook_is_a_clear_failure) {
  temp_dir dir;
  std::string path = dir.script("start.sh", "true");
  ::chmod(path.c_str(), 0644);
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, make_hooks({path}, {}), child_config{}, rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.start_failed == 1; }));
  EXPECT_EQ(rec.failure, "on_start: cannot execute " + path + ": Permission denied");
}

TEST(app_controller_start, missing_child_command_is_a_clear_failure) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, make_hooks({dir.script("start.sh", "true")}, {}),
                     make_child({"baton-no-such-command-xyz"}), rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.start_failed == 1; }));
  EXPECT_EQ(rec.failure, "child: cannot execute baton-no-such-command-xyz: No such file or directory");
  EXPECT_EQ(rec.started, 0);
}

TEST(app_controller_start, bare_command_names_are_looked_up_in_path) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{},
                     make_child({"sh", "-c", "echo via-path >> \"$0\"; exec sleep 100",
                                 dir.file("marker")}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  ASSERT_TRUE(run_until(io, [&] { return dir.marker() == "via-path\n"; }));
}

TEST(app_controller_start, child_exiting_by_itself_reports_child_exited) {
  temp_dir dir;
  log_capture log;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, make_hooks({}, {dir.script("stop.sh", "echo on_stop >> \"$MARK\"")}),
                     make_child({dir.script("child.sh", "exit 3")}), rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }));
  EXPECT_EQ(rec.child_status.code, 3);
  EXPECT_EQ(rec.child_status.signal, 0);
  EXPECT_EQ(rec.events, (std::vector<std::string>{"started", "child_exited"}));
  EXPECT_TRUE(log.has("exited with exit code 3"));
  EXPECT_EQ(app.child_pid(), 0);
  EXPECT_TRUE(app.active());

  app.stop(make_context("child-exited"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_EQ(dir.marker(), "on_stop\n");
}

TEST(app_controller_start, child_killed_by_a_signal_reports_it) {
  boost::asio::io_context io;
  log_capture log;
  recorder rec;
  app_controller app(io, hooks_config{}, make_child({"/bin/sh", "-c", "kill -KILL $$"}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }));
  EXPECT_EQ(rec.child_status.signal, SIGKILL);
  EXPECT_EQ(rec.child_status.describe(), "killed by SIGKILL");
  EXPECT_TRUE(log.has("killed by SIGKILL"));
}

TEST(app_controller_start, timed_out_on_start_is_killed_and_fails_the_start) {
  temp_dir dir;
  log_capture log;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io,
                     make_hooks({dir.script("start.sh", "sleep 100")}, {},
                                milliseconds(300)),
                     make_child({dir.script("child.sh", "echo child >> \"$MARK\"")}),
                     rec.listener(), keeper_options());
  auto begin = std::chrono::steady_clock::now();
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.start_failed == 1; }));
  auto took = std::chrono::steady_clock::now() - begin;
  EXPECT_GE(took, 300ms);
  EXPECT_EQ(rec.failure, "on_start: timed out after 300ms");
  EXPECT_TRUE(log.has(spdlog::level::err, "on_start: timed out after 300ms; sending SIGTERM"));
  EXPECT_FALSE(log.has("sending SIGKILL")) << "sh and sleep die of SIGTERM";
  EXPECT_EQ(dir.marker(), "") << "no child after a failed on_start";
  EXPECT_EQ(app.hook_pid(), 0);
}

TEST(app_controller_start, start_while_active_is_ignored) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, make_hooks({dir.script("start.sh", "echo on_start >> \"$MARK\"")}, {}),
                     child_config{}, rec.listener(), keeper_options());
  app.start(make_context());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  app.stop(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_EQ(dir.marker(), "on_start\n");
  EXPECT_EQ(rec.started, 1);
}

TEST(app_controller_start, a_second_term_runs_the_hooks_again) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io,
                     make_hooks({dir.script("start.sh", "echo on_start $BATON_TOKEN >> \"$MARK\"")},
                                {dir.script("stop.sh", "echo on_stop $BATON_TOKEN >> \"$MARK\"")}),
                     make_child({"sleep", "100"}), rec.listener(), keeper_options());
  for (std::uint64_t token = 1; token <= 2; ++token) {
    auto ctx = make_context();
    ctx.token = token;
    app.start(ctx);
    ASSERT_TRUE(run_until(io, [&] { return rec.started == static_cast<int>(token); }));
    app.stop(ctx);
    ASSERT_TRUE(run_until(io, [&] { return rec.stopped == static_cast<int>(token); }));
  }
  EXPECT_EQ(dir.marker(), "on_start 1\non_stop 1\non_start 2\non_stop 2\n");
}

}  // namespace
}  // namespace baton
