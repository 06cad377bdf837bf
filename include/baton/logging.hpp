// Log set-up: spdlog's default logger on stderr, one line per record, in the
// format and at the level of the `log` config section.
#pragma once

#include <cstdint>
#include <string>

#include "baton/config.hpp"
#include "baton/environment.hpp"

namespace baton {

/// Install the default logger on stderr. cfg.format: text
/// (`2026-01-02T03:04:05.678Z info message`, UTC) or "json" (one object per
/// line: {"time":"...Z","level":"info","message":"..."}). Under systemd's
/// journal (JOURNAL_STREAM set and matching stderr's device:inode), text
/// lines carry no timestamp and start with the sd-daemon priority prefix
/// ("<3>" error ... "<7>" debug) so journald records the level; JSON lines
/// stay unprefixed. Throws std::invalid_argument for a level that config
/// validation would have rejected. Safe to call again.
void setup_logging(const log_config& cfg, const environment& env);

/// What every JSON log record carries besides its message: the election,
/// the node, the state, and the term's fencing token (0 before any). The
/// driver updates it on every transition; text lines do not show it.
struct log_context {
  std::string election;
  std::string node_id;
  std::string state;
  std::uint64_t token = 0;
};
void set_log_context(log_context context);

/// Change the default logger's level (trace ... off), e.g. on a SIGHUP
/// reload. Throws std::invalid_argument for an unknown level.
void set_log_level(const std::string& level);

/// True when stderr is the stream systemd connected to the journal: the
/// JOURNAL_STREAM "<device>:<inode>" names the file that fd 2 is now. A
/// redirected stderr (e.g. `2>file` in a unit's shell wrapper) does not match.
bool stderr_is_journal(const environment& env);

}  // namespace baton
