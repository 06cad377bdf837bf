#include "support/servers/pgbouncer_server.hpp"

#include <libpq-fe.h>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/free_port.hpp"
#include "support/servers/run_as_postgres.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr const char* binary = "/usr/sbin/pgbouncer";

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

pgbouncer_server::pgbouncer_server(const postgres_server& server, const std::string& pool_mode) {
  if (!fs::exists(binary)) {
    throw std::runtime_error(std::string(binary) +
                             " not found; the pooler tests need it (Debian: apt-get install "
                             "pgbouncer)");
  }
  dir_ = make_postgres_owned_temp_dir("baton-pgbouncer-");
  const fs::path log = dir_ / "pgbouncer.log";
  try {
    std::ofstream(dir_ / "users.txt") << "\"postgres\" \"\"\n";
    for (int attempt = 0; attempt < server_port_attempts; ++attempt) {
      port_ = free_loopback_port();
      std::ofstream(dir_ / "pgbouncer.ini", std::ios::trunc)
          << "[databases]\npostgres = host=127.0.0.1 port=" << server.port()
          << " dbname=postgres\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = " << port_
          << "\nunix_socket_dir =\nauth_type = trust\nauth_file = " << (dir_ / "users.txt").string()
          << "\npool_mode = " << pool_mode << "\nlogfile = " << log.string() << "\n";
      pid_ = spawn_as_postgres({binary, (dir_ / "pgbouncer.ini").string()}, dir_ / "stderr.log",
                               true);
      const auto deadline = std::chrono::steady_clock::now() + 20s;
      const std::string info = conninfo() + " connect_timeout=2";
      while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;  // exited: most likely the port was taken
          break;
        }
        // PQping answers OK from pgbouncer itself; a real session proves the
        // path to the server too.
        PGconn* c = PQconnectdb(info.c_str());
        const bool ok = PQstatus(c) == CONNECTION_OK;
        PQfinish(c);
        if (ok) return;
        std::this_thread::sleep_for(20ms);
      }
      stop();
    }
    throw std::runtime_error("pgbouncer did not come up on a free loopback port:\n" +
                             read_file(dir_ / "stderr.log") + read_file(log));
  } catch (...) {
    stop();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
    throw;
  }
}

pgbouncer_server::~pgbouncer_server() {
  stop();
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

void pgbouncer_server::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

std::string pgbouncer_server::conninfo() const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=postgres user=postgres";
}

}  // namespace baton::testing
