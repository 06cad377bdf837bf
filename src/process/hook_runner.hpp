// Runs one hook (on_start or on_stop) to completion: spawns it with its
// stdout/stderr piped into the log, enforces hooks.timeout (SIGTERM to its
// process group, then SIGKILL after a grace period), and reports one
// hook_result when the hook process has been reaped. One runner, one run.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/app_controller.hpp"
#include "child_reaper.hpp"
#include "output_pump.hpp"

namespace baton::process {

/// "30s" for whole seconds, else "300ms".
std::string format_duration(milliseconds duration);

struct hook_result {
  std::string name;          ///< "on_start" or "on_stop"
  std::string command;       ///< argv[0]
  exit_status status;        ///< how it ended, when it ran
  int spawn_error = 0;       ///< errno when it could not be executed
  bool timed_out = false;    ///< it ran past the timeout and was killed
  milliseconds timeout{0};   ///< the timeout that applied
  milliseconds duration{0};  ///< from spawn to reaping
  bool ok() const { return spawn_error == 0 && !timed_out && status.success(); }
  /// "on_start: exit code 3", "on_start: timed out after 300ms",
  /// "on_start: cannot execute /x/y: No such file or directory".
  std::string describe() const;
};

class hook_runner {
 public:
  using done_handler = std::function<void(hook_result)>;

  /// `name` prefixes every log line of the hook.
  hook_runner(boost::asio::io_context& io, child_reaper& reaper, std::string name);
  /// Does not signal the hook: the owner kills and reaps first (kill_and_reap).
  ~hook_runner();
  hook_runner(const hook_runner&) = delete;
  hook_runner& operator=(const hook_runner&) = delete;

  /// Spawns `argv` with `env`. `done` is posted once the hook is reaped, or at
  /// once if it could not be spawned. `timeout` <= 0 means no timeout.
  /// The grace between SIGTERM and SIGKILL is min(2s, timeout).
  void run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
           milliseconds timeout, done_handler done);
  /// SIGTERM to the hook's process group, if it still runs. Once a hook was
  /// signalled (here, by kill() or by its timeout), whatever is left in its
  /// group when it exits gets SIGKILL; a hook that ends by itself may leave
  /// background processes running.
  void terminate();
  /// SIGKILL to the hook's process group, if it still runs.
  void kill();
  /// SIGKILL, then a blocking wait; `done` is not called. For destructors.
  void kill_and_reap();
  /// The hook's pid while it runs (not yet reaped), else 0.
  pid_t pid() const { return pid_; }
  /// The pumps copying its output; they may outlive the runner (see output_pump).
  std::vector<std::weak_ptr<output_pump>> pumps() const { return {stdout_, stderr_}; }

 private:
  void on_timeout();
  void on_grace_expired();
  void on_exit(exit_status status);
  void signal_group(int signal);

  boost::asio::io_context& io_;
  child_reaper& reaper_;
  boost::asio::steady_timer timer_;
  hook_result result_;
  done_handler done_;
  pid_t pid_ = 0;
  time_point started_at_{};
  milliseconds grace_{0};
  bool signalled_ = false;  // we told its group to go (stop, timeout or kill)
  std::shared_ptr<output_pump> stdout_;
  std::shared_ptr<output_pump> stderr_;
  std::shared_ptr<char> alive_ = std::make_shared<char>();
};

}  // namespace baton::process
