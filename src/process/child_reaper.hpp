// Reaps the processes one owner spawned. A SIGCHLD signal_set wakes it, and
// it then polls waitpid(pid, WNOHANG) for each pid it watches — never
// waitpid(-1), which would steal the children of other components. Once a pid
// is reaped it is forgotten, so nothing waits for or signals a reused pid.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <functional>
#include <map>
#include <memory>

#include "baton/app_controller.hpp"

namespace baton::process {

/// Decodes a waitpid() status word.
exit_status exit_status_from_wait(int wait_status);

class child_reaper {
 public:
  using exit_handler = std::function<void(exit_status)>;

  /// Registers for SIGCHLD at once, so no exit of a later-watched child is missed.
  explicit child_reaper(boost::asio::io_context& io);
  ~child_reaper();
  child_reaper(const child_reaper&) = delete;
  child_reaper& operator=(const child_reaper&) = delete;

  /// Calls `on_exit` (from the event loop) once `pid` has exited and been
  /// reaped. `pid` must be an unreaped child of this process. `before_reap`,
  /// if given, runs after `pid` exited but while it is still a zombie, so its
  /// pid and process group id cannot have been reused yet: the moment to
  /// signal what is left of its group. It must not run user callbacks.
  void watch(pid_t pid, exit_handler on_exit, std::function<void()> before_reap = {});
  /// True while `pid` is watched and not yet reaped.
  bool watching(pid_t pid) const;
  /// Blocks until `pid` exits and reaps it, without calling its handler.
  /// For destructors, after a SIGKILL. No-op for a pid not watched.
  void reap_blocking(pid_t pid);

 private:
  void arm();
  void poll();

  boost::asio::signal_set sigchld_;
  struct watched {
    exit_handler on_exit;
    std::function<void()> before_reap;
  };
  std::map<pid_t, watched> watched_;
  // Handlers check it: a completion queued before destruction must not touch us.
  std::shared_ptr<char> alive_ = std::make_shared<char>();
};

}  // namespace baton::process
