// redis_server: the config file, the port retries and the server's own
// accessors; spawning, the readiness wait (our own child must be the one
// answering), reaping and the synchronous command are redis_child's and
// redis_sync_client's.
#include "support/servers/redis_server.hpp"

#include "support/free_port.hpp"
#include "support/servers/redis_child.hpp"
#include "support/servers/redis_sync_client.hpp"

#include <signal.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

}  // namespace

redis_server::redis_server() : redis_server(redis_server_options{}) {}

redis_server::redis_server(redis_server_options options) : options_(std::move(options)) {
  executable_ = find_executable("redis-server");
  if (executable_.empty())
    throw std::runtime_error(
        "redis-server is not installed (not found in PATH); the integration tests need it "
        "(Debian: apt-get install redis-server)");
  dir_ = make_temp_dir("/tmp/baton-redis-XXXXXX");
  try {
    for (int attempt = 0; attempt < server_port_attempts; ++attempt) {
      port_ = free_loopback_port();
      if (!options_.tls_cert_file.empty()) {
        do {
          tls_port_ = free_loopback_port();
        } while (tls_port_ == port_);
      }
      if (start_once()) return;
    }
    throw std::runtime_error("redis-server: no free port after " +
                             std::to_string(server_port_attempts) + " attempts; log:\n" +
                             log_tail());
  } catch (...) {
    kill_and_wait();
    remove_temp_dir(dir_);
    throw;
  }
}

redis_server::~redis_server() {
  kill_and_wait();
  remove_temp_dir(dir_);
}

std::string redis_server::url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

std::string redis_server::tls_url() const {
  return tls_port_ == 0 ? std::string() : "rediss://127.0.0.1:" + std::to_string(tls_port_);
}

std::string redis_server::unix_path() const {
  return options_.unix_socket ? (dir_ / "redis.sock").string() : std::string();
}

std::string redis_server::unix_url() const {
  return options_.unix_socket ? "unix://" + unix_path() : std::string();
}

void redis_server::signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

void redis_server::kill_and_wait() { kill_and_reap(pid_); }

void redis_server::restart() {
  kill_and_wait();
  // The same port must come back; SO_REUSEADDR makes that immediate unless
  // some other process grabbed it meanwhile.
  for (int attempt = 0; attempt < server_port_attempts; ++attempt) {
    if (start_once()) return;
    std::this_thread::sleep_for(100ms);
  }
  throw std::runtime_error("redis-server: cannot restart on port " + std::to_string(port_) +
                           "; log:\n" + log_tail());
}

void redis_server::write_config() const {
  std::ofstream conf(dir_ / "redis.conf", std::ios::trunc);
  conf << "port " << port_ << "\n"
       << "bind 127.0.0.1\n"
       << "save \"\"\n"
       << "appendonly no\n"
       << "daemonize no\n"
       << "protected-mode no\n"
       << "dir " << dir_.string() << "\n";
  if (options_.unix_socket) conf << "unixsocket " << unix_path() << "\nunixsocketperm 700\n";
  // In the config file, not on the command line, so it stays out of `ps`.
  if (!options_.requirepass.empty()) conf << "requirepass \"" << options_.requirepass << "\"\n";
  if (!options_.tls_cert_file.empty()) {
    conf << "tls-port " << tls_port_ << "\n"
         << "tls-cert-file " << options_.tls_cert_file << "\n"
         << "tls-key-file " << options_.tls_key_file << "\n"
         << "tls-ca-cert-file " << options_.tls_ca_file << "\n"
         << "tls-auth-clients " << (options_.tls_auth_clients ? "yes" : "no") << "\n";
  }
  for (const auto& line : options_.extra_config) conf << line << "\n";
  if (!conf) throw std::runtime_error("cannot write " + (dir_ / "redis.conf").string());
}

bool redis_server::start_once() {
  write_config();
  pid_ = start_redis_child({.executable = executable_,
                            .args = {(dir_ / "redis.conf").string()},
                            .log = dir_ / "redis.log",
                            .append_log = false,
                            .port = port_,
                            .password = options_.requirepass,
                            .label = "redis-server"});
  return pid_ > 0;
}

std::vector<std::string> redis_server::command(std::initializer_list<std::string> args) const {
  return command(std::vector<std::string>(args));
}

std::vector<std::string> redis_server::command(const std::vector<std::string>& args) const {
  return sync_command(port_, options_.requirepass, args, 2000ms, "redis");
}

std::string redis_server::log_tail() const { return baton::testing::log_tail(dir_ / "redis.log"); }

}  // namespace baton::testing
