// Starts and stops "the app" of this node: the on_start hook, then the
// supervised child; on stop, SIGTERM to the child's process group, then the
// on_stop hook. Hooks and child run one at a time, in that order, never
// concurrently. When to escalate to SIGKILL is decided by the caller (the
// election machine ties it to the lease), except for a hook past its own
// timeout, which the controller kills by itself.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/config.hpp"

namespace baton {

/// How a process ended.
struct exit_status {
  int code = 0;    ///< exit code when it exited normally
  int signal = 0;  ///< signal number when it was killed by one (0 = none)
  bool success() const { return signal == 0 && code == 0; }
  /// Shell-style status: the code, or 128 + the signal.
  int as_exit_code() const { return signal != 0 ? 128 + signal : code; }
  /// "exit code 3" or "killed by SIGKILL".
  std::string describe() const;
};

/// What the app is told about the term it runs in (hook and child environment).
struct app_context {
  std::string node_id;
  std::string election;
  std::string reason;  ///< BATON_REASON: acquired, lost, redis-unreachable, shutdown, ...
  milliseconds lease_ttl{0};
  std::uint64_t token = 0;  ///< fencing token of the term
};

class app_controller {
 public:
  struct listener {
    /// start() finished: on_start succeeded and the child (if any) is running.
    std::function<void()> started;
    /// start() failed: on_start failed or timed out, or the child could not be
    /// spawned. `detail` says which and why. stop() is still expected.
    std::function<void(std::string detail)> start_failed;
    /// The child exited while the app was running (not because of stop()).
    std::function<void(exit_status)> child_exited;
    /// stop() or kill() finished: the child and every hook process are reaped,
    /// and on_stop has run.
    std::function<void()> stopped;
    /// Optional, for metrics: a hook ("on_start" or "on_stop") ended after
    /// `duration` (spawn to reaping; 0 if it could not be executed); `ok` is
    /// false when it could not be executed, exited non-zero, was killed, or
    /// timed out. Reported before the started/start_failed/stopped it leads to.
    std::function<void(const std::string& hook, milliseconds duration, bool ok)> hook_finished;
  };
  // Every callback is posted to the io_context: never invoked from inside
  // start/stop/kill, never after the controller is destroyed. Once stop() is
  // called, the current term reports only `stopped` (no late started,
  // start_failed or child_exited).

  /// Nothing runs until start(). Registers for SIGCHLD on `io` (asio signal_set).
  app_controller(boost::asio::io_context& io, hooks_config hooks, child_config child,
                 listener events);
  /// SIGKILLs the process groups of whatever still runs and reaps it
  /// (blocking briefly); on_stop is not run and no callback follows.
  ~app_controller();
  app_controller(const app_controller&) = delete;
  app_controller& operator=(const app_controller&) = delete;

  /// Run on_start, then spawn the child. Completes with started or start_failed.
  /// Ignored (with a warning) while active(): stop() must complete first.
  void start(const app_context& context);
  /// Stop what start() began: terminate a running on_start hook or the child
  /// (SIGTERM to its process group), wait for it, then run on_stop with
  /// `context.reason`. Completes with stopped. Safe to call in any phase,
  /// including when nothing runs (then it runs on_stop only if start() ran).
  void stop(const app_context& context);
  /// SIGKILL the process groups of the child and of any running hook, now.
  /// A pending stop() still completes with stopped.
  void kill();
  /// True from start() until stopped is reported.
  bool active() const;
  /// PIDs of processes currently running (child, hook), for status output.
  /// child_pid(): the supervised child while it runs (not yet reaped), else 0.
  pid_t child_pid() const;
  /// The running hook's pid (on_start or on_stop), else 0.
  pid_t hook_pid() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
