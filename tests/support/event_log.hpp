// Reading the event log that test_worker processes append to (format in
// tests/worker/test_worker.cpp): `<CLOCK_MONOTONIC ns> <name> <pid> <event>[ details]`.
//
// The log is the ground truth of an integration test: it says when each app
// instance actually worked, whatever the daemons believed. It is turned into
// one interval per worker instance, from its `start` line to its last sign of
// work (its last `tick`, or its `stop`/`exit` line if later); a SIGKILLed
// worker has no stop line, and its last tick is the last work it did. Two
// intervals of different processes that overlap mean two apps worked at once:
// the failure baton exists to prevent.
//
// An event_log can follow a file that is still being written: refresh() reads
// only the complete lines appended since the last call, so polling a growing
// log stays cheap.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton::testing {

/// What a log line reports.
enum class event_kind { start, env, tick, term, stop, exit, other };

/// One parsed line.
struct event {
  /// CLOCK_MONOTONIC time of the line, in nanoseconds.
  std::int64_t ns = 0;
  std::string name;
  pid_t pid = 0;
  event_kind kind = event_kind::other;
  /// The event word as written (`tick`, `start`, ...).
  std::string word;
  /// Whatever followed the event word on the line ("" if nothing).
  std::string details;
};

/// The life of one worker instance (one `start` line and what followed it).
struct interval {
  std::string name;
  pid_t pid = 0;
  /// Time of the `start` line, ns on CLOCK_MONOTONIC.
  std::int64_t start_ns = 0;
  /// Last work: the later of the last `tick` and the `stop`/`exit` line
  /// (equals start_ns while nothing else was logged).
  std::int64_t end_ns = 0;
  /// A `stop` or `exit` line was seen: the worker ended by itself. False for a
  /// worker that is still running or was SIGKILLed.
  bool ended = false;
  /// Number of `tick` lines.
  std::size_t ticks = 0;
  /// Number of `term` lines (SIGTERMs the worker saw).
  std::size_t terms = 0;
  /// Time of the first `term` line, if any.
  std::optional<std::int64_t> first_term_ns;
  /// BATON_TOKEN and BATON_NODE_ID as the worker saw them ("" if unset).
  std::string token;
  std::string node_id;
};

/// Two intervals of different processes that share some time.
struct overlap {
  interval first;   ///< the one that started first
  interval second;  ///< the one that started later
  /// Length of the shared time, ns (0 when they only touch).
  std::int64_t overlap_ns = 0;
};

/// The gap between one worker's last work and the next worker's start.
struct handover {
  interval from;
  interval to;
  /// to.start_ns - from.end_ns (negative if they overlap).
  std::int64_t gap_ns = 0;
};

/// Is the process `pid` running (exists and is not a zombie)? Reads /proc.
bool process_alive(pid_t pid);

/// Is `pid` a live `program` (its argv[0]'s file name) writing to `log_file`
/// (its --log)? Unlike process_alive, a pid that the system gave to another
/// process since the app ended answers false: over a long run pids wrap.
bool is_app_of(pid_t pid, const std::filesystem::path& log_file, std::string_view program);

class event_log {
 public:
  /// An empty log fed by hand with feed() (for tests of this class).
  event_log() = default;
  /// A log that follows `file`; call refresh() to read it. A missing file
  /// reads as empty (the workers may not have created it yet).
  explicit event_log(std::filesystem::path file);

  /// Parse a whole text at once (a final line without '\n' counts too).
  static event_log parse(std::string_view text);
  /// Read `file` once.
  static event_log read(const std::filesystem::path& file);

  /// Read the complete lines appended to the file since the last call.
  /// Returns true if any line was added. A partial last line (a writer in the
  /// middle of its write) is left for the next call.
  bool refresh();
  /// Add text as if appended to the file; an incomplete last line waits for
  /// the rest.
  void feed(std::string_view text);

  /// The followed file ("" for a log fed by hand).
  const std::filesystem::path& file() const { return file_; }
  const std::vector<event>& events() const { return events_; }
  /// One per `start` line, in log order.
  const std::vector<interval>& intervals() const { return intervals_; }
  /// Lines that could not be parsed (or came from a worker that never logged
  /// `start`), verbatim. Empty in a healthy run.
  const std::vector<std::string>& bad_lines() const { return bad_lines_; }

  /// Number of `start` lines, all names or only `name`.
  std::size_t start_count() const { return intervals_.size(); }
  std::size_t start_count(std::string_view name) const;
  /// Number of intervals that ended with `stop`/`exit`.
  std::size_t end_count() const;
  /// Intervals without a `stop`/`exit` line (running, or killed).
  std::vector<interval> open_intervals() const;
  /// Open intervals whose process is still alive according to `alive`.
  std::vector<interval> live_workers(const std::function<bool(pid_t)>& alive = process_alive) const;
  /// The worker that has started and not ended (no stop/exit line, process
  /// alive). If several are (an unsafe state), the one that started last.
  std::optional<interval> current_worker(
      const std::function<bool(pid_t)>& alive = process_alive) const;
  /// Overlaps between intervals of different pids; empty in a safe run.
  std::vector<overlap> overlaps() const;
  /// Consecutive intervals in start order and the gap between them.
  std::vector<handover> handovers() const;
  /// Time of the last line of any kind, or nullopt when empty.
  std::optional<std::int64_t> last_ns() const;

 private:
  void add_line(std::string_view line);

  std::filesystem::path file_;
  std::uintmax_t offset_ = 0;  // bytes of file_ consumed so far
  std::string partial_;        // an incomplete last line, waiting for its '\n'
  std::vector<event> events_;
  std::vector<interval> intervals_;
  std::vector<std::string> bad_lines_;
  // (name, pid) -> index in intervals_ of that worker's latest start.
  std::map<std::pair<std::string, pid_t>, std::size_t> latest_;
};

/// Overlaps between intervals of different pids (any names). Intervals that
/// merely touch (one ends at the very nanosecond the other starts) count too:
/// the check errs on the side of failing.
std::vector<overlap> find_overlaps(const std::vector<interval>& intervals);

/// Human-readable forms, for test failure messages.
std::string to_string(const interval& i);
std::string to_string(const overlap& o);
std::string to_string(const std::vector<overlap>& overlaps);

/// Poll `predicate` every `poll` until it returns true or `timeout` passes.
/// Returns the predicate's last value. Always evaluates it at least once, and
/// once more at the deadline.
bool wait_until(const std::function<bool()>& predicate, std::chrono::milliseconds timeout,
                std::chrono::milliseconds poll = std::chrono::milliseconds(5));

/// Refresh `log` from its file until `predicate(log)` holds or `timeout`
/// passes (polling every ~5 ms: there is no cross-process event to await).
/// Returns whether the predicate held.
bool wait_for(event_log& log, const std::function<bool(const event_log&)>& predicate,
              std::chrono::milliseconds timeout);

/// The same on a fresh reader of `file`.
bool wait_for(const std::filesystem::path& file,
              const std::function<bool(const event_log&)>& predicate,
              std::chrono::milliseconds timeout);

/// SIGKILL every worker recorded in `log` that is still alive and is really
/// a test_worker writing to this log (checked in /proc/<pid>/cmdline, so a
/// recycled pid is never hit). For test teardown, in case a daemon left its
/// app behind. Returns the number of processes signalled.
std::size_t kill_leftover_workers(const event_log& log);

}  // namespace baton::testing
