// A real etcd member for integration tests: /usr/bin/etcd (3.4) started as
// our child on free loopback client and peer ports, with its own data
// directory in a private temporary folder, and short heartbeat and election
// timeouts (50 / 500 ms) so that 1-3 s lease ttls work. Readiness is polled
// (GET /health, at most 20 s): etcd offers no event to wait on. Only the
// process this object started is ever signalled.
//
// Faults: stop (SIGKILL or SIGTERM), start again on the same data, freeze
// (SIGSTOP) and thaw, and a restore of a snapshot saved earlier (etcdctl
// snapshot save / restore into a new data directory, started on the same
// ports): the data goes back to the snapshot's revision, as an operator's
// restore does. A member is named and joins an initial cluster, so a
// three-member cluster can be made of three of them later.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace baton::testing {

class etcd_server {
 public:
  /// Starts a one-member cluster and waits until it is healthy. Throws
  /// std::runtime_error when etcd is not installed or does not come up.
  etcd_server();
  ~etcd_server();
  etcd_server(const etcd_server&) = delete;
  etcd_server& operator=(const etcd_server&) = delete;

  unsigned short client_port() const { return client_port_; }
  /// "http://127.0.0.1:<client port>".
  std::string client_url() const;
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  /// SIGKILL (or SIGTERM when `hard` is false) and reap. Idempotent.
  void stop(bool hard = true);
  /// Start again on the same data and ports; waits until healthy.
  void start();
  /// SIGSTOP / SIGCONT: the member stops answering without closing anything.
  void freeze();
  void thaw();

  /// `etcdctl snapshot save` of the data as it is now, kept as `name`.
  void save_snapshot(const std::string& name = "snapshot");
  /// Kills the member, restores snapshot `name` into a new data directory
  /// (same member name, cluster and token: the same cluster id) and starts
  /// on it: the revision goes back to the snapshot's.
  void restore_snapshot(const std::string& name = "snapshot");

  /// Runs etcdctl against this member with `args`; its output. Throws
  /// std::runtime_error with the output when it fails.
  std::string etcdctl(const std::string& args) const;

  /// The last lines of the member's log, for failure messages.
  std::string log_tail() const;

 private:
  void spawn();
  bool wait_ready();

  std::filesystem::path dir_;
  std::filesystem::path data_;
  std::string name_ = "baton-test";
  unsigned short client_port_ = 0;
  unsigned short peer_port_ = 0;
  int restores_ = 0;
  pid_t pid_ = -1;
};

}  // namespace baton::testing
