// Three etcd members on loopback forming one cluster (the daemon-level fault
// tests): each an etcd_server with its own ports and data directory, 50 ms
// heartbeats and a 500 ms election timeout, so 2 s ttls work. Which member
// leads raft is asked of the members (etcdctl endpoint status); faults are
// the members' own (stop, start, freeze, thaw), by index.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/servers/etcd_server.hpp"

namespace baton::testing {

class etcd_cluster {
 public:
  /// Starts `size` members and waits until every one is healthy; with
  /// `first_uid`, member i runs as uid first_uid + i (etcd_member::run_as).
  /// Throws std::runtime_error with the members' logs when they do not come
  /// up.
  explicit etcd_cluster(int size = 3, uid_t first_uid = 0);
  ~etcd_cluster() = default;
  etcd_cluster(const etcd_cluster&) = delete;
  etcd_cluster& operator=(const etcd_cluster&) = delete;

  int size() const { return static_cast<int>(members_.size()); }
  etcd_server& member(int index) { return *members_.at(static_cast<std::size_t>(index)); }
  /// Every member's client URL, separated by commas (etcd.endpoints).
  std::string endpoints() const;
  /// The index of the member that leads raft now, asked of the running
  /// members; nullopt when none knows a leader.
  std::optional<int> leader_index() const;
  /// Waits (at most 20 s) until a running member reports a leader; its index.
  std::optional<int> wait_for_leader() const;
  /// `etcdctl` with `args` against every running member (for an operator's
  /// commands: the first member that answers acts).
  std::string etcdctl(const std::string& args) const;
  /// Every member's log tail, for failure messages.
  std::string log_tails() const;

 private:
  std::vector<std::unique_ptr<etcd_server>> members_;
};

}  // namespace baton::testing
