// One campaign run on real servers: the kind's store world, N baton
// candidates each supervising campaign_app (which writes through the fence
// to a resource server that no fault touches), the schedule's faults
// injected at their times, and the recorded history judged by
// check_history(). A fault whose target is not there when its time comes
// (no leader, no live standby, the store already down) is skipped and
// counted as such. A fault action that blocks (a server that takes seconds
// to start again) delays the faults after it: the schedule is exact, the
// run's timing is the machine's.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "campaign/fault_schedule.hpp"
#include "campaign/history_check.hpp"

namespace baton::campaign {

struct run_options {
  schedule_params params;
  /// "redis" or "postgres": which shipped fence the apps write through;
  /// "" picks PostgreSQL's for the postgres kind and Redis's for the others.
  std::string fence;
  /// The control: the apps write without the fence, so a paused host's
  /// stale writes land (and the checker must say so).
  bool unfenced = false;
  /// After the last fault ends: how long to wait for one app to work again
  /// (0: 10 ttls + 10 s).
  std::int64_t settle_ms = 0;
  /// Print each fault as it is injected.
  bool verbose = false;
  /// When not empty: the daemons' logs, the event log and the schedule are
  /// copied here at the end.
  std::filesystem::path keep_dir;
};

struct run_outcome {
  history recorded;
  verdict judged;
  /// One app worked again after the faults (liveness, reported apart).
  bool recovered = false;
  /// Set when the run could not be carried out (a server did not start...):
  /// then nothing was judged.
  std::string harness_error;
  /// The daemons' and servers' log tails, for a failing run.
  std::string diagnostics;
};

/// Runs `faults` as `o` says (o.params.kind picks the world).
run_outcome run_campaign(const run_options& o, const std::vector<fault>& faults);

}  // namespace baton::campaign
