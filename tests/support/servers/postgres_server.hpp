// A real PostgreSQL server for integration tests: a fresh cluster (initdb)
// in its own temporary directory, the postmaster started directly as our
// child on a free loopback port (fsync off), killed and reaped by the
// destructor. initdb and postgres refuse to run as root, so as root both run
// as the `postgres` user. Only the postmaster this object started is ever
// signalled. Authentication is trust: the tests are about leases, and only
// the loopback interface listens.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <cstdint>
#include <string>
#include <vector>

namespace baton::testing {

struct postgres_server_options {
  /// Run the server under libfaketime (Debian's libfaketime package), its
  /// wall clock offset by what set_clock_offset() last wrote (0 at first):
  /// now() and clock_timestamp() move, CLOCK_MONOTONIC does not. Off by
  /// default: the server reads the real clock, as it always did.
  bool fake_clock = false;
};

class postgres_server {
 public:
  /// initdb, start, and wait (up to 20 s) until it accepts connections.
  /// Throws std::runtime_error with a clear message when PostgreSQL is not
  /// installed or does not come up (the test then fails; never skipped), or
  /// when `options.fake_clock` asks for libfaketime and it is not installed.
  explicit postgres_server(postgres_server_options options = {});
  ~postgres_server();
  postgres_server(const postgres_server&) = delete;
  postgres_server& operator=(const postgres_server&) = delete;

  unsigned short port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  /// A libpq connection string for `user` on 127.0.0.1:port, database postgres.
  std::string conninfo(const std::string& user = "postgres") const;

  /// Runs `sql` (may hold several statements) as the superuser; the last
  /// result's rows, NULL as "". Throws std::runtime_error naming the SQL and
  /// the server's message.
  /// With `sent_ns`: the CLOCK_MONOTONIC time just before the statement
  /// was sent, after the connection was made (which may take long on a busy
  /// host), so that a time the statement reads can be placed on this clock.
  std::vector<std::vector<std::string>> query(const std::string& sql,
                                              std::int64_t* sent_ns = nullptr) const;

  /// SIGKILL and reap the postmaster; waits (bounded) until its backends are
  /// gone too. Idempotent.
  void kill_and_wait();
  /// Start again on the same port with the same data (after kill_and_wait).
  void start();
  /// Immediate shutdown (SIGQUIT, as `pg_ctl stop -m immediate`: no
  /// checkpoint, crash recovery on the next start), waiting for the
  /// postmaster and its backends to be gone. start() brings it back.
  void stop_immediate();
  /// Immediate shutdown (SIGQUIT: no checkpoint, crash recovery on start),
  /// then, after `down` more, start again on the same port.
  void restart_immediate(std::chrono::milliseconds down = std::chrono::milliseconds(0));
  /// A copy of the data directory as it is now, as a backup would hold it:
  /// a fast shutdown (a checkpoint), the copy, a start again on the same port.
  void save_data_copy();
  /// The copy from save_data_copy() put back in place of the data (after an
  /// immediate shutdown), then a start on the same port: the server comes
  /// back with the same system identifier and timeline, and older data.
  void put_data_copy_back();
  /// Steps the server's wall clock to `offset` from the true time, at once
  /// for every backend (each reads the offset file at every clock call), a
  /// restart included. Throws std::logic_error without `fake_clock`.
  void set_clock_offset(std::chrono::milliseconds offset);
  std::chrono::milliseconds clock_offset() const { return clock_offset_; }

  /// Sends `sig` to the postmaster, if running.
  void signal(int sig);
  /// pg_terminate_backend for every session whose application_name starts
  /// with `prefix`; returns how many.
  int terminate_backends(const std::string& prefix) const;

  /// Holds ACCESS EXCLUSIVE on a table in an open transaction until destroyed.
  class held_lock {
   public:
    ~held_lock();
    /// Commits the transaction (the destructor rolls back what is left).
    void commit();
    held_lock(const held_lock&) = delete;
    held_lock& operator=(const held_lock&) = delete;

   private:
    friend class postgres_server;
    explicit held_lock(void* connection) : connection_(connection) {}
    void* connection_;
  };
  std::unique_ptr<held_lock> lock_table(const std::string& table) const;
  /// Runs `statements` in a transaction left open (their row locks held)
  /// until committed or destroyed.
  std::unique_ptr<held_lock> open_transaction(const std::string& statements) const;

  /// A streaming replica of this server (pg_basebackup -R), started as a
  /// hot standby on its own free port; it owns its own postmaster.
  std::unique_ptr<postgres_server> make_replica() const;
  /// Promote this replica (pg_promote) and wait until it accepts writes.
  void promote() const;

  /// The last lines of the server's log, for failure messages.
  std::string log_tail() const;

 private:
  struct replica_tag {};
  postgres_server(replica_tag, const postgres_server& primary);
  void make_temp_dir();
  void start_on_free_port();
  void spawn();
  bool wait_ready();
  void stop_with(int sig);

  std::filesystem::path dir_;
  std::string bindir_;
  postgres_server_options options_;
  std::chrono::milliseconds clock_offset_{0};
  unsigned short port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace baton::testing
