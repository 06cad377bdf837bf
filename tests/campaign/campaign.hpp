// One campaign run's runner (campaign_run.hpp says what a run is): the
// candidates, their store and fence, the faults begun and ended, and the
// history read back. Private to tests/campaign: campaign_run.cpp holds the
// run and its candidates, campaign_faults.cpp the faults.
#pragma once

#include <signal.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "campaign/campaign_run.hpp"
#include "campaign/fence_resource.hpp"
#include "campaign/store_worlds.hpp"
#include "support/baton_process.hpp"
#include "support/event_log.hpp"
#include "support/fault_proxy.hpp"

namespace baton::campaign {

using testing::baton_process;
using testing::event_log;

inline std::int64_t mono_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline void sleep_until_mono(std::int64_t ns) {
  const std::int64_t left = ns - mono_now();
  if (left > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(left));
}

// What state a candidate is in, as the runner left it.
enum class node_state { up, down, daemon_frozen, host_frozen };

struct node {
  std::unique_ptr<baton_process> daemon;
  node_state state = node_state::down;
  // For a frozen host: the keeper's group and the app, thawed in order.
  pid_t keeper_group = 0;
  pid_t app = 0;
};

class campaign {
 public:
  campaign(const run_options& o, const std::vector<fault>& faults)
      : o_(o),
        faults_(faults),
        ttl_ms_(o.params.ttl_ms),
        election_("campaign-" + o.params.kind + "-" + std::to_string(o.params.seed)),
        events_(dir_ / "events.log"),
        log_(events_) {}

  ~campaign() { clean_up(); }

  run_outcome run();

 private:
  std::filesystem::path socket_of(int i) const;
  static std::string name_of(int i) { return "node-" + std::to_string(i); }

  void start(int i);

  // SIGKILL the daemon's group and reap it.
  void kill_daemon(int i);

  // SIGTERM: a clean stop (the app stopped, the lease released), bounded.
  void stop_cleanly(int i);

  // Is `pid` one of this run's apps, still running? Over a long run the
  // system wraps pids (32,768 here), so "a process with that pid" is not
  // enough: an app that ended without a stop line would seem to live on.
  bool app_alive(pid_t pid) const { return testing::is_app_of(pid, events_, "campaign_app"); }

  // The node whose app works now (alive, started, not stopped), if any.
  std::optional<testing::interval> working_app();

  static int index_of(const std::string& name);

  std::optional<testing::interval> wait_for_working_app(std::chrono::milliseconds within);

  std::vector<int> nodes_in(node_state state, int except = -1) const;

  // The daemon-level target of `f`: a node index, or -1 to skip.
  int daemon_target(const fault& f, pid_t* app);

  // Runs `baton <args>` as an operator would, bounded.
  std::string run_cli(std::vector<std::string> args, const std::string& name);

  // Begins fault `id`; fills `a` (target, forcing) or marks it skipped.
  void begin(int id, const fault& f, applied_fault& a);

  void end(int id, const fault& f);

  void inject_all();

  // Ends the faults still on at the end of the duration, in time order.
  void end_everything();

  void stop_everything();

  // An app whose keeper was killed or frozen may outlive it: SIGKILL those
  // (only live campaign_app processes writing this run's log, from /proc).
  void kill_leftover_apps();

  void clean_up();

  history read_history(std::int64_t end);

  std::string diagnostics() const;

  void keep_files() const;

  const run_options& o_;
  const std::vector<fault>& faults_;
  std::int64_t ttl_ms_;
  std::string election_;
  testing::temp_dir dir_{"bcmp-"};
  std::filesystem::path events_;
  event_log log_;
  std::unique_ptr<store_world> world_;
  std::unique_ptr<fence_resource> fence_;
  std::map<int, node> nodes_;
  int next_newcomer_ = 100;
  std::int64_t t0_ = 0;
  std::vector<applied_fault> applied_;
  std::vector<applied_fault> extra_faults_;  // the backup, when it restarted the store
  std::vector<std::int64_t> pending_ends_;
  std::map<int, std::unique_ptr<testing::fault_proxy>> proxies_;  // node -> its store link
  std::set<int> links_cut_;                                       // nodes whose link a fault holds
  std::map<int, int> targets_;                                    // fault id -> node index
  std::set<int> retired_;                                         // newcomers whose join has ended
  std::vector<int> store_faults_;                                 // fault ids the world holds
  std::map<int, host_pause> pauses_;                              // fault id -> host pause
};

}  // namespace baton::campaign
