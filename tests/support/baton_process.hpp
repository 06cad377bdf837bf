// Running real `baton` daemons from integration tests, and talking to their
// Unix socket.
//
// A baton_process starts the binary built by this tree (BATON_BINARY) in a
// process group of its own, so that the test can signal the daemon alone
// (signal) or its whole group (signal_group). Note that baton starts its app
// in yet another group, so neither reaches the app: to simulate a crashed
// host, also SIGKILL the worker (its pid is in the event log, see
// kill_leftover_workers). Its stdout and stderr go to a log
// file that the test can read and wait on. The process is never reaped before
// the object is destroyed (its exit is observed with WNOWAIT), so its pid and
// process-group id cannot be recycled while the test still holds them; the
// destructor SIGKILLs the group and reaps the daemon.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/built_paths.hpp"

namespace baton::testing {

/// Path of the baton binary under test (BATON_BINARY).
std::filesystem::path baton_binary();
/// Path of the test_worker binary (BATON_TEST_WORKER).
std::filesystem::path test_worker_binary();

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents on
/// destruction. Kept short: Unix socket paths must fit in 107 bytes.
class temp_dir {
 public:
  /// Creates `<tmp>/<prefix>XXXXXX`; throws std::system_error on failure.
  explicit temp_dir(std::string_view prefix = "baton-test-");
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// path() / name.
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// Extra environment variables: name, value. They override inherited ones.
using env_list = std::vector<std::pair<std::string, std::string>>;

class baton_process {
 public:
  /// Start `BATON_BINARY args...` with the test's environment plus `env`,
  /// stdin from /dev/null, stdout+stderr appended to `log_file`. Throws
  /// std::system_error if the binary cannot be started.
  baton_process(std::vector<std::string> args, env_list env, std::filesystem::path log_file);
  /// The same, for any executable (used to test this class itself, and for
  /// helper processes a test wants managed the same way).
  static baton_process start(const std::filesystem::path& program, std::vector<std::string> args,
                             env_list env, std::filesystem::path log_file);
  /// SIGKILL the whole process group (if the daemon was not already reaped),
  /// then reap the daemon. Children the daemon moved to other process groups
  /// are not touched (see kill_leftover_workers in event_log.hpp).
  ~baton_process();
  baton_process(baton_process&& other) noexcept;
  baton_process& operator=(baton_process&&) = delete;
  baton_process(const baton_process&) = delete;
  baton_process& operator=(const baton_process&) = delete;

  pid_t pid() const { return pid_; }
  /// Equal to pid(): the daemon leads its own group.
  pid_t pgid() const { return pid_; }
  const std::filesystem::path& log_path() const { return log_file_; }

  /// Send `sig` to the daemon only. False if it could not be sent.
  bool signal(int sig) const;
  /// Send `sig` to every process of the daemon's group: the daemon and any
  /// process it left in its group (not its app, which baton starts in a group
  /// of its own). False if none received it.
  bool signal_group(int sig) const;

  /// Wait up to `timeout` for the daemon to exit. Returns its exit code, or
  /// 128 + signal number if a signal ended it; nullopt if still running.
  /// Once it has exited, returns the same status at once on every call.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);
  /// Has it exited (non-blocking wait_exit)?
  bool exited() { return wait_exit(std::chrono::milliseconds(0)).has_value(); }

  /// Everything the daemon has written to stdout/stderr so far.
  std::string log_text() const;
  /// Wait until the log contains `needle`. Gives up early (false) when the
  /// daemon has exited and the log still does not contain it.
  bool wait_for_log(std::string_view needle, std::chrono::milliseconds timeout);

 private:
  baton_process() = default;
  void spawn(const std::filesystem::path& program, std::vector<std::string> args, env_list env);

  pid_t pid_ = -1;
  int pidfd_ = -1;                   // -1 when the kernel has no pidfd_open
  std::optional<int> exit_status_;  // set once the exit was observed
  bool reaped_ = false;
  std::filesystem::path log_file_;
};

/// Connect to the Unix socket at `path`, send `json_line` (a '\n' is added if
/// missing), and return the first line of the reply without its '\n'.
/// nullopt on any error, on EOF before a full line, or after `timeout`.
std::optional<std::string> socket_request(const std::filesystem::path& path,
                                          std::string_view json_line,
                                          std::chrono::milliseconds timeout);

}  // namespace baton::testing
