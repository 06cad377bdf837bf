// A real Redis Cluster for integration tests: N masters with R replicas each
// (3 x 1 by default), every node a redis_server child on free loopback ports,
// joined by `redis-cli --cluster create` (run as our child, output captured,
// bounded in time). The constructor returns only once every node reports
// cluster_state:ok, every node's CLUSTER NODES tells the same story (who owns
// which slots, who replicates whom) and every replica's link is up, so a
// failover can happen. Tests can then find a key's owner, move a slot
// (in one call, or held half-way in the migrating state), kill a master and
// wait for its replica to take over, or ask a replica for a manual failover.
// Only the children these objects started are ever signalled, by their PID.
//
// What Redis 7.0 does that shapes this harness:
// - The cluster bus listens on `cluster-port`, by default the data port +
//   10000 (the TLS port + 10000 with tls-cluster), which may be taken or
//   above 65535 for a free port; each node gets its own free bus port.
// - With TLS (tls-cluster yes, tls-replication yes) the bus and replication
//   run over TLS and each node keeps its plain port too, which the harness
//   uses for its own commands (redis-cli --cluster create included).
// - A node accepts bus connections only from peers that show a certificate
//   its CA signed, whatever tls-auth-clients says. With a serverAuth-only
//   server certificate (test_pki's) the join hangs at "Waiting for the
//   cluster to join" with nothing in any log; hence tls_client_cert_file.
// - Addresses are told per connection type: CLUSTER SLOTS, CLUSTER NODES
//   and MOVED/ASK redirects give the plain port to a plain connection and
//   the TLS port to a TLS connection; CLUSTER SHARDS gives both ("port"
//   plain, "tls-port" TLS) to either. A client of a TLS cluster therefore
//   follows redirects to TLS ports as long as it asked over TLS.
// - MIGRATE connects over TLS under tls-cluster (to the plain port it fails
//   with "IOERR error or timeout connecting to the client"), so move_keys
//   aims it at the target's TLS port.
// - The bus port in CLUSTER NODES (ip:port@busport) is the configured
//   cluster-port.
// - A replica may fail over only if its data is fresh enough
//   (cluster-replica-validity-factor), hence the wait for links up; with
//   node timeout 1000 ms, a killed master's replica takes over in ~2-3 s.
// - Replicas sync diskless with no delay (repl-diskless-sync-delay 0);
//   Redis' default waits 5 s before every full sync.
#pragma once

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/servers/redis_server.hpp"

namespace baton::testing {

struct redis_cluster_options {
  /// At least 3 (redis-cli refuses fewer).
  int masters = 3;
  int replicas_per_master = 1;
  /// cluster-node-timeout: how long before a silent node is suspected.
  std::chrono::milliseconds node_timeout{1000};
  /// Password of every node (requirepass and masterauth); the harness sends
  /// it to redis-cli through REDISCLI_AUTH and with MIGRATE's AUTH.
  std::string requirepass;
  /// When cert_file is set, every node also serves TLS (see tls_port_of())
  /// and the cluster bus and replication run over TLS; the CA must be the
  /// one that signed the certificate, since nodes verify each other.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_ca_file;
  /// The certificate a node shows when it connects to another node (bus,
  /// replication, MIGRATE): Redis always demands one on the cluster bus,
  /// whatever tls-auth-clients says, and checks it against the CA, so it
  /// must be fit for client authentication. Without these, nodes show
  /// tls_cert_file, which then needs clientAuth as well as serverAuth.
  std::string tls_client_cert_file;
  std::string tls_client_key_file;
  /// Lines added to every node's redis.conf.
  std::vector<std::string> extra_config;
  /// Bound on the constructor's wait (redis-cli included) and the default
  /// bound of the waits below.
  std::chrono::milliseconds ready_timeout{30000};
};

/// One node as one node's CLUSTER NODES line describes it.
struct redis_cluster_node_view {
  std::string id;
  unsigned short port = 0;  // as told to a plain connection
  bool master = false;
  bool failed = false;                     // flag "fail" (not "fail?")
  std::string master_id;                   // "" for a master
  std::vector<std::pair<int, int>> slots;  // ranges, inclusive
};

class redis_cluster {
 public:
  /// Starts the nodes, creates the cluster and waits (up to
  /// options.ready_timeout) until it is consistent; see wait_until_consistent().
  /// Throws std::runtime_error, with redis-cli's output or log tails, when a
  /// node does not come up or the cluster does not settle in time.
  redis_cluster();
  explicit redis_cluster(redis_cluster_options options);
  /// Kills and reaps every node; temporary directories are removed.
  ~redis_cluster();
  redis_cluster(const redis_cluster&) = delete;
  redis_cluster& operator=(const redis_cluster&) = delete;

  const redis_cluster_options& options() const { return options_; }
  bool tls() const { return !options_.tls_cert_file.empty(); }

  /// Every node's plain port, in start order (stable across restarts).
  std::vector<unsigned short> ports() const;
  /// "redis://127.0.0.1:<port>" for every node.
  std::vector<std::string> seed_urls() const;
  /// "rediss://127.0.0.1:<tls port>" for every node; empty unless tls().
  std::vector<std::string> tls_seed_urls() const;
  /// The node on plain `port`; throws std::out_of_range for another port.
  redis_server& node(unsigned short port);
  const redis_server& node(unsigned short port) const;
  /// The TLS port of the node on plain `port`; 0 unless tls().
  unsigned short tls_port_of(unsigned short port) const { return node(port).tls_port(); }
  /// Runs a command on the node on `port` (redis_server::command).
  std::vector<std::string> command(unsigned short port,
                                   std::initializer_list<std::string> args) const;
  std::vector<std::string> command(unsigned short port, const std::vector<std::string>& args) const;

  // --- the slot map, as the first running node sees it ---------------------
  /// CLUSTER KEYSLOT, asked of a running node.
  int key_slot(const std::string& key) const;
  /// The master that owns `slot`; throws when no node does.
  unsigned short master_port_for_slot(int slot) const;
  /// Masters that are not failed, by port.
  std::vector<unsigned short> master_ports() const;
  /// Replicas (failed ones included) of the master on `master_port`.
  std::vector<unsigned short> replica_ports_of(unsigned short master_port) const;
  /// The node's ID (CLUSTER MYID), remembered after creation, so it is known
  /// for a killed node too.
  std::string node_id(unsigned short port) const;
  /// The whole CLUSTER NODES table as the node on `port` sees it.
  std::vector<redis_cluster_node_view> view_from(unsigned short port) const;

  /// Polls until every running replica of the master on `port` has applied
  /// the replication stream up to the master's offset at the time of the
  /// call, so a write made before is not lost when the master is killed.
  /// (WAIT through command() would prove nothing: WAIT waits for the
  /// connection's own writes, and every command() is a new connection.)
  void wait_for_replication(unsigned short master_port, std::chrono::milliseconds timeout = {});

  // --- faults --------------------------------------------------------------
  /// SIGKILL and reap one node.
  void kill_node(unsigned short port);
  /// Restarts a killed node on the same ports, empty but with its nodes.conf,
  /// so it rejoins under its ID (a former master as a replica of whoever
  /// took its slots), then wait_until_consistent().
  void restart_node(unsigned short port);
  /// Kills the master of `slot` and waits until one of its replicas owns
  /// the slot in every running node's view, every running node agrees and
  /// reports cluster_state:ok; returns the new master's port.
  unsigned short failover_slot_master(int slot, std::chrono::milliseconds timeout = {});
  /// CLUSTER FAILOVER (graceful: the master pauses clients until the replica
  /// has caught up) on the replica on `replica_port`, then waits until it is
  /// a master with its former master's slots in every view and the cluster
  /// is consistent; the former master becomes its replica.
  void manual_failover(unsigned short replica_port, std::chrono::milliseconds timeout = {});

  /// migrate_slot = begin_migration + move_keys + finish_migration.
  void migrate_slot(int slot, unsigned short to_master_port,
                    std::chrono::milliseconds timeout = {});
  /// CLUSTER SETSLOT slot IMPORTING <source id> on the target, then
  /// SETSLOT slot MIGRATING <target id> on the source (in that order, so a
  /// client sent on by ASK always finds the target importing). The source
  /// keeps serving keys it still has; others are sent with -ASK.
  void begin_migration(int slot, unsigned short to_master_port);
  /// MIGRATEs every key the source still holds in `slot` to the target (in
  /// batches of 100 keys); returns how many moved. Callable repeatedly.
  std::size_t move_keys(int slot);
  /// move_keys, then SETSLOT slot NODE <target id> on the target, the source
  /// and every other master, and waits until every node's view gives the
  /// slot to the target and the cluster is consistent.
  void finish_migration(int slot, std::chrono::milliseconds timeout = {});

  /// Polls (every 50 ms, up to `timeout`; zero means options.ready_timeout)
  /// until every running node reports cluster_state:ok, their CLUSTER NODES
  /// views agree (IDs, roles, masters, slots, failed flags; not link states
  /// or suspicions), every slot is owned and every running replica's link to
  /// its master is up. Throws std::runtime_error with what is still missing.
  void wait_until_consistent(std::chrono::milliseconds timeout = {});

  /// Log tails of every node, for failure messages.
  std::string log_tails() const;

 private:
  struct migration {
    unsigned short from = 0;
    unsigned short to = 0;
  };
  // Empty when consistent, otherwise what is still missing.
  std::string not_consistent_because() const;
  unsigned short first_running() const;
  std::chrono::milliseconds or_default(std::chrono::milliseconds timeout) const;
  void create_cluster();

  redis_cluster_options options_;
  std::vector<std::unique_ptr<redis_server>> nodes_;
  std::map<unsigned short, std::string> ids_;
  std::map<int, migration> migrations_;
};

}  // namespace baton::testing
