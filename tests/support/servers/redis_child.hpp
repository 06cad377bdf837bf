// Running Redis binaries as children of the test, shared by redis_server and
// redis_sentinel (both redis-server, the latter with --sentinel) and
// redis_cluster (redis-cli): a private temporary directory, starting a server
// (support/spawn_child.hpp) and waiting until our own child is the one that
// answers, killing and reaping it, and the tail of its log for failure
// messages. It exists so that this poll/reap logic, which must be careful
// (bounded waits, never signalling a PID that is not ours), is written once.
// Internal to tests/support: the public harness headers do not include it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "support/spawn_child.hpp"

namespace baton::testing {

/// The last `lines` lines of `file`, each ending in "\n"; "" when it cannot
/// be read.
std::string log_tail(const std::filesystem::path& file, std::size_t lines = 20);

/// A new directory from mkdtemp(`templ`), `templ` ending in "XXXXXX". Throws
/// std::runtime_error "mkdtemp: <reason>".
std::filesystem::path make_temp_dir(const std::string& templ);

/// Removes `dir` and everything in it, ignoring errors (for destructors and
/// failed constructors).
void remove_temp_dir(const std::filesystem::path& dir);

/// How to start one redis-server child and know it is up.
struct redis_child_spec {
  /// Full path of redis-server.
  std::string executable;
  /// Its arguments after argv[0], e.g. {conf} or {conf, "--sentinel"}.
  std::vector<std::string> args;
  /// Where the child's stdout and stderr go.
  std::filesystem::path log;
  /// Append to `log` rather than truncate it.
  bool append_log = false;
  /// The loopback port the config makes it listen on.
  unsigned short port = 0;
  /// Sent with AUTH while polling; "" for none.
  std::string password;
  /// Names the server in messages: "redis-server", "redis sentinel".
  std::string label;
};

/// Starts the server (spawn_child: stdin from /dev/null, SIGKILL when the
/// test process dies, even if it crashes before a destructor runs), then polls
/// it (connect, AUTH, INFO server every 20 ms, at most 10 s) until INFO's
/// process_id names this child. Returns the child's PID once it answers, or
/// -1 when the port was taken (the child exited with "Address already in
/// use", or another server answers on the port); the child is then reaped,
/// so the caller can retry on another port. Throws std::runtime_error, the
/// child killed and reaped, when it exits for another reason ("<label>
/// exited at start; log: ...") or does not answer in time ("<label> did not
/// answer within 10 s (<last error>); log: ...").
pid_t start_redis_child(const redis_child_spec& spec);

/// SIGKILL (which ends a stopped process too) and reap `pid`, then set it
/// to -1. No-op when `pid` <= 0.
void kill_and_reap(pid_t& pid);

}  // namespace baton::testing
