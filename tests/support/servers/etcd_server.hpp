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
// three-member cluster is three of them (etcd_cluster.hpp).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>

namespace baton::testing {

/// TLS for the client port (all files PEM, e.g. from test_pki); empty =
/// plain http.
struct etcd_server_tls {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  /// Members ask clients for a certificate signed by ca_file.
  bool client_cert_auth = false;
  /// What the fixture's own etcdctl shows (with client_cert_auth).
  std::string client_cert_file;
  std::string client_key_file;
  /// The raft election timeout; etcd's smallest lease TTL is 1.5 of it,
  /// rounded up to whole seconds (500 ms: 1 s).
  int election_timeout_ms = 500;
};

/// Certificates for an etcd member with client certificate auth, signed by
/// the CA in `pki_dir` (ca.pem, ca.key, as test_pki makes them), as PEM files
/// in `pki_dir`. What etcd 3.4 needs of them: the member's certificate is
/// also a client certificate (its JSON gateway dials the member's gRPC port
/// with it), and a client's certificate has no common name (while auth is
/// on, the gateway refuses one that has: "CommonName of client sending a request against
/// gateway will be ignored").
struct etcd_certs {
  std::string server_cert;  ///< serverAuth and clientAuth, localhost and 127.0.0.1
  std::string server_key;
  std::string client_cert;  ///< clientAuth, no common name
  std::string client_key;
};
etcd_certs make_etcd_certs(const std::filesystem::path& pki_dir);

/// One member of a cluster the caller lays out: its name, its ports, every
/// member's peer URL and the cluster's token.
struct etcd_member {
  std::string name;
  unsigned short client_port = 0;
  unsigned short peer_port = 0;
  /// "<name>=http://127.0.0.1:<peer port>,..." for every member.
  std::string initial_cluster;
  std::string token = "baton-test";
  /// The uid (and gid) the member runs as; 0 = the test's own. A uid of its
  /// own lets firewall rules pick its traffic out (iptables -m owner): every
  /// member sends from 127.0.0.1.
  uid_t run_as = 0;
};

class etcd_server {
 public:
  /// Starts a one-member cluster and waits until it is healthy. Throws
  /// std::runtime_error when etcd is not installed or does not come up.
  explicit etcd_server(etcd_server_tls tls = {});
  /// Starts `member` of a larger cluster and returns at once: a member alone
  /// has no quorum, so it is healthy only once enough of the others run
  /// (wait_healthy()). Throws std::runtime_error when etcd is not installed.
  etcd_server(etcd_member member, etcd_server_tls tls);
  ~etcd_server();
  etcd_server(const etcd_server&) = delete;
  etcd_server& operator=(const etcd_server&) = delete;

  unsigned short client_port() const { return client_port_; }
  unsigned short peer_port() const { return peer_port_; }
  /// The uid the member runs as (0 = the test's own).
  uid_t run_as() const { return run_as_; }
  /// "http://127.0.0.1:<client port>" (https with TLS).
  std::string client_url() const;
  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  /// Polls until the member says it is healthy (it has a leader and
  /// answers), at most 20 s; false if it exited or did not become healthy.
  bool wait_healthy() { return wait_ready(); }
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

  /// Runs etcdctl against this member with `args` (as root once auth is
  /// enabled); its output. Throws std::runtime_error with the output when it
  /// fails.
  std::string etcdctl(const std::string& args) const;

  /// Adds the root user with `root_password` and turns authentication on;
  /// the fixture's etcdctl goes on as root.
  void enable_auth(const std::string& root_password);
  /// A user `name` with `password` whose role `name` may read and write
  /// every key under `prefix`, and nothing else: the minimal role of
  /// docs/stores/etcd.md.
  void add_prefix_user(const std::string& name, const std::string& password,
                       const std::string& prefix);

  /// The last lines of the member's log, for failure messages.
  std::string log_tail() const;

 private:
  void spawn();
  bool wait_ready();
  std::string etcdctl_command(const std::string& args) const;

  bool tls() const { return !tls_.cert_file.empty(); }

  etcd_server_tls tls_;
  std::string root_password_;
  std::filesystem::path dir_;
  std::filesystem::path data_;
  std::string name_ = "baton-test";
  std::string initial_cluster_;  // empty: a cluster of this member alone
  std::string token_ = "baton-test";
  unsigned short client_port_ = 0;
  unsigned short peer_port_ = 0;
  uid_t run_as_ = 0;
  int restores_ = 0;
  pid_t pid_ = -1;
};

}  // namespace baton::testing
