// Shared helpers for the process tests: a scratch directory with executable
// scripts, a log capture on spdlog's default logger, a recorder for the
// controller's callbacks, and bounded ways to run the io_context; and the
// keeper the controllers under test run their child through (the baton
// binary of this build, BATON_BINARY: this test binary is no keeper).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "baton/app_controller.hpp"
#include "support/built_paths.hpp"

namespace baton::process_test {

using namespace std::chrono_literals;

/// Options for every controller under test: the keeper is BATON_BINARY. The
/// default (our own executable) would re-run this test binary with
/// "__keeper" arguments. Throws, failing the test, if it was not built.
/// Forks a keeper run as `argv` in its own process group, with `keeper_end`
/// as its descriptor 3 (its link to the daemon), SIGTERM at its default and
/// no signal blocked. The parent's end is the caller's; returns the pid, or
/// -1 if fork failed.
inline pid_t fork_keeper(char* const argv[], int keeper_end) {
  pid_t pid = ::fork();
  if (pid == 0) {
    // Async-signal-safe calls only: the test binary may have threads.
    ::setpgid(0, 0);
    if (keeper_end == 3) {
      ::fcntl(3, F_SETFD, 0);
    } else {
      ::dup2(keeper_end, 3);  // the copy is not close-on-exec
    }
    ::signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(argv[0], argv);
    ::_exit(126);
  }
  // Both sides set the group, so it exists before the test signals it.
  if (pid > 0) ::setpgid(pid, pid);
  return pid;
}

inline app_controller_options keeper_options() {
  app_controller_options options;
  options.keeper_program = BATON_BINARY;
  if (::access(options.keeper_program.c_str(), X_OK) != 0) {
    throw std::runtime_error("the keeper binary " + options.keeper_program +
                             " is not built: build the `baton` target before "
                             "process_unit_tests");
  }
  return options;
}

/// Should a controller ever run this test binary as its keeper, it must not
/// run the tests again inside the app's process group: it refuses at once.
inline const bool refuse_keeper_mode = [] {
  std::ifstream in("/proc/self/cmdline");
  std::string argv0, argv1;
  std::getline(in, argv0, '\0');
  std::getline(in, argv1, '\0');
  if (argv1 == "__keeper") {
    static const char message[] = "process_unit_tests started as a keeper: use keeper_options()\n";
    (void)!::write(STDERR_FILENO, message, sizeof message - 1);
    ::_exit(125);
  }
  return true;
}();

/// A fresh directory under /tmp, removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = "/tmp/baton-process-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

  /// Writes an executable /bin/sh script; `body` may use $DIR (this directory)
  /// and $MARK (the marker file every script appends to).
  std::string script(const std::string& name, const std::string& body) const {
    std::string path = file(name);
    std::ofstream out(path);
    out << "#!/bin/sh\nDIR='" << path_ << "'\nMARK='" << file("marker") << "'\n" << body << "\n";
    out.close();
    ::chmod(path.c_str(), 0755);
    return path;
  }
  std::string marker() const { return read(file("marker")); }

  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  std::string path_;
};

/// Routes spdlog's default logger into a ring buffer for the test's lifetime.
class log_capture {
 public:
  log_capture()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(10000)),
        previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("process_test", sink_);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~log_capture() { spdlog::set_default_logger(previous_); }
  log_capture(const log_capture&) = delete;
  log_capture& operator=(const log_capture&) = delete;

  /// (level, message) of everything logged so far.
  std::vector<std::pair<spdlog::level::level_enum, std::string>> messages() const {
    std::vector<std::pair<spdlog::level::level_enum, std::string>> out;
    for (auto& m : sink_->last_raw()) {
      out.emplace_back(m.level, std::string(m.payload.data(), m.payload.size()));
    }
    return out;
  }
  /// True if a message at `level` contains `text`.
  bool has(spdlog::level::level_enum level, const std::string& text) const {
    for (auto& [l, m] : messages()) {
      if (l == level && m.find(text) != std::string::npos) return true;
    }
    return false;
  }
  bool has(const std::string& text) const {
    for (auto& [l, m] : messages()) {
      if (m.find(text) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

/// Records every callback of an app_controller, in order.
struct recorder {
  std::vector<std::string> events;
  int started = 0;
  int start_failed = 0;
  int child_exited = 0;
  int stopped = 0;
  std::string failure;
  exit_status child_status;
  std::vector<std::tuple<std::string, milliseconds, bool>> hooks;

  app_controller::listener listener() {
    app_controller::listener l;
    l.started = [this] {
      ++started;
      events.push_back("started");
    };
    l.start_failed = [this](std::string detail) {
      ++start_failed;
      failure = detail;
      events.push_back("start_failed");
    };
    l.child_exited = [this](exit_status status) {
      ++child_exited;
      child_status = status;
      events.push_back("child_exited");
    };
    l.stopped = [this] {
      ++stopped;
      events.push_back("stopped");
    };
    l.hook_finished = [this](const std::string& hook, milliseconds duration, bool ok) {
      hooks.emplace_back(hook, duration, ok);
      events.push_back("hook:" + hook + (ok ? ":ok" : ":failed"));
    };
    return l;
  }
};

/// Runs `io` until `done()` holds or `limit` passes; false on timeout.
inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
                      std::chrono::milliseconds limit = 20s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (io.stopped()) io.restart();
    if (io.run_one_for(20ms) == 0 && io.stopped()) std::this_thread::sleep_for(5ms);
  }
  return true;
}

/// Runs `io` for `duration`: only for checking that something does NOT happen.
inline void run_for(boost::asio::io_context& io, std::chrono::milliseconds duration) {
  if (io.stopped()) io.restart();
  io.run_for(duration);
}

/// True while `pid` exists and is not a zombie.
inline bool alive(pid_t pid) {
  std::string stat = temp_dir::read("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return false;
  auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

/// Waits (bounded) until `pid` is gone or a zombie.
inline bool wait_dead(pid_t pid, std::chrono::milliseconds limit = 10s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (alive(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

inline app_context make_context(const std::string& reason = "acquired") {
  app_context c;
  c.node_id = "node-a";
  c.election = "jobs";
  c.reason = reason;
  c.lease_ttl = milliseconds(10000);
  c.token = 42;
  return c;
}

inline hooks_config make_hooks(std::vector<std::string> on_start, std::vector<std::string> on_stop,
                          milliseconds timeout = milliseconds(10000)) {
  hooks_config h;
  h.on_start = std::move(on_start);
  h.on_stop = std::move(on_stop);
  h.timeout = timeout;
  return h;
}

inline child_config make_child(std::vector<std::string> command) {
  child_config c;
  c.command = std::move(command);
  return c;
}

/// Lines of `text`.
inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace baton::process_test
