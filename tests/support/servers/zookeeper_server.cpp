// Readiness is polled (the four-letter word `srvr` every 50 ms, bounded)
// because the server offers no event to wait on. The JVM is kept small and
// quick to start: a 128 MB heap, the serial collector and the client
// compiler only; the server's dependencies come from zookeeper.jar's own
// manifest class path (Debian's layout), plus slf4j-simple so that its log
// lines reach the log file.
#include "support/servers/zookeeper_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "support/free_port.hpp"
#include "support/listening_process.hpp"
#include "support/servers/redis_child.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* server_jar = "/usr/share/java/zookeeper.jar";
constexpr const char* log_binding_jar = "/usr/share/java/slf4j-simple.jar";
constexpr auto zookeeper_poll_interval = 50ms;
constexpr auto stop_grace = 5s;

pid_t spawn(const std::vector<std::string>& args, const std::filesystem::path& log, uid_t run_as) {
  child_spec spec;
  spec.argv = args;
  spec.output_file = log;
  spec.run_as = run_as;
  spec.run_as_group = run_as;
  return spawn_child(spec);
}

// One exchange with a 2 s bound on each step: connect, send, read to EOF.
std::string ask(unsigned short port, const std::string& word) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return {};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  const auto wait_for = [fd](short events) {
    pollfd p{fd, events, 0};
    return ::poll(&p, 1, 2000) == 1 && (p.revents & (events | POLLHUP)) != 0;
  };
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 && errno != EINPROGRESS) {
    ::close(fd);
    return {};
  }
  int err = 0;
  socklen_t len = sizeof err;
  if (!wait_for(POLLOUT) || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0 ||
      ::send(fd, word.data(), word.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(word.size())) {
    ::close(fd);
    return {};
  }
  char buf[4096];
  for (int i = 0; i < 64 && wait_for(POLLIN); ++i) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer;
}

}  // namespace

zookeeper_server::zookeeper_server() : zookeeper_server(zookeeper_server_options{}) {}

zookeeper_server::zookeeper_server(zookeeper_server_options options, bool wait_ready_now)
    : options_(std::move(options)) {
  java_ = find_executable("java");
  if (java_.empty())
    throw std::runtime_error("java is not installed (the zookeeper package needs it)");
  if (!std::filesystem::exists(server_jar)) {
    throw std::runtime_error(std::string(server_jar) +
                             " is missing: install the zookeeper package");
  }
  dir_ = make_temp_dir((std::filesystem::temp_directory_path() / "baton-zk-XXXXXX").string());
  try {
    std::filesystem::create_directories(dir_ / "data");
    if (options_.run_as != 0) {
      // The server writes its data and reads its config as that user.
      for (const auto& path : {dir_, dir_ / "data"}) {
        if (::chown(path.c_str(), options_.run_as, options_.run_as) != 0) {
          throw std::runtime_error("chown " + path.string() + ": " + std::strerror(errno));
        }
      }
    }
    const bool pick_port = options_.client_port == 0;
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (pick_port) options_.client_port = free_loopback_port();
      if (start_once()) break;
      if (!pick_port || attempt == 4) {
        throw std::runtime_error("zookeeper did not start on port " +
                                 std::to_string(options_.client_port) + "; log:\n" + log_tail());
      }
    }
    if (wait_ready_now && !wait_ready()) {
      throw std::runtime_error("zookeeper on port " + std::to_string(options_.client_port) +
                               " did not answer srvr within 30 s; log:\n" + log_tail());
    }
  } catch (...) {
    kill_and_reap(pid_);
    remove_temp_dir(dir_);
    throw;
  }
}

zookeeper_server::~zookeeper_server() {
  kill_and_reap(pid_);
  remove_temp_dir(dir_);
}

std::string zookeeper_server::address() const {
  return "127.0.0.1:" + std::to_string(options_.client_port);
}

void zookeeper_server::write_config() const {
  std::ofstream cfg(dir_ / "zoo.cfg", std::ios::trunc);
  cfg << "tickTime=" << options_.tick_ms << "\n"
      << "dataDir=" << (dir_ / "data").string() << "\n"
      << "clientPort=" << options_.client_port << "\n"
      << "clientPortAddress=127.0.0.1\n"
      << "minSessionTimeout=" << options_.min_session_timeout_ms << "\n"
      << "maxSessionTimeout=" << options_.max_session_timeout_ms << "\n"
      << "initLimit=" << options_.init_limit << "\n"
      << "syncLimit=" << options_.sync_limit << "\n"
      << "admin.enableServer=false\n"
      << "4lw.commands.whitelist=ruok,srvr,stat,mntr,conf\n"
      // Fsync makes every write wait for the disk; the tests are about
      // leases, and a shared machine's disk would only add noise.
      << "forceSync=no\n"
      << "maxClientCnxns=0\n";
  for (const auto& p : options_.peers) {
    cfg << "server." << p.id << "=" << p.host << ":" << p.quorum_port << ":" << p.election_port
        << ";" << p.host << ":" << p.client_port << "\n";
  }
  for (const auto& line : options_.extra_config) cfg << line << "\n";
  if (options_.server_id > 0) {
    std::ofstream(dir_ / "data" / "myid", std::ios::trunc) << options_.server_id << "\n";
  }
}

bool zookeeper_server::start_once() {
  write_config();
  const std::string cp = std::string(server_jar) + ":" + log_binding_jar;
  pid_ =
      spawn({java_, "-Xmx128m", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             "-Dzookeeper.admin.enableServer=false", "-Dorg.slf4j.simpleLogger.showDateTime=true",
             "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS", "-cp", cp,
             "org.apache.zookeeper.server.quorum.QuorumPeerMain", (dir_ / "zoo.cfg").string()},
            dir_ / "zookeeper.log", options_.run_as);
  // A bind failure ends the JVM within a second or two; a server that came
  // up keeps running. Standalone servers answer quickly, so wait for either.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    // Answered by our JVM: another test's server on a port that was free a
    // moment ago answers ruok too, until ours fails to bind and exits.
    if (options_.server_id > 0 ||
        (!four_letter("ruok").empty() && process_listens_on(pid_, options_.client_port))) {
      return true;
    }
    std::this_thread::sleep_for(zookeeper_poll_interval);
  }
  return true;
}

bool zookeeper_server::wait_ready(std::chrono::milliseconds within) const {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pid_ <= 0) return false;
    if (!mode().empty()) return true;
    std::this_thread::sleep_for(zookeeper_poll_interval);
  }
  return false;
}

std::string zookeeper_server::four_letter(const std::string& word) const {
  return ask(options_.client_port, word);
}

std::string zookeeper_server::mode() const {
  const auto answer = four_letter("srvr");
  const auto at = answer.find("Mode: ");
  if (at == std::string::npos) return {};
  const auto end = answer.find('\n', at);
  return answer.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
}

void zookeeper_server::signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

void zookeeper_server::freeze() {
  signal(SIGSTOP);
}
void zookeeper_server::thaw() {
  signal(SIGCONT);
}

void zookeeper_server::stop(bool kill) {
  if (pid_ <= 0) return;
  if (!kill) {
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + stop_grace;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(zookeeper_poll_interval);
    }
  }
  kill_and_reap(pid_);
}

void zookeeper_server::start(bool wait) {
  if (pid_ > 0) return;
  if (!start_once()) {
    throw std::runtime_error("zookeeper did not start again on port " +
                             std::to_string(options_.client_port) + "; log:\n" + log_tail());
  }
  if (wait && !wait_ready()) {
    throw std::runtime_error("zookeeper on port " + std::to_string(options_.client_port) +
                             " did not answer srvr within 30 s after a start; log:\n" + log_tail());
  }
}

void zookeeper_server::restart(bool kill) {
  stop(kill);
  start();
}

void zookeeper_server::wipe_and_restart() {
  stop(true);
  std::filesystem::remove_all(dir_ / "data");
  std::filesystem::create_directories(dir_ / "data");
  start();
}

std::string zookeeper_server::log_tail() const {
  return baton::testing::log_tail(dir_ / "zookeeper.log", 30);
}

std::vector<std::unique_ptr<zookeeper_server>> start_zookeeper_ensemble(int size) {
  constexpr int attempts = 4;
  std::string logs;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    std::vector<zookeeper_peer> peers;
    for (int id = 1; id <= size; ++id) {
      peers.push_back(
          {id, "127.0.0.1", free_loopback_port(), free_loopback_port(), free_loopback_port()});
    }
    std::vector<std::unique_ptr<zookeeper_server>> members;
    for (const auto& p : peers) {
      zookeeper_server_options o;
      o.server_id = p.id;
      o.peers = peers;
      o.client_port = p.client_port;
      members.push_back(std::make_unique<zookeeper_server>(o, false));
    }
    bool ready = true;
    for (auto& m : members) ready = ready && m->wait_ready();
    if (ready) return members;
    logs.clear();
    for (const auto& m : members) {
      logs += "---- member " + std::to_string(m->options().server_id) + "\n" + m->log_tail();
    }
    if (logs.find("Address already in use") == std::string::npos) break;
  }
  throw std::runtime_error("the ZooKeeper ensemble did not come up\n" + logs);
}

}  // namespace baton::testing
