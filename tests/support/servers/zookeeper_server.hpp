// A real ZooKeeper 3.8 server for integration tests: the server's Java main
// (QuorumPeerMain) started directly as our child on a free loopback port,
// with its own temporary data directory, a short tick (so that sessions of
// 1-3 s can be negotiated and expire on time), a small heap, the admin
// server off and the four-letter words `ruok` and `srvr` allowed for the
// readiness poll (and `conf`, which check-store reads; a test can take it
// away with a 4lw.commands.whitelist line in extra_config, which comes last
// and wins). Tests can stop it (SIGTERM or SIGKILL), restart it with
// its data, wipe its data and restart it, and freeze (SIGSTOP) and thaw it.
// Only the child this object started is ever signalled.
//
// Standalone by default; an ensemble member is the same object with a
// server id and the peers' quorum and election ports (see
// zookeeper_server_options), so a 3-server ensemble can be built from three.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace baton::testing {

/// One member of an ensemble, as every member's zoo.cfg lists it.
struct zookeeper_peer {
  int id = 0;
  std::string host = "127.0.0.1";
  unsigned short client_port = 0;
  unsigned short quorum_port = 0;
  unsigned short election_port = 0;
};

struct zookeeper_server_options {
  /// The server's tick in ms: sessions are negotiated between
  /// min_session_timeout and max_session_timeout and expire on ticks.
  int tick_ms = 200;
  int min_session_timeout_ms = 400;
  int max_session_timeout_ms = 60000;
  /// Followers' limits in ticks (ensembles only).
  int init_limit = 10;
  int sync_limit = 5;
  /// 0 = standalone. Otherwise this server's id (myid) in `peers`, and
  /// `client_port` must be its client port there.
  int server_id = 0;
  std::vector<zookeeper_peer> peers;
  /// 0 = a free loopback port.
  unsigned short client_port = 0;
  /// Run the server as this uid (and gid), 0 = as the test. Lets a test
  /// that runs as root tell the members' traffic apart in iptables
  /// (`-m owner --uid-owner`), since every member sends from 127.0.0.1.
  uid_t run_as = 0;
  /// Lines written into zoo.cfg as they are.
  std::vector<std::string> extra_config;
};

class zookeeper_server {
 public:
  /// Starts the server and waits (up to 30 s) until it answers `srvr` with a
  /// mode (standalone: at once; an ensemble member: once a quorum formed,
  /// unless `wait_ready` is false). Throws std::runtime_error with a clear
  /// message when ZooKeeper or Java is not installed or does not come up.
  zookeeper_server();
  explicit zookeeper_server(zookeeper_server_options options, bool wait_ready = true);
  /// Kills (SIGKILL) and reaps the child, removes the temporary directory.
  ~zookeeper_server();
  zookeeper_server(const zookeeper_server&) = delete;
  zookeeper_server& operator=(const zookeeper_server&) = delete;

  unsigned short port() const { return options_.client_port; }
  /// "127.0.0.1:<port>": the connect string of this server alone.
  std::string address() const;
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  const zookeeper_server_options& options() const { return options_; }

  /// Sends `sig` to the child, if running.
  void signal(int sig);
  /// SIGSTOP: the server holds its connections open and answers nothing.
  void freeze();
  /// SIGCONT after freeze().
  void thaw();
  /// Stops the server: SIGKILL when `kill`, else SIGTERM (bounded wait, then
  /// SIGKILL); reaps it. Idempotent.
  void stop(bool kill = true);
  /// Starts it again on the same port with the data it has (after stop()).
  void start(bool wait_ready = true);
  /// stop(kill) then start(): sessions and nodes survive (ZooKeeper keeps
  /// them in its log).
  void restart(bool kill = true);
  /// SIGKILL, the data directory emptied, start: a server that lost its
  /// data (zxids begin again; old sessions are refused).
  void wipe_and_restart();
  /// Waits (bounded by `within`) until `srvr` answers with a mode; false on
  /// timeout.
  bool wait_ready(std::chrono::milliseconds within = std::chrono::milliseconds(30000)) const;

  /// A four-letter word's answer ("" when the server does not answer within
  /// 2 s).
  std::string four_letter(const std::string& word) const;
  /// "standalone", "leader", "follower" or "" when it does not answer.
  std::string mode() const;
  /// The last lines of the server's log, for failure messages.
  std::string log_tail() const;

 private:
  void write_config() const;
  bool start_once();

  zookeeper_server_options options_;
  std::filesystem::path dir_;
  std::string java_;
  pid_t pid_ = -1;
};

/// Starts a `size`-server ensemble on loopback and waits until every member
/// answers. A port picked free may be taken by another process before its
/// member binds it: the whole ensemble is started again on fresh ports, a
/// bounded number of times. Throws std::runtime_error with the members' logs
/// when it does not come up.
std::vector<std::unique_ptr<zookeeper_server>> start_zookeeper_ensemble(int size = 3);

}  // namespace baton::testing
