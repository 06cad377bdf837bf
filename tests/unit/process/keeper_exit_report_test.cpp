// The keeper reports the command's end on descriptor 3 the moment it reaps
// it, and the controller goes on from that report: a stop completes (and the
// lease can be released) without waiting for the keeper's own exit, while
// what is left of the app's process group is SIGKILLed first.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "process_test_util.hpp"

namespace baton {
namespace {

using namespace process_test;

/// Runs `binary __keeper -- /bin/sh -c SCRIPT` as the daemon would (leader of
/// its own group, one end of a socket pair as descriptor 3), and returns what
/// it wrote there until it exited, and its wait status.
struct keeper_run {
  std::string written;
  int wait_status = -1;
};

std::optional<keeper_run> run_bare_keeper(const std::string& binary, const std::string& script) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return std::nullopt;
  std::string program = binary, verb = "__keeper", dashes = "--", shell = "/bin/sh", flag = "-c",
              text = script;
  char* argv[] = {program.data(), verb.data(), dashes.data(), shell.data(),
                  flag.data(),    text.data(), nullptr};
  const pid_t pid = fork_keeper(argv, fds[0]);
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return std::nullopt;
  }
  keeper_run run;
  // Until end of file: the keeper's exit closes its end (the command has none).
  auto deadline = std::chrono::steady_clock::now() + 15s;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fds[1], POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buffer[256];
    ssize_t n = ::read(fds[1], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    run.written.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[1]);
  ::kill(-pid, SIGKILL);  // only if something went wrong: the group is gone by now
  while (::waitpid(pid, &run.wait_status, 0) < 0 && errno == EINTR) {
  }
  return run;
}

TEST(keeper_exit_report, the_keeper_reports_how_the_command_ended_then_ends_the_same_way) {
  struct report_case {
    const char* script;
    const char* report;
    int code;    // the keeper's exit code, or -1
    int signal;  // the signal it died of, or 0
  };
  const report_case cases[] = {
      {"exit 0", "exited 0\n", 0, 0},
      {"exit 3", "exited 3\n", 3, 0},
      {"kill -TERM $$", "killed 15\n", -1, SIGTERM},
      {"kill -KILL $$", "killed 9\n", -1, SIGKILL},
  };
  for (const char* binary : {BATON_BINARY, BATON_KEEPER_BINARY}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(binary) + ": " + c.script);
      auto run = run_bare_keeper(binary, c.script);
      ASSERT_TRUE(run.has_value());
      EXPECT_EQ(run->written, c.report);
      if (c.signal != 0) {
        ASSERT_TRUE(WIFSIGNALED(run->wait_status));
        EXPECT_EQ(WTERMSIG(run->wait_status), c.signal);
      } else {
        ASSERT_TRUE(WIFEXITED(run->wait_status));
        EXPECT_EQ(WEXITSTATUS(run->wait_status), c.code);
      }
    }
  }
}

/// True when `pid` can run no more instructions of its own: gone, a zombie,
/// or with SIGKILL pending (sent, not yet acted upon).
bool gone_or_killed(pid_t pid) {
  if (!alive(pid)) return true;
  std::string status = temp_dir::read("/proc/" + std::to_string(pid) + "/status");
  for (const auto& line : lines(status)) {
    for (const char* field : {"SigPnd:", "ShdPnd:"}) {
      if (line.rfind(field, 0) != 0) continue;
      unsigned long long mask = std::stoull(line.substr(std::string(field).size()), nullptr, 16);
      if ((mask & (1ULL << (SIGKILL - 1))) != 0) return true;
    }
  }
  return false;
}

bool reaped(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

TEST(keeper_exit_report, a_stop_completes_at_the_report_with_the_rest_of_the_group_killed) {
  temp_dir dir;
  log_capture log;
  boost::asio::io_context io;
  recorder rec;
  // A grandchild that ignores SIGTERM outlives the command's stop: only the
  // SIGKILL to the group, sent at the report, ends it.
  auto events = rec.listener();
  pid_t grandchild = 0;
  bool grandchild_ended_before_stopped = false;
  auto stopped = events.stopped;
  events.stopped = [&, stopped] {
    grandchild_ended_before_stopped = grandchild > 0 && gone_or_killed(grandchild);
    stopped();
  };
  app_controller app(
      io, hooks_config{},
      make_child({dir.script("child.sh",
                             "(trap '' TERM; exec sleep 100) & echo $! > \"$DIR/gc.tmp\"; "
                             "mv \"$DIR/gc.tmp\" \"$DIR/gc\"\nexec sleep 100")}),
      events, keeper_options());
  app.set_deadline(std::chrono::steady_clock::now() + 60s);
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return !temp_dir::read(dir.file("gc")).empty(); }));
  grandchild = std::stoi(temp_dir::read(dir.file("gc")));
  const pid_t keeper = app.child_pid();
  ASSERT_GT(keeper, 0);

  app.stop(make_context("lost"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_TRUE(grandchild_ended_before_stopped);
  EXPECT_TRUE(log.has(spdlog::level::debug, "the keeper reported the command's end"));
  EXPECT_TRUE(log.has(spdlog::level::info,
                      "app: child (keeper pid " + std::to_string(keeper) + ") killed by SIGTERM"))
      << "the command's status, from the report";
  // The keeper is reaped later, and says nothing more.
  ASSERT_TRUE(run_until(io, [&] { return reaped(keeper); }));
  EXPECT_TRUE(wait_dead(grandchild));
  run_for(io, 100ms);
  EXPECT_EQ(rec.events, (std::vector<std::string>{"started", "stopped"}));
  EXPECT_FALSE(log.has("parked keeper"));
}

// A keeper that reports and then stays (as one the scheduler has not run
// since its report would): the controller goes on at the report and SIGKILLs it.
TEST(keeper_exit_report, the_controller_does_not_wait_for_the_keepers_exit) {
  temp_dir dir;
  log_capture log;
  // Stands in for the keeper: reports the command's end on descriptor 3 (at
  // once for an exit, on SIGTERM for a stop), then stays, deaf to SIGTERM.
  // Its pid file is written between the two parts: before the report (which
  // gets it killed), after the trap that will send it.
  const std::pair<std::string, std::string> reports[] = {
      {"trap '' TERM", "echo 'exited 5' >&3"},
      {"trap 'echo \"killed 15\" >&3; trap \"\" TERM' TERM", "sleep 100 & wait $!"},
  };
  for (const auto& [before, after] : reports) {
    const bool exits = after.find("exited") != std::string::npos;
    SCOPED_TRACE(after);
    ::unlink(dir.file("keeper").c_str());
    std::string stuck_keeper = dir.script(
        "stuck_keeper.sh",
        before + "\necho $$ > \"$DIR/keeper.tmp\"; mv \"$DIR/keeper.tmp\" \"$DIR/keeper\"\n" +
            after + "\ntrap '' TERM\nexec sleep 100");
    boost::asio::io_context io;
    recorder rec;
    app_controller_options options;
    options.keeper_program = stuck_keeper;
    app_controller app(io, hooks_config{}, make_child({"true"}), rec.listener(), options);
    app.start(make_context());
    ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
    ASSERT_TRUE(run_until(io, [&] { return !temp_dir::read(dir.file("keeper")).empty(); }));
    const pid_t keeper = std::stoi(temp_dir::read(dir.file("keeper")));
    if (exits) {
      ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }));
      EXPECT_EQ(rec.child_status.code, 5);
      app.stop(make_context("child-exited"));
    } else {
      app.stop(make_context("lost"));
    }
    ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
    EXPECT_TRUE(gone_or_killed(keeper)) << "SIGKILLed with its group at the report";
    EXPECT_EQ(app.child_pid(), 0);
    ASSERT_TRUE(run_until(io, [&] { return reaped(keeper); }));
    run_for(io, 100ms);
    EXPECT_EQ(rec.stopped, 1);
    EXPECT_EQ(rec.child_exited, exits ? 1 : 0);
  }
}

}  // namespace
}  // namespace baton
