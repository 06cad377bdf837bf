// A real redis-server for integration tests: started as a child process on a
// free loopback port (and optionally a Unix socket) in its own temporary
// directory, with no persistence, and killed and reaped by the destructor.
// Tests can freeze it (SIGSTOP), kill it, restart it empty on the same port,
// and inspect keys through a synchronous hiredis connection. Only the child
// this object started is ever signalled.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

namespace baton::testing {

struct redis_server_options {
  /// When not empty, the server requires this password (requirepass).
  std::string requirepass;
  /// Also listen on a Unix socket in the temporary directory (see unix_path()).
  bool unix_socket = false;
  /// When cert_file is set, also serve TLS on a second loopback port
  /// (tls_port()) with this certificate and key; the plain port stays, for
  /// the test's own commands.
  std::string tls_cert_file;
  std::string tls_key_file;
  /// The CA that client certificates must chain to (Redis needs one to serve TLS).
  std::string tls_ca_file;
  /// Demand a client certificate on the TLS port.
  bool tls_auth_clients = false;
  /// Lines written into redis.conf as they are, e.g. ACL users:
  /// "user baton on >secret ~baton:* &baton:* +evalsha".
  std::vector<std::string> extra_config;
};

class redis_server {
 public:
  /// Starts redis-server and waits (up to 10 s) until it answers PING.
  /// Throws std::runtime_error with a clear message when redis-server is not
  /// installed or does not come up (the test then fails; it is never skipped).
  redis_server();
  explicit redis_server(redis_server_options options);
  /// Kills (SIGKILL) and reaps the child, removes the temporary directory.
  ~redis_server();
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  /// The loopback TCP port; stays the same across restart().
  unsigned short port() const { return port_; }
  /// "127.0.0.1".
  std::string host() const { return "127.0.0.1"; }
  /// "redis://127.0.0.1:<port>" (without the password).
  std::string url() const;
  /// The TLS port; 0 unless options.tls_cert_file.
  unsigned short tls_port() const { return tls_port_; }
  /// "rediss://127.0.0.1:<tls port>"; "" unless options.tls_cert_file.
  std::string tls_url() const;
  /// Path of the Unix socket; "" unless options.unix_socket.
  std::string unix_path() const;
  /// "unix://<path>"; "" unless options.unix_socket.
  std::string unix_url() const;
  /// PID of the running child; -1 after kill_and_wait().
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  /// Sends `sig` (e.g. SIGSTOP, SIGCONT) to the child, if running.
  void signal(int sig);
  /// SIGKILL and reap; the port stops answering. Idempotent.
  void kill_and_wait();
  /// kill_and_wait(), then start again on the same port with no data.
  void restart();

  /// Runs one command synchronously (2 s timeouts) and flattens the reply:
  /// nil -> {}, a string/status/integer -> {text}, an array -> its elements
  /// (nested arrays flattened, nil elements as ""). Throws std::runtime_error
  /// on an error reply or when the server cannot be reached.
  std::vector<std::string> command(std::initializer_list<std::string> args) const;
  std::vector<std::string> command(const std::vector<std::string>& args) const;

  /// The last lines of the server's log, for failure messages.
  std::string log_tail() const;

 private:
  void write_config() const;
  // One attempt to start on port_; false when the port was taken.
  bool start_once();

  redis_server_options options_;
  std::filesystem::path dir_;
  std::string executable_;
  unsigned short port_ = 0;
  unsigned short tls_port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace baton::testing
