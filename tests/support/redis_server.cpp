// redis_server: spawn, readiness wait, signals and a synchronous command
// helper. Readiness is polled (connect + PING every 20 ms, at most 10 s)
// because redis-server offers no event to wait on; the answer must come from
// our own child (INFO's process_id), not from another server that happened to
// take the port.
#include "redis_server.hpp"

#include "free_port.hpp"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

constexpr auto ready_timeout = 10s;
constexpr auto poll_interval = 20ms;
constexpr int port_attempts = 5;

struct context_deleter {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct reply_deleter {
  void operator()(void* r) const { freeReplyObject(r); }
};
using context_ptr = std::unique_ptr<redisContext, context_deleter>;
using reply_ptr = std::unique_ptr<void, reply_deleter>;

std::string find_executable(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

void flatten(const redisReply& r, std::vector<std::string>& out) {
  switch (r.type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.emplace_back(r.str, r.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.push_back(std::to_string(r.integer));
      break;
    case REDIS_REPLY_ARRAY:
      for (std::size_t i = 0; i < r.elements; ++i) {
        if (r.element[i]->type == REDIS_REPLY_NIL)
          out.emplace_back();
        else
          flatten(*r.element[i], out);
      }
      break;
    default:
      break;
  }
}

timeval to_timeval(std::chrono::milliseconds d) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((d.count() % 1000) * 1000);
  return tv;
}

// A connected, authenticated context, or nullptr with `error` set.
context_ptr connect(unsigned short port, const std::string& password,
                    std::chrono::milliseconds timeout, std::string& error) {
  context_ptr c(redisConnectWithTimeout("127.0.0.1", port, to_timeval(timeout)));
  if (!c || c->err) {
    error = c ? c->errstr : "cannot allocate a redis context";
    return nullptr;
  }
  redisSetTimeout(c.get(), to_timeval(timeout));
  if (!password.empty()) {
    const char* argv[] = {"AUTH", password.c_str()};
    const std::size_t lens[] = {4, password.size()};
    reply_ptr reply(redisCommandArgv(c.get(), 2, argv, lens));
    if (!reply) {
      error = c->errstr;
      return nullptr;
    }
    const auto* r = static_cast<const redisReply*>(reply.get());
    if (r->type == REDIS_REPLY_ERROR) {
      error = std::string("AUTH: ") + r->str;
      return nullptr;
    }
  }
  return c;
}

}  // namespace

redis_server::redis_server() : redis_server(redis_server_options{}) {}

redis_server::redis_server(redis_server_options options) : options_(std::move(options)) {
  executable_ = find_executable("redis-server");
  if (executable_.empty())
    throw std::runtime_error(
        "redis-server is not installed (not found in PATH); the integration tests need it "
        "(Debian: apt-get install redis-server)");
  char templ[] = "/tmp/baton-redis-XXXXXX";
  if (::mkdtemp(templ) == nullptr)
    throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  dir_ = templ;
  try {
    for (int attempt = 0; attempt < port_attempts; ++attempt) {
      port_ = free_loopback_port();
      if (!options_.tls_cert_file.empty()) {
        do {
          tls_port_ = free_loopback_port();
        } while (tls_port_ == port_);
      }
      if (start_once()) return;
    }
    throw std::runtime_error("redis-server: no free port after " + std::to_string(port_attempts) +
                             " attempts; log:\n" + log_tail());
  } catch (...) {
    kill_and_wait();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

redis_server::~redis_server() {
  kill_and_wait();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
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

void redis_server::kill_and_wait() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

void redis_server::restart() {
  kill_and_wait();
  // The same port must come back; SO_REUSEADDR makes that immediate unless
  // some other process grabbed it meanwhile.
  for (int attempt = 0; attempt < port_attempts; ++attempt) {
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

void redis_server::spawn() {
  const std::string conf = (dir_ / "redis.conf").string();
  const std::string log = (dir_ / "redis.log").string();
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    // Only async-signal-safe calls until exec. The server dies with the test
    // process even if the test crashes before the destructor runs.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = ::open("/dev/null", O_RDONLY);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    if (in >= 0) ::dup2(in, STDIN_FILENO);
    char* const argv[] = {const_cast<char*>(executable_.c_str()), const_cast<char*>(conf.c_str()),
                          nullptr};
    ::execv(executable_.c_str(), argv);
    ::_exit(127);
  }
  pid_ = child;
}

bool redis_server::start_once() {
  write_config();
  spawn();
  const auto deadline = std::chrono::steady_clock::now() + ready_timeout;
  std::string last_error = "not tried";
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      const std::string log = log_tail();
      if (log.find("Address already in use") != std::string::npos) return false;
      throw std::runtime_error("redis-server exited at start; log:\n" + log);
    }
    std::string error;
    if (auto c = connect(port_, options_.requirepass, 200ms, error)) {
      reply_ptr reply(redisCommand(c.get(), "INFO server"));
      const auto* r = static_cast<const redisReply*>(reply.get());
      if (r != nullptr && r->type == REDIS_REPLY_STRING) {
        const std::string info(r->str, r->len);
        if (info.find("process_id:" + std::to_string(pid_) + "\r") != std::string::npos)
          return true;
        last_error = "another server answers on port " + std::to_string(port_);
      } else {
        last_error = r != nullptr && r->type == REDIS_REPLY_ERROR ? r->str : "no INFO reply";
      }
    } else {
      last_error = error;
    }
    std::this_thread::sleep_for(poll_interval);
  }
  kill_and_wait();
  // Someone else's server on our port: try another port.
  if (last_error.starts_with("another server")) return false;
  throw std::runtime_error("redis-server did not answer within 10 s (" + last_error + "); log:\n" +
                           log_tail());
}

std::vector<std::string> redis_server::command(std::initializer_list<std::string> args) const {
  return command(std::vector<std::string>(args));
}

std::vector<std::string> redis_server::command(const std::vector<std::string>& args) const {
  std::string name = args.empty() ? std::string() : args.front();
  std::string error;
  auto c = connect(port_, options_.requirepass, 2000ms, error);
  if (!c)
    throw std::runtime_error("redis " + name + ": cannot connect to port " + std::to_string(port_) +
                             ": " + error);
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  reply_ptr reply(
      redisCommandArgv(c.get(), static_cast<int>(args.size()), argv.data(), lens.data()));
  if (!reply) throw std::runtime_error("redis " + name + ": " + c->errstr);
  const auto* r = static_cast<const redisReply*>(reply.get());
  if (r->type == REDIS_REPLY_ERROR) throw std::runtime_error("redis " + name + ": " + r->str);
  std::vector<std::string> out;
  flatten(*r, out);
  return out;
}

std::string redis_server::log_tail() const {
  std::ifstream in(dir_ / "redis.log");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  constexpr std::size_t keep = 20;
  std::string out;
  for (std::size_t i = lines.size() > keep ? lines.size() - keep : 0; i < lines.size(); ++i)
    out += lines[i] + "\n";
  return out;
}

}  // namespace baton::testing
