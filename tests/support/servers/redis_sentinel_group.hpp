// A real Redis Sentinel deployment for integration tests: one master, R
// replicas and S sentinels (redis-server --sentinel), all children of the
// test on free loopback ports, each in its own temporary directory. The
// constructor returns only once a failover could actually happen: every
// replica's link to the master is up, and every sentinel knows the master,
// its replicas and the other sentinels. Tests can then kill the master and
// wait for the sentinels to promote a replica, restart killed nodes, and
// kill or freeze sentinels (e.g. "no sentinel reachable at start").
//
// Data nodes are the existing redis_server; sentinels are redis_sentinel
// below, because a sentinel rewrites its own config file (known replicas,
// known sentinels, the current master, its epoch) and a restart must keep
// that file, where redis_server::restart writes its config afresh. Only the
// children these objects started are ever signalled, always by their PID.
//
// What Redis 7.0 does that shapes this harness:
// - A sentinel finds replicas in the master's INFO (sent on connect, then
//   every 10 s) and other sentinels through hello messages on the master
//   (every 2 s), so replicas are attached before the sentinels start and the
//   wait for discovery takes about 2 s.
// - A failover needs down_after to pass, a quorum, a leader vote (after a
//   random delay of up to 1 s) and the promoted replica's INFO (every 1 s
//   during a failover): with down_after 1000 ms, kill to a sentinel naming
//   the new master took 2.2-2.3 s on loopback. A split vote costs a retry
//   after 2 x failover_timeout.
// - A sentinel does not start a new failover of the same master within
//   2 x failover_timeout of its previous attempt; a test that fails over
//   twice must lower failover_timeout or wait that long.
// - Replicas sync diskless with no delay (repl-diskless-sync-delay 0);
//   Redis' default waits 5 s before every full sync.
// - With TLS (tls-replication yes) replicas, sentinels and the hello
//   messages announce TLS ports, so the sentinels report the master's and
//   replicas' TLS ports: that is the port this harness calls a data node's
//   in TLS mode (data_ports(), master_port()). Every process keeps a plain
//   port too, for the harness's own commands. A sentinel that demands client
//   certificates also demands one of the other sentinels, which present
//   tls-client-cert-file (a serverAuth-only certificate is refused).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "support/servers/redis_server.hpp"

namespace baton::testing {

/// One redis-server --sentinel child on a free loopback port.
class redis_sentinel {
 public:
  /// Writes sentinel.conf (port, bind, dir and logging first, then `lines`,
  /// e.g. "sentinel monitor m 127.0.0.1 6379 2") in a new temporary
  /// directory, starts the sentinel and waits (up to 10 s) until it answers.
  /// `password` is what the harness sends with AUTH ("" for none); it must
  /// match a `requirepass` line in `lines`. With `tls`, a second free port
  /// is written as `tls-port` (the TLS files come in `lines`).
  explicit redis_sentinel(std::vector<std::string> lines, std::string password = {},
                          bool tls = false);
  /// Kills (SIGKILL) and reaps the child, removes the temporary directory.
  ~redis_sentinel();
  redis_sentinel(const redis_sentinel&) = delete;
  redis_sentinel& operator=(const redis_sentinel&) = delete;

  unsigned short port() const { return port_; }
  /// "redis://127.0.0.1:<port>" (without the password).
  std::string url() const;
  /// The TLS port; 0 unless built with tls.
  unsigned short tls_port() const { return tls_port_; }
  /// "rediss://127.0.0.1:<tls port>"; "" unless built with tls.
  std::string tls_url() const;
  /// PID of the running child; -1 after kill_and_wait().
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  /// Frozen by pause(): running, but it answers nothing.
  bool paused() const { return paused_; }

  /// SIGSTOP: connections are accepted by the kernel but never answered.
  void pause();
  /// SIGCONT after pause().
  void resume();
  /// SIGKILL and reap; the port refuses connections. Idempotent.
  void kill_and_wait();
  /// Starts again on the same port from the config file as the sentinel
  /// last rewrote it (so it remembers replicas, sentinels and failovers);
  /// waits until it answers. No-op when running.
  void start();

  /// Runs one command synchronously (2 s timeouts), the reply flattened as
  /// redis_server::command does. Throws std::runtime_error on an error reply
  /// or when the sentinel cannot be reached.
  std::vector<std::string> command(std::initializer_list<std::string> args) const;
  std::vector<std::string> command(const std::vector<std::string>& args) const;

  /// The last lines of the sentinel's log, for failure messages.
  std::string log_tail() const;
  std::string config_path() const { return (dir_ / "sentinel.conf").string(); }

 private:
  void write_config() const;
  // One attempt to start; false when the port was taken.
  bool start_once();

  std::vector<std::string> lines_;
  std::string password_;
  std::filesystem::path dir_;
  std::string executable_;
  unsigned short port_ = 0;
  unsigned short tls_port_ = 0;
  bool tls_ = false;
  pid_t pid_ = -1;
  bool paused_ = false;
};

/// TLS for every process of a group: each also serves TLS on a second port,
/// replicates and monitors over it (tls-replication yes).
struct redis_sentinel_group_tls {
  /// Server certificate and key of every data node and sentinel; empty = no TLS.
  std::string cert_file;
  std::string key_file;
  /// The CA every process trusts (servers' and clients' certificates).
  std::string ca_file;
  /// What a process presents when it connects to another over TLS (needed
  /// when the other demands client certificates and cert_file is for
  /// serverAuth only).
  std::string client_cert_file;
  std::string client_key_file;
  /// The sentinels' TLS ports demand a client certificate signed by ca_file;
  /// the data nodes' never do.
  bool sentinels_demand_client_certs = false;

  bool enabled() const { return !cert_file.empty(); }
};

struct redis_sentinel_group_options {
  /// Replicas of the master (at least 1 for a failover to be possible).
  int replicas = 1;
  int sentinels = 3;
  /// Sentinels that must agree the master is down before a failover.
  int quorum = 2;
  /// sentinel down-after-milliseconds.
  std::chrono::milliseconds down_after{1000};
  /// sentinel failover-timeout; see the header comment on retries.
  std::chrono::milliseconds failover_timeout{5000};
  std::string master_name = "baton-master";
  /// Password of the data nodes (requirepass, and masterauth so that any
  /// node can replicate from any other); the sentinels get it as
  /// `sentinel auth-pass`.
  std::string requirepass;
  /// Password of the sentinels themselves (their requirepass, which they
  /// also use with each other).
  std::string sentinel_requirepass;
  /// Lines added to every data node's redis.conf / every sentinel.conf.
  std::vector<std::string> extra_config;
  std::vector<std::string> sentinel_extra_config;
  /// TLS for every process (see the header comment on ports).
  redis_sentinel_group_tls tls;
  /// Bound on the wait in the constructor (and in start_all_sentinels).
  std::chrono::milliseconds ready_timeout{20000};
};

class redis_sentinel_group {
 public:
  /// Starts the master, the replicas and the sentinels, then waits (up to
  /// options.ready_timeout) until a failover could happen; see
  /// wait_until_ready(). Throws std::runtime_error, with log tails, when a
  /// process does not come up or the deployment does not settle in time.
  redis_sentinel_group();
  explicit redis_sentinel_group(redis_sentinel_group_options options);
  /// Kills and reaps the sentinels first (so they react to nothing), then
  /// the data nodes; temporary directories are removed.
  ~redis_sentinel_group();
  redis_sentinel_group(const redis_sentinel_group&) = delete;
  redis_sentinel_group& operator=(const redis_sentinel_group&) = delete;

  const std::string& master_name() const { return options_.master_name; }
  const redis_sentinel_group_options& options() const { return options_; }

  // --- sentinels -----------------------------------------------------------
  std::size_t sentinel_count() const { return sentinels_.size(); }
  redis_sentinel& sentinel(std::size_t index);
  const redis_sentinel& sentinel(std::size_t index) const;
  std::vector<unsigned short> sentinel_ports() const;
  /// "redis://127.0.0.1:<port>" for each sentinel, in index order; with TLS
  /// "rediss://127.0.0.1:<tls port>".
  std::vector<std::string> sentinel_urls() const;

  // --- data nodes ----------------------------------------------------------
  /// All data node ports as the sentinels report them (the TLS ports with
  /// TLS), the initial master first; stable for the object's life (a
  /// restarted node keeps its ports).
  std::vector<unsigned short> data_ports() const;
  unsigned short initial_master_port() const { return data_ports().front(); }
  /// The data node on `port` (either of its ports); throws
  /// std::out_of_range for another port.
  redis_server& node(unsigned short port);
  const redis_server& node(unsigned short port) const;
  /// The master's address as the first running, unpaused sentinel reports
  /// it (SENTINEL GET-MASTER-ADDR-BY-NAME); throws when none answers.
  unsigned short master_port() const;
  /// The same, asking sentinel `index` only.
  unsigned short master_port_from(std::size_t index) const;
  /// The first element of ROLE on a data node: "master" or "slave".
  std::string role_of(unsigned short port) const;

  /// Runs a command on the data node or sentinel listening on `port`, with
  /// that process's password. Throws std::out_of_range for a foreign port.
  std::vector<std::string> command(unsigned short port,
                                   std::initializer_list<std::string> args) const;
  std::vector<std::string> command(unsigned short port, const std::vector<std::string>& args) const;

  /// Polls (up to `timeout`) until every running replica of the data node
  /// on `master_port` has applied the replication stream up to that node's
  /// offset at the time of the call, so a write made before is not lost when
  /// the master is killed. (WAIT through command() would prove nothing: WAIT
  /// waits for the connection's own writes, and every command() is a new
  /// connection.)
  void wait_for_replication(unsigned short master_port,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

  // --- faults --------------------------------------------------------------
  /// SIGKILLs the node the sentinels report as master (it must be one of
  /// ours and running); returns its port.
  unsigned short kill_master();
  /// SIGKILL and reap one data node.
  void kill_node(unsigned short port);
  /// Polls (every 50 ms, up to `timeout`) until a running, unpaused sentinel
  /// reports a master other than `old_port` and that node answers ROLE as
  /// master; returns its port. Other sentinels may still report the old one:
  /// see wait_until_sentinels_agree().
  unsigned short wait_for_failover(unsigned short old_port,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(30));
  /// Polls until every running, unpaused sentinel reports the same master
  /// and that node answers ROLE as master; returns its port.
  unsigned short wait_until_sentinels_agree(
      std::chrono::milliseconds timeout = std::chrono::seconds(20));

  enum class restart_role {
    /// The node's original config: the initial master comes back as a
    /// master (a stale one after a failover, until the sentinels demote it),
    /// a replica as a replica of the initial master.
    as_configured,
    /// REPLICAOF the master the sentinels report, and wait (up to 20 s)
    /// until the link is up.
    replica_of_current_master,
  };
  /// Restarts a killed data node, empty, on the same port.
  void restart_node(unsigned short port, restart_role role = restart_role::as_configured);

  void kill_sentinel(std::size_t index);
  /// Starts a killed sentinel again on its port with its rewritten config.
  void start_sentinel(std::size_t index);
  void pause_sentinel(std::size_t index);
  void resume_sentinel(std::size_t index);
  /// Every sentinel killed: clients find no sentinel (connection refused).
  void kill_all_sentinels();
  /// Starts every killed sentinel, then wait_until_ready().
  void start_all_sentinels();
  /// Every sentinel frozen: clients connect but get no answer.
  void pause_all_sentinels();
  void resume_all_sentinels();

  /// Polls (up to `timeout`) until the running, unpaused sentinels agree on
  /// a master that answers ROLE as master, every other running data node is
  /// its replica with the link up, and every such sentinel sees the master
  /// as up (flags "master"), knows the other S-1 sentinels and lists every
  /// running replica as up. Throws std::runtime_error with the last thing
  /// missing and log tails.
  void wait_until_ready(std::chrono::milliseconds timeout);

  /// Log tails of every process, for failure messages.
  std::string log_tails() const;

 private:
  // Empty when ready, otherwise what is still missing.
  std::string not_ready_because() const;
  // Data node port reported by sentinel `s`, or 0 with `error` set.
  unsigned short ask_master(const redis_sentinel& s, std::string& error) const;
  void wait_for_link_up(unsigned short replica, unsigned short master,
                        std::chrono::milliseconds timeout) const;
  // The port the sentinels and replication know `n` by.
  unsigned short reported_port(const redis_server& n) const;

  redis_sentinel_group_options options_;
  std::vector<std::unique_ptr<redis_server>> nodes_;
  std::vector<std::unique_ptr<redis_sentinel>> sentinels_;
};

}  // namespace baton::testing
