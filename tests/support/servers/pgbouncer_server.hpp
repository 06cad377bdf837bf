// A real PgBouncer in front of a test's postgres_server, for the check that
// catches poolers baton cannot work through. Trust authentication, loopback
// only, on a free port; run as the `postgres` user when root (pgbouncer
// refuses root). Only the process this object started is ever signalled.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "support/servers/postgres_server.hpp"

namespace baton::testing {

class pgbouncer_server {
 public:
  /// Starts pgbouncer with `pool_mode` ("session" or "transaction") for the
  /// database postgres of `server`, and waits (up to 20 s) until a
  /// connection through it works. Throws std::runtime_error naming the cause
  /// (pgbouncer not installed: apt-get install pgbouncer).
  pgbouncer_server(const postgres_server& server, const std::string& pool_mode);
  ~pgbouncer_server();
  pgbouncer_server(const pgbouncer_server&) = delete;
  pgbouncer_server& operator=(const pgbouncer_server&) = delete;

  unsigned short port() const { return port_; }
  /// A libpq connection string through the pooler, as `postgres`.
  std::string conninfo() const;

 private:
  void stop();

  std::filesystem::path dir_;
  unsigned short port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace baton::testing
