// Starts and stops "the app" of this node: the on_start hook, then the
// supervised child; on stop, SIGTERM to the child's process group, then the
// on_stop hook. Hooks and child run one at a time, in that order, never
// concurrently. When to escalate to SIGKILL is decided by the caller (the
// election machine ties it to the lease), except for a hook past its own
// timeout, which the controller kills by itself.
//
// The child runs under a keeper (see baton/keeper.hpp): the baton binary in
// its internal mode, leading the child's process group. The controller feeds
// it the lease deadline (set_deadline); should the daemon crash or freeze, the
// keeper SIGKILLs the group once that deadline passes or the daemon is gone.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/config.hpp"
#include "baton/time.hpp"

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
  std::string reason;  ///< BATON_REASON: acquired, lost, store-unreachable, shutdown, ...
  milliseconds lease_ttl{0};
  std::uint64_t token = 0;  ///< fencing token of the term
  /// When the acquire that won this term was sent (default: unknown). Only
  /// for the takeover timing lines logged at debug level.
  time_point acquire_sent{};
};

/// Start-up settings of an app_controller that the config does not hold.
struct app_controller_options {
  /// Executable run as the keeper: `PROGRAM __keeper -- COMMAND...`. Empty
  /// (the default): no exec at all, the keeper is a fork of this process that
  /// calls run_keeper() (faster per start). Tests point it at a built baton.
  std::string keeper_program;
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
                 listener events, app_controller_options options = {});
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
  /// Prepare the next start while standing by (child.park): start a keeper
  /// with the command forked but not exec'd, for a term of `context`'s node,
  /// election and ttl. start() then only releases it. Does nothing while
  /// active(), when one is parked already, without a command, or for 30 s
  /// after a parked keeper failed. Never runs any of the command's code.
  void prepare(const app_context& context);
  /// Replace the hooks (SIGHUP reload). Hooks already running finish as they
  /// were started; the next hook run uses the new argv and timeout.
  void set_hooks(hooks_config hooks);
  /// SIGKILL the process groups of the child and of any running hook, now.
  /// A pending stop() still completes with stopped.
  void kill();
  /// The lease is valid until `valid_until` (monotonic clock). Recorded, and
  /// written at once to the running child's keeper, which SIGKILLs the child's
  /// process group if that moment passes without a newer deadline. Never
  /// blocks: if the keeper's connection is full the write is skipped (the next call
  /// writes again). The last deadline set is also sent to every child spawned
  /// later, when it is spawned: set it before start() for a new term. Until a
  /// child's keeper gets a deadline, it has none.
  void set_deadline(time_point valid_until);
  /// For tests: closes the pipe to the running child's keeper, as the
  /// daemon's death would, so the keeper kills the child's group at once.
  void close_keeper_pipe();
  /// True from start() until stopped is reported.
  bool active() const;
  /// PIDs of processes currently running (child, hook), for status output.
  /// child_pid(): the child's keeper while it runs (until it reports the
  /// command's end, or is reaped), else 0.
  /// The keeper leads the process group the child runs in (pgid == this pid)
  /// and exits with the child's status; the command's own pid is its child.
  pid_t child_pid() const;
  /// The supervised command's own pid (the keeper's child), read from /proc
  /// when asked; 0 when it is not running or cannot be told.
  pid_t command_pid() const;
  /// Whether the command and the hooks can be executed now (found in PATH,
  /// executable), as a start would find them. False with `why` naming the
  /// first that cannot ("child: cannot execute /x: No such file or directory").
  bool can_execute(std::string* why = nullptr) const;
  /// The running hook's pid (on_start or on_stop), else 0.
  pid_t hook_pid() const;
  /// The parked keeper's pid (see prepare()), else 0.
  pid_t parked_pid() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
