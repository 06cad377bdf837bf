// The keeper's report of the command's end (baton/keeper.hpp), as the daemon
// reads it: pure text handling, no I/O. The bytes arrive in whatever pieces
// the socket hands out; a reader joins them into lines and picks the report.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "baton/app_controller.hpp"

namespace baton::process {

/// "exited <code>" (0-255) or "killed <signal>" (1-64), without the newline:
/// how the command ended. nullopt for any other line, including a malformed
/// report (the keeper's own exit then says it).
std::optional<exit_status> parse_keeper_report(std::string_view line);

/// Joins the keeper's bytes into lines and returns its report once a whole
/// one has arrived. Other lines are skipped (a newer keeper may say more), and
/// so is a line longer than any report, whatever it turns out to hold.
class keeper_report_reader {
 public:
  /// The command's end, from the first report line completed by `bytes`.
  std::optional<exit_status> feed(std::string_view bytes);

 private:
  std::string line_;
  bool overlong_ = false;
};

}  // namespace baton::process
