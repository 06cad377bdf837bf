// Readiness is polled (connect + INFO every 20 ms, at most 10 s) because
// redis-server offers no event to wait on; the answer must come from our own
// child (INFO's process_id), not from another server that happened to take
// the port.
#include "support/servers/redis_child.hpp"

#include "support/servers/redis_sync_client.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

constexpr auto redis_ready_timeout = 10s;
constexpr auto ready_poll_interval = 20ms;
constexpr auto ready_io_timeout = 200ms;

pid_t spawn(const redis_child_spec& spec) {
  child_spec child;
  child.argv.push_back(spec.executable);
  child.argv.insert(child.argv.end(), spec.args.begin(), spec.args.end());
  child.output_file = spec.log;
  child.append_output = spec.append_log;
  return spawn_child(child);
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
  wait_child(pid);
  pid = -1;
}

}  // namespace baton::testing
