// The keeper between the controller and the child: the child runs under it
// and sees only its own environment and descriptors; stop and exit statuses
// pass through it unchanged; and it kills the app's whole process group when
// the lease deadline passes without renewal or when the daemon goes away —
// including a real daemon process that is SIGKILLed or SIGSTOPped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "process_test_util.hpp"

namespace baton {
namespace {

using namespace process_test;

/// Sends this process's stderr (and so the keeper's) to a file while alive.
class stderr_capture {
 public:
  explicit stderr_capture(std::string path) : path_(std::move(path)) {
    std::fflush(stderr);
    saved_ = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (saved_ < 0 || fd < 0) throw std::runtime_error("cannot capture stderr");
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~stderr_capture() {
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
  }
  stderr_capture(const stderr_capture&) = delete;
  stderr_capture& operator=(const stderr_capture&) = delete;

  std::string text() const { return temp_dir::read(path_); }

 private:
  std::string path_;
  int saved_ = -1;
};

/// Waits (bounded) until `path` exists with content; returns it ("" on timeout).
std::string wait_for_file(const std::string& path, std::chrono::milliseconds limit = 10s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    std::string text = temp_dir::read(path);
    if (!text.empty() || std::chrono::steady_clock::now() >= deadline) return text;
    std::this_thread::sleep_for(10ms);
  }
}

pid_t read_pid(const std::string& path) {
  std::string text = wait_for_file(path);
  return text.empty() ? 0 : static_cast<pid_t>(std::stol(text));
}

/// The parent pid and process group of `pid`, from /proc.
std::pair<pid_t, pid_t> parent_and_group(pid_t pid) {
  std::string stat = temp_dir::read("/proc/" + std::to_string(pid) + "/stat");
  auto paren = stat.rfind(')');
  if (paren == std::string::npos) return {0, 0};
  std::istringstream rest(stat.substr(paren + 2));
  std::string state;
  pid_t ppid = 0;
  pid_t pgrp = 0;
  rest >> state >> ppid >> pgrp;
  return {ppid, pgrp};
}

// An app that notes its pid and a background grandchild's, then waits.
// $1 names the directory for the pid files.
const char* app_with_grandchild =
    "sleep 100 & echo $! > \"$DIR/gc.tmp\"; mv \"$DIR/gc.tmp\" \"$DIR/gc\"\n"
    "echo $$ > \"$DIR/app.tmp\"; mv \"$DIR/app.tmp\" \"$DIR/app\"\n"
    "wait";

std::string kill_line(const std::string& why, pid_t group) {
  return "baton keeper: " + why + "; killing the app (process group " + std::to_string(group) +
         ")\n";
}

TEST(keeper, child_runs_under_the_keeper_in_its_process_group_with_its_environment) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(
      io, hooks_config{},
      make_child({dir.script("child.sh", "env > \"$DIR/env.tmp\"; mv \"$DIR/env.tmp\" \"$DIR/env\"\n"
                                         "echo $$ > \"$DIR/app.tmp\"; mv \"$DIR/app.tmp\" \"$DIR/app\"\n"
                                         "exec sleep 100")}),
      rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  pid_t keeper = app.child_pid();
  ASSERT_GT(keeper, 0);
  pid_t child = read_pid(dir.file("app"));
  ASSERT_GT(child, 0);
  EXPECT_NE(child, keeper);
  EXPECT_EQ(parent_and_group(child), std::make_pair(keeper, keeper))
      << "the command is the keeper's child, in the keeper's process group";
  EXPECT_EQ(::getpgid(keeper), keeper);
  std::string cmdline = temp_dir::read("/proc/" + std::to_string(keeper) + "/cmdline");
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  EXPECT_EQ(cmdline, std::string(BATON_BINARY) + " __keeper -- " + dir.file("child.sh") + " ");

  auto env = lines(wait_for_file(dir.file("env")));
  auto has = [&](const std::string& line) {
    return std::find(env.begin(), env.end(), line) != env.end();
  };
  EXPECT_TRUE(has("BATON_EVENT=start"));
  EXPECT_TRUE(has("BATON_TOKEN=42"));
  EXPECT_TRUE(has("BATON_NODE_ID=node-a"));

  app.stop(make_context("lost"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_TRUE(wait_dead(child));
  // The stop went on at the keeper's report, which SIGKILLed it: it may take
  // a moment more to be gone.
  EXPECT_TRUE(wait_dead(keeper));
}

TEST(keeper, stop_reports_the_status_the_child_died_of) {
  temp_dir dir;
  log_capture log;
  boost::asio::io_context io;
  recorder rec;
  // sleep dies of the SIGTERM; the keeper, immune to it, dies the same way.
  app_controller app(io, hooks_config{}, make_child({"sleep", "100"}), rec.listener(),
                     keeper_options());
  app.set_deadline(std::chrono::steady_clock::now() + 60s);
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  pid_t keeper = app.child_pid();
  app.stop(make_context("lost"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_TRUE(log.has(spdlog::level::info,
                      "app: child (keeper pid " + std::to_string(keeper) + ") killed by SIGTERM"));
  EXPECT_EQ(rec.child_exited, 0);
}

TEST(keeper, stop_reports_the_childs_own_exit_code) {
  temp_dir dir;
  log_capture log;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{},
                     make_child({dir.script("child.sh",
                                            "trap 'exit 7' TERM\n"
                                            "echo up >> \"$MARK\"\n"
                                            "while :; do sleep 1 & wait $!; done")}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1 && dir.marker() == "up\n"; }));
  app.stop(make_context("lost"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_TRUE(log.has(spdlog::level::info, "exited with exit code 7"));
}

TEST(keeper, a_child_killed_by_sigterm_on_its_own_is_reported_so) {
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{}, make_child({"/bin/sh", "-c", "kill -TERM $$"}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }));
  EXPECT_EQ(rec.child_status.describe(), "killed by SIGTERM");
}

TEST(keeper, an_exec_failure_inside_the_keeper_is_exit_127_with_a_clear_line) {
  temp_dir dir;
  stderr_capture err(dir.file("stderr"));
  boost::asio::io_context io;
  recorder rec;
  // Executable, so the controller's own check passes; its interpreter is missing.
  std::string path = dir.file("bad.sh");
  std::ofstream(path) << "#!/nonexistent/interpreter\n";
  ::chmod(path.c_str(), 0755);
  app_controller app(io, hooks_config{}, make_child({path}), rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }));
  EXPECT_EQ(rec.child_status.code, 127);
  EXPECT_NE(err.text().find("baton keeper: cannot execute " + path +
                            ": No such file or directory\n"),
            std::string::npos)
      << err.text();
}

TEST(keeper, a_deadline_in_the_past_kills_the_whole_group_at_once) {
  temp_dir dir;
  stderr_capture err(dir.file("stderr"));
  boost::asio::io_context io;
  recorder rec;
  // Deadlines arrive only after the child started: it gets to write its pids.
  app_controller app(io, hooks_config{}, make_child({dir.script("child.sh", app_with_grandchild)}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  pid_t keeper = app.child_pid();
  pid_t child = read_pid(dir.file("app"));
  pid_t grandchild = read_pid(dir.file("gc"));
  ASSERT_GT(child, 0);
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(alive(grandchild));

  app.set_deadline(std::chrono::steady_clock::now() - 1s);
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }, 10s));
  EXPECT_EQ(rec.child_status.describe(), "killed by SIGKILL");
  EXPECT_TRUE(wait_dead(child));
  EXPECT_TRUE(wait_dead(grandchild));
  EXPECT_NE(err.text().find(kill_line("lease deadline passed with no renewal from the daemon",
                                      keeper)),
            std::string::npos)
      << err.text();
}

TEST(keeper, a_deadline_set_before_start_reaches_the_keeper) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{}, make_child({"sleep", "100"}), rec.listener(),
                     keeper_options());
  auto deadline = std::chrono::steady_clock::now() + 500ms;
  app.set_deadline(deadline);
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }, 10s));
  EXPECT_GE(std::chrono::steady_clock::now(), deadline) << "not killed before the deadline";
  EXPECT_EQ(rec.child_status.describe(), "killed by SIGKILL");
}

TEST(keeper, renewed_deadlines_keep_the_child_running) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{}, make_child({"sleep", "100"}), rec.listener(),
                     keeper_options());
  auto lease = 1s;
  auto first_deadline = std::chrono::steady_clock::now() + lease;
  app.set_deadline(first_deadline);
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  pid_t keeper = app.child_pid();
  // Renew like the daemon does, until well past the first deadline.
  for (int i = 0; i < 100 && std::chrono::steady_clock::now() < first_deadline + 1500ms; ++i) {
    run_for(io, 100ms);
    app.set_deadline(std::chrono::steady_clock::now() + lease);
  }
  EXPECT_GE(std::chrono::steady_clock::now(), first_deadline + 1500ms);
  EXPECT_EQ(rec.child_exited, 0);
  EXPECT_TRUE(alive(keeper));
  app.stop(make_context("lost"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
}

TEST(keeper, without_renewal_the_keeper_kills_at_the_deadline) {
  // What a SIGSTOPped daemon looks like to the keeper: no more deadlines.
  temp_dir dir;
  stderr_capture err(dir.file("stderr"));
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{}, make_child({dir.script("child.sh", app_with_grandchild)}),
                     rec.listener(), keeper_options());
  app.set_deadline(std::chrono::steady_clock::now() + 60s);
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  pid_t keeper = app.child_pid();
  pid_t grandchild = read_pid(dir.file("gc"));
  ASSERT_GT(grandchild, 0);
  auto deadline = std::chrono::steady_clock::now() + 700ms;
  app.set_deadline(deadline);
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }, 10s));
  EXPECT_GE(std::chrono::steady_clock::now(), deadline);
  EXPECT_EQ(rec.child_status.describe(), "killed by SIGKILL");
  EXPECT_TRUE(wait_dead(grandchild));
  EXPECT_NE(err.text().find(kill_line("lease deadline passed with no renewal from the daemon",
                                      keeper)),
            std::string::npos)
      << err.text();
}

TEST(keeper, closing_the_pipe_kills_the_group_at_once) {
  temp_dir dir;
  stderr_capture err(dir.file("stderr"));
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{}, make_child({dir.script("child.sh", app_with_grandchild)}),
                     rec.listener(), keeper_options());
  app.set_deadline(std::chrono::steady_clock::now() + 60s);
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  pid_t keeper = app.child_pid();
  pid_t grandchild = read_pid(dir.file("gc"));
  ASSERT_GT(grandchild, 0);
  auto closed_at = std::chrono::steady_clock::now();
  app.close_keeper_pipe();
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }, 10s));
  EXPECT_LT(std::chrono::steady_clock::now() - closed_at, 5s) << "long before the deadline";
  EXPECT_EQ(rec.child_status.describe(), "killed by SIGKILL");
  EXPECT_TRUE(wait_dead(grandchild));
  EXPECT_NE(err.text().find(kill_line("the daemon is gone (its deadline pipe closed)", keeper)),
            std::string::npos)
      << err.text();
}

TEST(keeper, a_keeper_killed_alone_takes_what_is_left_of_its_group) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{}, make_child({dir.script("child.sh", app_with_grandchild)}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  pid_t child = read_pid(dir.file("app"));
  pid_t grandchild = read_pid(dir.file("gc"));
  ASSERT_GT(child, 0);
  ASSERT_GT(grandchild, 0);
  ASSERT_EQ(::kill(app.child_pid(), SIGKILL), 0);
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }));
  EXPECT_EQ(rec.child_status.describe(), "killed by SIGKILL");
  // The controller clears the group before reaping the keeper.
  EXPECT_TRUE(wait_dead(child));
  EXPECT_TRUE(wait_dead(grandchild));
}

TEST(keeper, setting_a_deadline_after_the_child_exited_is_harmless) {
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{}, make_child({"/bin/sh", "-c", "exit 4"}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }));
  EXPECT_EQ(rec.child_status.code, 4);
  app.set_deadline(std::chrono::steady_clock::now() + 1s);  // no keeper: recorded only
  app.stop(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
}

std::set<std::string> fd_numbers(const std::string& listing) {
  std::set<std::string> out;
  for (auto& line : lines(listing)) {
    auto arrow = line.find(" -> ");
    if (arrow == std::string::npos) continue;
    std::string head = line.substr(0, arrow);
    out.insert(head.substr(head.rfind(' ') + 1));
  }
  return out;
}

TEST(keeper, the_command_inherits_no_descriptor_of_the_keeper) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{},
                     make_child({"/bin/sh", "-c", "exec ls -l /proc/self/fd > \"$0\"",
                                 dir.file("fds")}),
                     rec.listener(), keeper_options());
  app.set_deadline(std::chrono::steady_clock::now() + 60s);
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.child_exited == 1; }));
  EXPECT_TRUE(rec.child_status.success());
  std::string listing = temp_dir::read(dir.file("fds"));
  // 0-2, plus the directory ls opened for the listing (3); no pipe, no signalfd.
  EXPECT_EQ(fd_numbers(listing), (std::set<std::string>{"0", "1", "2", "3"})) << listing;
  for (auto& line : lines(listing)) {
    if (line.find(" 3 -> ") != std::string::npos) {
      EXPECT_NE(line.find("/fd"), std::string::npos) << line;
    }
  }
}

TEST(keeper, refuses_to_run_outside_the_daemon) {
  temp_dir dir;
  std::string out = dir.file("out");
  auto run = [&](const std::string& args) {
    int status = std::system((std::string(BATON_BINARY) + " __keeper " + args + " 2>" + out).c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(run("true"), 125);
  EXPECT_NE(temp_dir::read(out).find("usage: baton __keeper -- COMMAND"), std::string::npos);
  // Under sh it is not a process group leader: killing "its" group would hit ours.
  EXPECT_EQ(run("-- true"), 125);
  EXPECT_NE(temp_dir::read(out).find("must lead its own process group"), std::string::npos);
  // setsid makes it a leader, but without the daemon's pipe.
  int status = std::system(("setsid -w " + std::string(BATON_BINARY) +
                            " __keeper -- true 3<&- 2>" + out)
                               .c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 125);
  EXPECT_NE(temp_dir::read(out).find("descriptor 3"), std::string::npos) << temp_dir::read(out);
}

/// A keeper started straight from the test, as the daemon starts it: leader
/// of its own process group, the deadline pipe on descriptor 3 (write end
/// held here). Its group is SIGKILLed and the keeper reaped on destruction,
/// unless the test reaped it.
class bare_keeper {
 public:
  explicit bare_keeper(const std::string& command) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    std::string binary = BATON_BINARY;
    std::string verb = "__keeper";
    std::string dashes = "--";
    std::string cmd = command;
    char* argv[] = {binary.data(), verb.data(), dashes.data(), cmd.data(), nullptr};
    started_ = std::chrono::steady_clock::now();
    pid_ = fork_keeper(argv, fds[0]);
    ::close(fds[0]);
    pipe_ = fds[1];
    if (pid_ < 0) throw std::runtime_error("fork failed");
  }
  ~bare_keeper() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    if (pipe_ >= 0) ::close(pipe_);
  }
  bare_keeper(const bare_keeper&) = delete;
  bare_keeper& operator=(const bare_keeper&) = delete;

  pid_t pid() const { return pid_; }
  time_point started() const { return started_; }

  /// The keeper's wait status once it exits, within `limit`; nullopt if not.
  std::optional<int> wait_exit(std::chrono::milliseconds limit = 15s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      int status = 0;
      pid_t reaped = ::waitpid(pid_, &status, WNOHANG);
      if (reaped == pid_) {
        pid_ = -1;
        return status;
      }
      if (reaped < 0 && errno != EINTR) return std::nullopt;
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(2ms);
    }
  }

 private:
  pid_t pid_ = -1;
  int pipe_ = -1;
  time_point started_;
};

// A stop that reached the keeper before it forked must be passed on, and one
// that reached the child as well must not be: either way, exactly one.
TEST(keeper, a_stop_sent_while_the_command_starts_reaches_it_exactly_once) {
  temp_dir dir;
  // Notes each SIGTERM; after the first, stays a moment to catch a second.
  std::string command = dir.script(
      "child.sh",
      "exec 2>/dev/null\n"  // not the shell's notes on its killed sleeps
      "seen=0\n"
      "trap 'echo term >> \"$MARK\"; seen=1' TERM\n"
      "echo up > \"$DIR/up\"\n"
      "i=0\n"
      "while [ $seen = 0 ] && [ $i -lt 50 ]; do sleep 0.1 & wait $!; i=$((i+1)); done\n"
      "sleep 0.2 & wait $!\n"
      "exit 3");

  // How long a start takes on this machine now: the moments to stop at are
  // spread over it.
  std::chrono::nanoseconds start_time;
  {
    bare_keeper keeper(command);
    ASSERT_EQ(wait_for_file(dir.file("up")), "up\n");
    start_time = std::chrono::steady_clock::now() - keeper.started();
    ASSERT_EQ(::kill(-keeper.pid(), SIGTERM), 0);
    auto status = keeper.wait_exit();
    ASSERT_TRUE(status.has_value());
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 3) << *status;
    EXPECT_EQ(dir.marker(), "term\n");
  }

  constexpr int runs = 50;
  int ran = 0;
  int stopped_first = 0;
  auto give_up_at = std::chrono::steady_clock::now() + 120s;
  for (int run = 0; run < runs && std::chrono::steady_clock::now() < give_up_at; ++run) {
    std::filesystem::remove(dir.file("marker"));
    std::filesystem::remove(dir.file("up"));
    bare_keeper keeper(command);
    if (run < runs - 5) {
      // From right away to a little after the command is up.
      std::this_thread::sleep_until(keeper.started() + start_time * run / (runs - 10));
    } else {
      // The last few once the command says it is up: these reach its trap
      // even when starts got slower than when start_time was measured (a
      // busier machine made every run of the sweep stop too early).
      ASSERT_EQ(wait_for_file(dir.file("up")), "up\n") << "run " << run;
    }
    ASSERT_EQ(::kill(-keeper.pid(), SIGTERM), 0);
    auto status = keeper.wait_exit();
    ASSERT_TRUE(status.has_value()) << "run " << run << ": the keeper did not exit";
    std::string terms = dir.marker();
    if (WIFSIGNALED(*status) && WTERMSIG(*status) == SIGTERM) {
      // Stopped before the command ran, or before its shell set the trap.
      EXPECT_EQ(terms, "") << "run " << run;
      ++stopped_first;
    } else {
      EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 3)
          << "run " << run << ": status " << *status;
      EXPECT_EQ(terms, "term\n") << "run " << run << ": one SIGTERM, one line";
      ++ran;
    }
  }
  EXPECT_EQ(ran + stopped_first, runs) << "out of time after " << ran + stopped_first << " runs";
  EXPECT_GT(ran, 0) << "no run reached the command's trap: the test proved nothing";
}

// A real daemon process for the tests below: forked from the test, it runs an
// app_controller with `command`, writes its keeper's pid to `keeper_file` once
// started, then serves its event loop for up to a minute. Never returns in
// the forked process; no gtest there.
pid_t fork_daemon(const std::vector<std::string>& command, const app_controller_options& options,
                  std::optional<time_point> deadline, const std::string& keeper_file) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  {
    boost::asio::io_context io;
    bool started = false;
    app_controller::listener events;
    events.started = [&] { started = true; };
    app_controller app(io, hooks_config{}, make_child(command), events, options);
    if (deadline) app.set_deadline(*deadline);
    app.start(make_context());
    if (!run_until(io, [&] { return started; }, 10s)) ::_exit(1);
    std::ofstream(keeper_file + ".tmp") << app.child_pid();
    std::rename((keeper_file + ".tmp").c_str(), keeper_file.c_str());
    run_for(io, 60s);
  }
  ::_exit(0);
}

/// SIGKILLs and reaps the forked daemon, whatever the test's outcome.
struct daemon_guard {
  pid_t pid;
  ~daemon_guard() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
};

TEST(keeper, a_sigkilled_daemon_takes_the_app_with_it) {
  temp_dir dir;
  stderr_capture err(dir.file("stderr"));
  auto options = keeper_options();
  daemon_guard daemon{fork_daemon({dir.script("child.sh", app_with_grandchild)}, options,
                                  std::chrono::steady_clock::now() + 60s, dir.file("keeper"))};
  ASSERT_GT(daemon.pid, 0);
  pid_t keeper = read_pid(dir.file("keeper"));
  pid_t child = read_pid(dir.file("app"));
  pid_t grandchild = read_pid(dir.file("gc"));
  ASSERT_GT(keeper, 0);
  ASSERT_GT(child, 0);
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(alive(child));

  ASSERT_EQ(::kill(daemon.pid, SIGKILL), 0);
  auto killed_at = std::chrono::steady_clock::now();
  EXPECT_TRUE(wait_dead(child, 5s));
  EXPECT_TRUE(wait_dead(grandchild, 5s));
  EXPECT_TRUE(wait_dead(keeper, 5s));
  EXPECT_LT(std::chrono::steady_clock::now() - killed_at, 5s) << "at once, not at the deadline";
  EXPECT_NE(err.text().find(kill_line("the daemon is gone (its deadline pipe closed)", keeper)),
            std::string::npos)
      << err.text();
}

TEST(keeper, a_sigstopped_daemon_loses_its_app_at_the_deadline) {
  temp_dir dir;
  stderr_capture err(dir.file("stderr"));
  auto options = keeper_options();
  auto deadline = std::chrono::steady_clock::now() + 2s;
  daemon_guard daemon{fork_daemon({dir.script("child.sh", app_with_grandchild)}, options,
                                  deadline, dir.file("keeper"))};
  ASSERT_GT(daemon.pid, 0);
  pid_t keeper = read_pid(dir.file("keeper"));
  pid_t child = read_pid(dir.file("app"));
  pid_t grandchild = read_pid(dir.file("gc"));
  ASSERT_GT(keeper, 0);
  ASSERT_GT(child, 0);
  ASSERT_GT(grandchild, 0);

  ASSERT_EQ(::kill(daemon.pid, SIGSTOP), 0);
  if (std::chrono::steady_clock::now() < deadline - 500ms) {
    EXPECT_TRUE(alive(child)) << "alive until the deadline";
  }
  EXPECT_TRUE(wait_dead(child, 15s));
  EXPECT_GE(std::chrono::steady_clock::now(), deadline);
  EXPECT_TRUE(wait_dead(grandchild, 5s));
  EXPECT_NE(err.text().find(kill_line("lease deadline passed with no renewal from the daemon",
                                      keeper)),
            std::string::npos)
      << err.text();
}

}  // namespace
}  // namespace baton
