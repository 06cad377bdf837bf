// The campaign's checker: a pure judgement of what a run recorded. Its input
// is what the apps logged (each app process: its node, token, start, the
// writes that landed and when each was begun, and the lease validity it
// learnt from its daemon's socket), the resource's own history (the writes
// the fence accepted, in the order they landed), and what the runner did
// (each fault's class, target and time, and when a whole host was paused).
//
// Safety, any breach of which fails the run:
// - no two apps worked at once (their [start, last landed write] intervals);
//   when an app's whole host was paused past the validity it knew, what it
//   did from that pause on is left to the fence checks below (a thawed app
//   may write before its keeper stops it: the window fences exist for);
// - tokens rise strictly from one term to the next, and a token belongs to
//   one node;
// - the fence accepted writes in token order: none with a token lower than
//   one already accepted (a stale write accepted after a newer term wrote);
// - no app began a write after the lease validity it was given had passed,
//   by more than the drift margin (the store's lease may have expired
//   there), unless its whole host was paused past that validity (again the
//   fence's case: the fence must refuse the write instead).
//
// Figures, per fault class: faults injected and skipped, leaderless time
// (the gaps between one app's last write and the next app's start),
// leader changes and unforced ones. A gap or change is blamed on the fault
// that was on when the work before it ended: the latest one that forces a
// change, else the latest that lasts (a freeze, a kill), else the latest
// instant one ("none" when no fault was near). A change blamed on a fault
// that does not force one is unforced.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace baton::campaign {

/// A lease validity an app learnt, and when.
struct lease_note {
  std::int64_t at_ns = 0;
  std::int64_t valid_until_ns = 0;
};

/// A write that landed, as the app logged it.
struct app_write {
  std::int64_t begun_ns = 0;
  std::int64_t landed_ns = 0;
};

/// One app process (one term's app, or one of them if a term restarted it).
struct app_run {
  std::string node;
  pid_t pid = 0;
  std::uint64_t token = 0;
  std::int64_t start_ns = 0;
  std::vector<app_write> writes;
  std::vector<lease_note> leases;
  /// The time of its `stop` line, when it stopped by itself.
  std::int64_t stop_ns = 0;
  /// Writes the fence refused (the app stops at the first).
  std::size_t refused = 0;
};

/// A write in the resource's history, in the order the fence accepted them.
struct accepted_write {
  std::uint64_t token = 0;
  std::string writer;  ///< "node-N:seq"
};

/// A whole host (daemon, keeper, app) paused over [from_ns, to_ns].
struct host_pause {
  std::string node;
  std::int64_t from_ns = 0;
  std::int64_t to_ns = 0;
};

/// A fault the runner injected (or skipped: its target was not there).
struct applied_fault {
  std::string cls;     ///< fault class name
  std::string target;  ///< what it hit ("node-2", "master 7001", ...)
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  /// The fault requires the leadership to move (the leader killed, paused
  /// past its renew deadline, resigned...); a change after any other fault
  /// is unforced.
  bool forcing = false;
  bool skipped = false;
};

struct history {
  std::vector<app_run> apps;
  std::vector<accepted_write> accepted;
  std::vector<host_pause> pauses;
  std::vector<applied_fault> faults;
  /// The judged span: from the first app working to the end of the settle.
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  /// The lease's ttl and drift margin (lease_drift()).
  std::int64_t ttl_ns = 0;
  std::int64_t drift_ns = 0;
};

struct violation {
  std::string what;  ///< "overlap", "token order", "stale write accepted", "past lease", ...
  std::string detail;
};

struct class_figures {
  int injected = 0;
  int skipped = 0;
  int leader_changes = 0;
  int unforced_changes = 0;
  int gaps = 0;
  double leaderless_ms = 0;
  double longest_gap_ms = 0;
};

struct verdict {
  std::vector<violation> violations;
  std::size_t overlaps = 0;
  std::size_t token_regressions = 0;
  std::size_t stale_accepted = 0;
  std::size_t past_lease = 0;
  /// Writes begun after the app's validity but within the drift margin.
  std::size_t late_within_drift = 0;
  /// Writes that landed after their host was paused past its validity
  /// (left to the fence).
  std::size_t after_pause = 0;
  std::size_t terms = 0;
  std::size_t writes_accepted = 0;
  std::size_t writes_logged = 0;
  /// Writes the fence refused: stale writes it stopped.
  std::size_t refused = 0;
  double leaderless_ms = 0;
  /// Per fault class name; "none" for changes and gaps after no fault.
  std::map<std::string, class_figures> per_class;

  bool ok() const { return violations.empty(); }
};

/// Judges `h` (see the file comment).
verdict check_history(const history& h);

/// The per-class table and the safety totals, as Markdown, for the CLI.
std::string format_verdict(const verdict& v);

}  // namespace baton::campaign
