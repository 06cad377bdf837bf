// Watches the daemon's end of a keeper's connection (keeper_link::daemon_end)
// for the keeper's report of the command's end, and hands it over once, from
// the event loop. This is how a stop learns that the command is reaped without
// waiting for the keeper's own exit and the SIGCHLD it raises.
//
// The descriptor stays the link's: the watch never closes it, only stops
// watching it when destroyed, which must happen before the link closes it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>

#include "baton/app_controller.hpp"

namespace baton::process {

class keeper_report_watch {
 public:
  using report_handler = std::function<void(exit_status)>;

  /// Starts watching `fd` (non-blocking, owned by the caller) on `io`.
  /// `on_report` runs at most once, from the event loop, never after the
  /// watch is destroyed. End of file or an error ends the watch quietly: the
  /// keeper's exit then tells the same.
  keeper_report_watch(boost::asio::io_context& io, int fd, report_handler on_report);
  /// Stops watching; `fd` stays open.
  ~keeper_report_watch();
  keeper_report_watch(const keeper_report_watch&) = delete;
  keeper_report_watch& operator=(const keeper_report_watch&) = delete;

 private:
  struct state;
  std::shared_ptr<state> state_;
};

}  // namespace baton::process
