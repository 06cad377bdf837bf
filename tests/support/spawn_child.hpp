// Starting a server or a tool as a child of the test, written once for every
// fixture that forks and execs (redis-server and its sentinels, redis-cli,
// ZooKeeper's JVM, etcd, PostgreSQL's programs, openssl): where its output
// goes (a log file or a pipe), stdin from /dev/null, an optional working
// directory, environment and user to run as, and death with the test process
// even when the test crashes before a destructor runs. Everything the child
// needs is built before fork, so that between fork and exec only
// async-signal-safe calls run. The daemons under test are started by
// baton_process (posix_spawn, a process group of their own), not by this.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace baton::testing {

/// The full path of `name` in the first directory of PATH (or
/// /usr/local/bin:/usr/bin:/bin when PATH is unset) where it is executable;
/// "" when there is none.
std::string find_executable(const std::string& name);

/// How to start one child.
struct child_spec {
  /// argv[0] is the program's full path (find_executable finds one).
  std::vector<std::string> argv;
  /// stdout and stderr go to this file (created if missing)...
  std::filesystem::path output_file;
  /// ...appended to rather than truncated...
  bool append_output = true;
  /// ...with this mode when created...
  mode_t output_mode = 0600;
  /// ...or, when output_file is empty, to this descriptor (the write end of
  /// a pipe the caller reads); -1 with no file either: inherited.
  int output_fd = -1;
  /// chdir here before exec; empty: the test's own directory.
  std::filesystem::path working_dir;
  /// Variables set in the child's environment, over the inherited ones.
  std::vector<std::pair<std::string, std::string>> env;
  /// Run as this user and group (supplementary groups dropped); 0: as the
  /// test. A child that cannot switch exits 126.
  uid_t run_as = 0;
  gid_t run_as_group = 0;
  /// SIGKILL the child when the test process dies (PR_SET_PDEATHSIG).
  bool die_with_test = true;
};

/// Forks and execs `spec`. Returns the child's PID; the caller reaps it. A
/// child whose exec fails exits 127. Throws std::runtime_error "fork: ..."
/// when no child could be made.
pid_t spawn_child(const child_spec& spec);

/// Waits for `pid` (a child of ours) to exit, retrying on EINTR; its wait
/// status.
int wait_child(pid_t pid);

}  // namespace baton::testing
