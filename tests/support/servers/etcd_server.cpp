// etcd_server: the member as our child, readiness by GET /health on a raw
// socket (no client library needed), snapshots through etcdctl.
#include "support/servers/etcd_server.hpp"

#include "support/free_port.hpp"
#include "support/listening_process.hpp"
#include "support/servers/redis_child.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

namespace baton::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr auto etcd_ready_timeout = 20s;

// One GET /health on 127.0.0.1:`port` with 500 ms socket timeouts; true
// when the answer says healthy.
bool healthy(unsigned short port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  timeval tv{0, 500000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      std::array<char, 1024> buf{};
      for (int i = 0; i < 8; ++i) {
        const auto n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n <= 0) break;
        answer.append(buf.data(), static_cast<std::size_t>(n));
      }
    }
  }
  ::close(fd);
  return answer.find("\"health\":\"true\"") != std::string::npos;
}

std::string etcd_binary() {
  auto path = find_executable("etcd");
  if (path.empty() && ::access("/usr/bin/etcd", X_OK) == 0) path = "/usr/bin/etcd";
  if (path.empty()) {
    throw std::runtime_error(
        "etcd not found on PATH; the etcd tests need it (Debian: apt-get "
        "install etcd-server etcd-client)");
  }
  return path;
}

// Runs `command` through the shell to its end; its output and whether it
// succeeded.
std::pair<bool, std::string> run(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return {false, std::string("popen: ") + std::strerror(errno)};
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) && WEXITSTATUS(status) == 0, out};
}

}  // namespace

etcd_certs make_etcd_certs(const std::filesystem::path& pki_dir) {
  const auto dir = pki_dir.string();
  const auto sign = [&](const std::string& name, const std::string& ext) {
    std::FILE* f = std::fopen((pki_dir / (name + ".ext")).c_str(), "w");
    if (f == nullptr) throw std::runtime_error("cannot write " + dir + "/" + name + ".ext");
    std::fputs(ext.c_str(), f);
    std::fclose(f);
    for (const std::string step :
         {"openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + name +
              ".key -out " + name + ".csr -subj '/O=baton test'",
          "openssl x509 -req -in " + name + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -out " +
              name + ".pem -days 30 -extfile " + name + ".ext"}) {
      const auto [ok, out] = run("cd " + dir + " && " + step);
      if (!ok) throw std::runtime_error(step + ": " + out);
    }
  };
  sign("etcd-server",
       "extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n");
  sign("etcd-client", "extendedKeyUsage=clientAuth\nsubjectAltName=DNS:baton-client\n");
  return {dir + "/etcd-server.pem", dir + "/etcd-server.key", dir + "/etcd-client.pem",
          dir + "/etcd-client.key"};
}

etcd_server::etcd_server(etcd_server_tls tls) : tls_(std::move(tls)) {
  dir_ = make_temp_dir("/tmp/baton-etcd-XXXXXX");
  data_ = dir_ / "data";
  try {
    for (int attempt = 0; attempt < server_port_attempts; ++attempt) {
      client_port_ = free_loopback_port();
      peer_port_ = free_loopback_port();
      if (peer_port_ == client_port_) continue;
      spawn();
      if (wait_ready()) return;
      stop();
      // A half-made data directory names the old peer URL: start afresh.
      remove_temp_dir(data_);
    }
    throw std::runtime_error("etcd did not come up after " + std::to_string(server_port_attempts) +
                             " attempts; log:\n" + log_tail());
  } catch (...) {
    stop();
    remove_temp_dir(dir_);
    throw;
  }
}

etcd_server::etcd_server(etcd_member member, etcd_server_tls tls)
    : tls_(std::move(tls)),
      name_(std::move(member.name)),
      initial_cluster_(std::move(member.initial_cluster)),
      token_(std::move(member.token)),
      client_port_(member.client_port),
      peer_port_(member.peer_port),
      run_as_(member.run_as) {
  dir_ = make_temp_dir("/tmp/baton-etcd-XXXXXX");
  data_ = dir_ / "data";
  try {
    // The member makes its data directory in dir_ as that user.
    if (run_as_ != 0 && ::chown(dir_.c_str(), run_as_, run_as_) != 0) {
      throw std::runtime_error("chown " + dir_.string() + ": " + std::strerror(errno));
    }
    spawn();
  } catch (...) {
    remove_temp_dir(dir_);
    throw;
  }
}

etcd_server::~etcd_server() {
  stop();
  remove_temp_dir(dir_);
}

std::string etcd_server::client_url() const {
  return std::string(tls() ? "https" : "http") + "://127.0.0.1:" + std::to_string(client_port_);
}

void etcd_server::spawn() {
  const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
  std::vector<std::string> args = {
      etcd_binary(),
      "--name",
      name_,
      "--data-dir",
      data_.string(),
      "--listen-client-urls",
      client_url(),
      "--advertise-client-urls",
      client_url(),
      "--listen-peer-urls",
      peer,
      "--initial-advertise-peer-urls",
      peer,
      "--initial-cluster",
      initial_cluster_.empty() ? name_ + "=" + peer : initial_cluster_,
      "--initial-cluster-token",
      token_,
      "--initial-cluster-state",
      "new",
      "--heartbeat-interval",
      "50",
      "--election-timeout",
      std::to_string(tls_.election_timeout_ms),
      "--log-level",
      "warn",
      // bcrypt at its lowest cost: users are added, and clients authenticate, in
      // milliseconds rather than a tenth of a second each (the test users' passwords
      // are not secrets). What baton sends and is answered is the same.
      "--bcrypt-cost",
      "4",
  };
  if (tls()) {
    for (const auto& a : {std::string("--cert-file"), tls_.cert_file, std::string("--key-file"),
                          tls_.key_file, std::string("--trusted-ca-file"), tls_.ca_file}) {
      args.push_back(a);
    }
    if (tls_.client_cert_auth) args.emplace_back("--client-cert-auth");
  }
  child_spec spec;
  spec.argv = std::move(args);
  spec.output_file = dir_ / "etcd.log";
  spec.run_as = run_as_;
  spec.run_as_group = run_as_;
  pid_ = spawn_child(spec);
}

bool etcd_server::wait_ready() {
  const auto deadline = std::chrono::steady_clock::now() + etcd_ready_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;  // exited: most likely a port was taken
      return false;
    }
    // Healthy, and the answer came from our member: another test's etcd
    // on a port that was free a moment ago answers too, until ours fails
    // to bind and exits.
    if ((tls() ? run(etcdctl_command("endpoint health --command-timeout=1s")).first
               : healthy(client_port_)) &&
        process_listens_on(pid_, client_port_)) {
      return true;
    }
    std::this_thread::sleep_for(tls() ? 100ms : 20ms);
  }
  return false;
}

void etcd_server::stop(bool hard) {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGCONT);  // a frozen member must be able to act on SIGTERM
  ::kill(pid_, hard ? SIGKILL : SIGTERM);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

void etcd_server::start() {
  if (pid_ > 0) return;
  for (int attempt = 0; attempt < server_port_attempts; ++attempt) {
    spawn();
    if (wait_ready()) return;
    stop();
    std::this_thread::sleep_for(200ms);
  }
  throw std::runtime_error("etcd: cannot start again on port " + std::to_string(client_port_) +
                           "; log:\n" + log_tail());
}

void etcd_server::freeze() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGSTOP);
  // SIGSTOP is delivered asynchronously: until every thread of the member has
  // stopped it may still answer (seen: a renewal "succeeded" right after the
  // freeze). Wait, bounded, until each task's state is 'T'.
  const auto task_dir = "/proc/" + std::to_string(pid_) + "/task";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    bool all_stopped = true;
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator(task_dir, ec)) {
      std::ifstream stat(task.path() / "stat");
      std::string line;
      std::getline(stat, line);
      const auto paren = line.rfind(')');
      if (paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'T') {
        all_stopped = false;
        break;
      }
    }
    if (all_stopped || ec) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void etcd_server::thaw() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

std::string etcd_server::etcdctl_command(const std::string& args) const {
  // The password goes through the environment, not etcdctl's arguments.
  std::string command = "ETCDCTL_API=3 ";
  if (!root_password_.empty()) command += "ETCDCTL_USER='root:" + root_password_ + "' ";
  command += "etcdctl --endpoints=" + client_url();
  if (tls()) {
    command += " --cacert=" + tls_.ca_file;
    if (!tls_.client_cert_file.empty())
      command += " --cert=" + tls_.client_cert_file + " --key=" + tls_.client_key_file;
  }
  return command + " " + args;
}

std::string etcd_server::etcdctl(const std::string& args) const {
  const auto [ok, out] = run(etcdctl_command(args));
  if (!ok) throw std::runtime_error("etcdctl " + args + ": " + out);
  return out;
}

void etcd_server::enable_auth(const std::string& root_password) {
  etcdctl("user add root --new-user-password='" + root_password + "'");
  etcdctl("user grant-role root root");
  etcdctl("auth enable");
  root_password_ = root_password;
}

void etcd_server::add_prefix_user(const std::string& name, const std::string& password,
                                  const std::string& prefix) {
  etcdctl("role add " + name);
  etcdctl("role grant-permission " + name + " --prefix=true readwrite " + prefix);
  etcdctl("user add " + name + " --new-user-password='" + password + "'");
  etcdctl("user grant-role " + name + " " + name);
}

void etcd_server::save_snapshot(const std::string& name) {
  etcdctl("snapshot save " + (dir_ / (name + ".db")).string());
}

void etcd_server::restore_snapshot(const std::string& name) {
  const auto file = dir_ / (name + ".db");
  if (!fs::exists(file)) throw std::runtime_error("etcd: no snapshot " + name + " saved");
  if (!initial_cluster_.empty()) {
    throw std::logic_error("etcd: restore_snapshot is for a one-member cluster");
  }
  stop();
  const auto restored = dir_ / ("data-restored-" + std::to_string(++restores_));
  const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
  const auto [ok, out] =
      run("ETCDCTL_API=3 etcdctl snapshot restore " + file.string() + " --name " + name_ +
          " --data-dir " + restored.string() + " --initial-cluster " + name_ + "=" + peer +
          " --initial-cluster-token baton-test --initial-advertise-peer-urls " + peer);
  if (!ok) throw std::runtime_error("etcdctl snapshot restore: " + out);
  remove_temp_dir(data_);
  data_ = restored;
  start();
}

std::string etcd_server::log_tail() const {
  return baton::testing::log_tail(dir_ / "etcd.log", 40);
}

}  // namespace baton::testing
