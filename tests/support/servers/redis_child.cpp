// Readiness is polled (connect + INFO every 20 ms, at most 10 s) because
// redis-server offers no event to wait on; the answer must come from our own
// child (INFO's process_id), not from another server that happened to take
// the port.
#include "support/servers/redis_child.hpp"

#include "support/servers/redis_sync_client.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

constexpr auto redis_ready_timeout = 10s;
constexpr auto ready_poll_interval = 20ms;
constexpr auto ready_io_timeout = 200ms;

pid_t spawn(const redis_child_spec& spec) {
  // Everything the child needs is built before fork: between fork and exec
  // only async-signal-safe calls are allowed.
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(spec.executable.c_str()));
  for (const auto& a : spec.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string log = spec.log.string();
  const int log_flags = O_WRONLY | O_CREAT | (spec.append_log ? O_APPEND : O_TRUNC);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    // The server dies with the test process even if the test crashes before
    // the destructor runs.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int out = ::open(log.c_str(), log_flags, 0600);
    const int in = ::open("/dev/null", O_RDONLY);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    if (in >= 0) ::dup2(in, STDIN_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return child;
}

// True once `pid` answers on spec.port; false, with `pid` reaped and -1,
// when the port was taken. Throws (leaving `pid` to the caller) otherwise.
bool wait_until_answers(pid_t& pid, const redis_child_spec& spec) {
  const auto deadline = std::chrono::steady_clock::now() + redis_ready_timeout;
  std::string last_error = "not tried";
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      pid = -1;
      const std::string tail = log_tail(spec.log);
      if (tail.find("Address already in use") != std::string::npos) return false;
      throw std::runtime_error(spec.label + " exited at start; log:\n" + tail);
    }
    try {
      const auto info =
          sync_command(spec.port, spec.password, {"INFO", "server"}, ready_io_timeout, spec.label);
      if (info.size() != 1) {
        last_error = "no INFO reply";
      } else if (info_field(info.front(), "process_id") == std::to_string(pid)) {
        return true;
      } else {
        last_error = "another server answers on port " + std::to_string(spec.port);
      }
    } catch (const std::runtime_error& e) {
      last_error = e.what();
    }
    std::this_thread::sleep_for(ready_poll_interval);
  }
  kill_and_reap(pid);
  // Someone else's server on our port: the caller tries another port.
  if (last_error.starts_with("another server")) return false;
  throw std::runtime_error(spec.label + " did not answer within 10 s (" + last_error +
                           "); log:\n" + log_tail(spec.log));
}

}  // namespace

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

std::string log_tail(const std::filesystem::path& file, std::size_t lines) {
  std::ifstream in(file);
  std::vector<std::string> all;
  std::string line;
  while (std::getline(in, line)) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += all[i] + "\n";
  return out;
}

std::filesystem::path make_temp_dir(const std::string& templ) {
  std::vector<char> name(templ.begin(), templ.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr)
    throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  return name.data();
}

void remove_temp_dir(const std::filesystem::path& dir) {
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

pid_t start_redis_child(const redis_child_spec& spec) {
  pid_t pid = spawn(spec);
  try {
    if (!wait_until_answers(pid, spec)) return -1;
  } catch (...) {
    kill_and_reap(pid);
    throw;
  }
  return pid;
}

void kill_and_reap(pid_t& pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  pid = -1;
}

}  // namespace baton::testing
