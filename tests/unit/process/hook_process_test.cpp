// What a hook or child process sees and produces: its output in the log
// (prefixed, line by line, cut when too long), its file descriptors, its
// signal mask and dispositions; and exit_status texts.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <set>

#include "process_test_util.hpp"

namespace baton {
namespace {

using namespace process_test;

TEST(hook_process, output_lines_reach_the_log_with_the_hook_name) {
  temp_dir dir;
  log_capture log;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io,
                     make_hooks({dir.script("start.sh",
                                            "echo hello\n"
                                            "echo oops >&2\n"
                                            "printf 'crlf\\r\\n'\n"
                                            "head -c 10000 /dev/zero | tr '\\0' x; echo\n"
                                            "echo after-long\n"
                                            "printf tail")},
                                {dir.script("stop.sh", "echo bye")}),
                     child_config{}, rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  // Logged before the result: no waiting needed.
  EXPECT_TRUE(log.has(spdlog::level::info, "[on_start] hello"));
  EXPECT_TRUE(log.has(spdlog::level::warn, "[on_start] oops"));
  EXPECT_TRUE(log.has(spdlog::level::info, "[on_start] after-long"));
  EXPECT_TRUE(log.has(spdlog::level::info, "[on_start] tail")) << "partial last line";
  bool found_long = false;
  for (auto& [level, message] : log.messages()) {
    if (message.rfind("[on_start] xxx", 0) != 0) continue;
    found_long = true;
    EXPECT_EQ(std::count(message.begin(), message.end(), 'x'), 4096);
    EXPECT_NE(message.find("[line cut at 4096 bytes]"), std::string::npos);
  }
  EXPECT_TRUE(found_long);
  EXPECT_TRUE(log.has(spdlog::level::info, "[on_start] crlf"));
  EXPECT_FALSE(log.has("crlf\r"));

  app.stop(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_TRUE(log.has(spdlog::level::info, "[on_stop] bye"));
}

TEST(hook_process, background_process_holding_the_pipe_does_not_delay_the_hook) {
  temp_dir dir;
  log_capture log;
  boost::asio::io_context io;
  recorder rec;
  // The background subshell keeps the hook's stdout open until the test says go.
  app_controller app(io,
                     make_hooks({dir.script("start.sh",
                                            "(while [ ! -e \"$DIR/go\" ]; do sleep 0.05; done;"
                                            " echo late) &\n"
                                            "echo early")},
                                {}),
                     child_config{}, rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  EXPECT_TRUE(log.has("[on_start] early"));
  EXPECT_FALSE(log.has("[on_start] late"));
  std::ofstream(dir.file("go")) << "go";
  // Its output is still logged when it comes, after the hook's result.
  ASSERT_TRUE(run_until(io, [&] { return log.has("[on_start] late"); }));
  app.stop(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
}

std::set<std::string> fd_names(const std::string& listing) {
  std::set<std::string> names;
  for (auto& line : lines(listing)) {
    // `ls -l` lines end in "N -> target"; plain `ls` lines are just "N".
    auto arrow = line.find(" -> ");
    std::string head = arrow == std::string::npos ? line : line.substr(0, arrow);
    auto space = head.rfind(' ');
    names.insert(space == std::string::npos ? head : head.substr(space + 1));
  }
  names.erase("total");
  names.erase("");
  return names;
}

TEST(hook_process, only_stdio_descriptors_are_inherited) {
  temp_dir dir;
  log_capture log;
  // A descriptor opened without O_CLOEXEC, as a careless library would.
  int leak = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(leak, 0);
  boost::asio::io_context io;
  recorder rec;
  // `ls` lists its own descriptors: 0-2 plus the one it opens for the listing (3).
  app_controller app(io, make_hooks({"ls", "-l", "/proc/self/fd"}, {}),
                     make_child({"/bin/sh", "-c", "exec ls -l /proc/self/fd > \"$0\"",
                                 dir.file("child.fds")}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }));
  ::close(leak);

  std::string hook;
  for (auto& [level, message] : log.messages()) {
    if (message.rfind("[on_start] ", 0) == 0) hook += message.substr(11) + "\n";
  }
  EXPECT_EQ(fd_names(hook), (std::set<std::string>{"0", "1", "2", "3"})) << hook;
  for (auto& line : lines(hook)) {
    if (line.find(" 1 -> ") != std::string::npos || line.find(" 2 -> ") != std::string::npos) {
      EXPECT_NE(line.find("pipe:"), std::string::npos) << line;
    }
    if (line.find(" 3 -> ") != std::string::npos) {
      EXPECT_NE(line.find("/fd"), std::string::npos) << line;
    }
  }
  auto child = temp_dir::read(dir.file("child.fds"));
  EXPECT_EQ(fd_names(child), (std::set<std::string>{"0", "1", "2", "3"})) << child;
  for (auto& line : lines(child)) {
    if (line.find(" 3 -> ") != std::string::npos) {
      EXPECT_NE(line.find("/fd"), std::string::npos) << line;
    }
  }
}

TEST(hook_process, signal_mask_and_ignored_signals_are_reset) {
  temp_dir dir;
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  sigset_t old_mask;
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &block, &old_mask), 0);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old_action {};
  ASSERT_EQ(::sigaction(SIGUSR2, &ignore, &old_action), 0);

  boost::asio::io_context io;
  recorder rec;
  {
    // grep reports its own state, inherited through exec from what we spawned
    // (a shell's own mask is briefly all-blocked while it forks).
    app_controller app(io, hooks_config{},
                       make_child({"/bin/sh", "-c",
                                   "exec grep -E '^Sig(Blk|Ign)' /proc/self/status > \"$0\"",
                                   dir.file("status")}),
                       rec.listener(), keeper_options());
    app.start(make_context());
    ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }));
  }
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGUSR2, &old_action, nullptr);
  auto status = temp_dir::read(dir.file("status"));
  EXPECT_EQ(status, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST(exit_status, describes_codes_and_signals) {
  EXPECT_EQ((exit_status{0, 0}).describe(), "exit code 0");
  EXPECT_EQ((exit_status{3, 0}).describe(), "exit code 3");
  EXPECT_EQ((exit_status{0, SIGTERM}).describe(), "killed by SIGTERM");
  EXPECT_EQ((exit_status{0, SIGKILL}).describe(), "killed by SIGKILL");
  EXPECT_EQ((exit_status{0, 200}).describe(), "killed by signal 200");
  EXPECT_EQ((exit_status{0, SIGKILL}).as_exit_code(), 137);
  EXPECT_TRUE((exit_status{0, 0}).success());
  EXPECT_FALSE((exit_status{0, SIGTERM}).success());
}

}  // namespace
}  // namespace baton
