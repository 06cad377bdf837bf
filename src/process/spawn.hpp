// Starts one process the way baton runs hooks and the supervised child: argv
// executed directly (no shell, PATH lookup for bare names), in a process group
// of its own so one signal reaches its whole tree, with default signal
// dispositions and an empty signal mask, and with no file descriptors but
// 0, 1 and 2 (and 3, when the caller hands one over on purpose). Exec failures
// come back as an errno, not as a child exiting 127.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace baton::process {

struct spawn_request {
  /// argv[0] is looked up in PATH when it holds no '/'. Must not be empty.
  std::vector<std::string> argv;
  /// Complete environment, "NAME=value" entries.
  std::vector<std::string> env;
  /// Descriptor that becomes the child's stdout (-1 = inherit the daemon's).
  int stdout_fd = -1;
  /// Descriptor that becomes the child's stderr (-1 = inherit the daemon's).
  int stderr_fd = -1;
  /// Descriptor that becomes the child's descriptor 3 (-1 = none): the one
  /// extra descriptor it inherits (the keeper's connection to the daemon). Must be > 2.
  int keep_fd = -1;
  /// Descriptor that becomes the child's descriptor 4 (-1 = none): the
  /// parked keeper's start pipe. Needs keep_fd; must not be 3.
  int start_fd = -1;
};

struct spawn_result {
  pid_t pid = -1;  ///< the child, leader of its own process group (pgid == pid)
  int error = 0;   ///< errno when the command could not be executed (then pid is -1)
  bool ok() const { return error == 0; }
};

/// argv/envp for exec: pointers into `strings`, then a null pointer. Valid
/// while `strings` lives and is not changed.
std::vector<char*> c_strings(const std::vector<std::string>& strings);

/// Spawns `request`. Never throws for a bad command: the failure is in `error`.
spawn_result spawn_process(const spawn_request& request);

/// Whether `argv0` names something executable, searched as execvp would
/// (PATH from `env`, "NAME=value" entries; /bin:/usr/bin if unset): 0, or the
/// errno an exec would most likely fail with (ENOENT, EACCES, ...). For a
/// command started through an intermediary (the keeper), so the common
/// failures are still reported at once and in the same words.
int find_executable(const std::string& argv0, const std::vector<std::string>& env);

/// "cannot execute ARGV0: No such file or directory".
std::string spawn_error_message(const std::vector<std::string>& argv, int error);

}  // namespace baton::process
