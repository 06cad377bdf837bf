// A throwaway election for one round of a fault scenario: a redis-server on a
// free loopback port (or none, when the test brings its own or the daemons
// use another store kind: node_options::store_args), baton candidates
// each supervising a worker that appends to one shared event log, and the
// helpers the scenarios share: waiting for the single working app, reading a
// daemon's status, reading the lease from Redis, freezing process groups, and
// judging the event log. Everything it starts is killed by PID (or by the
// process group the daemon leads) on destruction, and anything it froze is
// thawed first.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "support/baton_process.hpp"
#include "support/event_log.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::testing {

/// CLOCK_MONOTONIC now, ns: the clock of the event log and of baton's events.
std::int64_t mono_now_ns();

/// Milliseconds between two CLOCK_MONOTONIC ns times, as a double.
double ms_between(std::int64_t from_ns, std::int64_t to_ns);

/// Path of the deadline-following worker (tests/faults/deadline_worker.cpp).
std::filesystem::path deadline_worker_binary();

/// Path of the app that writes through a fence (tests/faults/fenced_writer.cpp).
std::filesystem::path fenced_writer_binary();

/// How one candidate is started.
struct node_options {
  /// Extra test_worker arguments (e.g. {"--ignore-term"}).
  std::vector<std::string> worker_args;
  /// Extra baton flags, appended after the cluster's defaults.
  std::vector<std::string> baton_args;
  /// Supervise deadline_worker (follows the socket) instead of test_worker.
  bool deadline_worker = false;
  /// Redis URL for this node; "" means the cluster's redis-server.
  std::string redis_url;
  /// Flags that point this node at another store (e.g. {"--store-kind",
  /// "zookeeper", "--zookeeper-servers", ...} or {"--config", FILE}); when
  /// given, no Redis URL is passed and the cluster needs no redis-server.
  std::vector<std::string> store_args;
  /// `env` names the store (BATON_STORE_KIND, ...): no Redis URL is passed
  /// either.
  bool store_in_env = false;
  /// Supervise nothing (hooks only).
  bool no_child = false;
  /// Supervise this command (program and arguments) instead of a worker; it
  /// should log to events() in the workers' format.
  std::vector<std::string> command;
  /// Extra environment variables for the daemon (and what it starts).
  env_list env;
};

/// Options with only the Redis URL set.
inline node_options via_redis_url(std::string url) {
  node_options o;
  o.redis_url = std::move(url);
  return o;
}

/// Options with only the store's flags set (a store other than Redis).
inline node_options on_store(std::vector<std::string> store_args) {
  node_options o;
  o.store_args = std::move(store_args);
  return o;
}

/// Options with only extra test_worker arguments.
inline node_options with_worker_args(std::vector<std::string> args) {
  node_options o;
  o.worker_args = std::move(args);
  return o;
}

class fault_cluster {
 public:
  /// `election` must be a valid election name (it also names the round in
  /// failure messages). `ttl` is the lease ttl given to every node. With
  /// `own_redis`, a redis-server is started now (in the calling thread's
  /// network namespace).
  fault_cluster(std::string election, std::chrono::milliseconds ttl, bool own_redis = true);
  /// Thaws what was frozen, kills the daemons (their process groups), any
  /// worker left behind, then the redis-server.
  ~fault_cluster();
  fault_cluster(const fault_cluster&) = delete;
  fault_cluster& operator=(const fault_cluster&) = delete;

  redis_server& redis() { return *redis_; }
  const redis_server& redis() const { return *redis_; }
  const std::string& election() const { return election_; }
  std::chrono::milliseconds ttl() const { return ttl_; }
  const std::filesystem::path& events() const { return events_; }
  const temp_dir& dir() const { return dir_; }

  /// Node names are "node-<index>", indexes from 1.
  static std::string name_of(int index) { return "node-" + std::to_string(index); }
  std::filesystem::path socket_of(int index) const;

  /// Start candidate `index` (not already started).
  baton_process& start_node(int index, const node_options& options = {});
  baton_process& node(int index);
  bool has_node(int index) const;
  /// Index of the node whose worker logged as `w.name`.
  static int index_of(const interval& w);

  /// Wait until exactly one worker is alive and has ticked; nullopt (and a
  /// failure message in `why`) after `timeout`.
  std::optional<interval> wait_for_single_worker(std::chrono::milliseconds timeout,
                                                 std::string* why = nullptr);

  /// The status reply of node `index`, parsed; nullopt if it did not answer
  /// within `timeout` or the reply is not JSON.
  std::optional<nlohmann::json> status(int index,
                                       std::chrono::milliseconds timeout = std::chrono::seconds(2));

  /// PTTL of the lease key (ms; -2 when absent, -3 when Redis did not answer).
  long long lease_pttl();
  /// CLOCK_MONOTONIC ns before which the lease key cannot expire, from a
  /// PTTL read now (conservative: the read's own latency only makes it
  /// earlier). nullopt when the key is absent or Redis does not answer.
  std::optional<std::int64_t> lease_expires_ns();
  /// The token key's value, 0 if absent or unreadable.
  std::uint64_t stored_token();

  /// SIGSTOP a process group (`pgid` > 1) and remember it, so it is thawed
  /// on destruction even if the test fails midway.
  void freeze_group(pid_t pgid);
  /// SIGSTOP one process and remember it.
  void freeze_process(pid_t pid);
  /// SIGCONT what freeze_*() stopped (all of it, in order) and forget it.
  void thaw_all();

  /// A fresh read of the event log.
  event_log log() const { return event_log::read(events_); }
  /// Every daemon's output, for failure messages.
  std::string logs() const;
  /// One daemon's output.
  std::string log_of(int index) const;

 private:
  void kill_leftover_deadline_workers(const event_log& log) const;

  std::string election_;
  std::chrono::milliseconds ttl_;
  temp_dir dir_{"bf-"};
  std::filesystem::path events_;
  std::unique_ptr<redis_server> redis_;
  std::vector<std::pair<int, std::unique_ptr<baton_process>>> nodes_;
  std::vector<std::pair<pid_t, bool>> frozen_;  // pid or pgid, is_group
  bool token_seeded_ = false;
};

/// Is `pid` stopped (state T in /proc)?
bool process_stopped(pid_t pid);

/// Watches one process for its exit through a pidfd (which works for
/// processes that are not our children, such as a daemon's worker). Open it
/// before the event, so a recycled pid cannot be mistaken for the watched one.
class exit_watch {
 public:
  explicit exit_watch(pid_t pid);
  ~exit_watch();
  exit_watch(const exit_watch&) = delete;
  exit_watch& operator=(const exit_watch&) = delete;

  /// Wait up to `timeout` for the exit. Returns the CLOCK_MONOTONIC ns when
  /// it was seen (at once if it had already happened), nullopt if the
  /// process still runs.
  std::optional<std::int64_t> wait(std::chrono::milliseconds timeout);

 private:
  int pidfd_ = -1;
  std::optional<std::int64_t> seen_;
};

/// Median of a non-empty list.
double median(std::vector<double> values);

}  // namespace baton::testing
