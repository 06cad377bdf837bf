// The fork and exec of spawn_child.hpp. The child's side uses only
// async-signal-safe calls (prctl, getppid, open, dup2, close, chdir,
// setgroups, setgid, setuid, execve, _exit) on data prepared before fork.
#include "support/spawn_child.hpp"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace baton::testing {

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

namespace {

// The inherited environment with `overrides` put over it, as "NAME=value".
std::vector<std::string> environment_with(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [n, v] : overrides) replaced = replaced || n == name;
    if (!replaced) out.push_back(entry);
  }
  for (const auto& [n, v] : overrides) out.push_back(n + "=" + v);
  return out;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

pid_t spawn_child(const child_spec& spec) {
  if (spec.argv.empty()) throw std::logic_error("spawn_child: no program");
  std::vector<std::string> args = spec.argv;
  std::vector<std::string> env = environment_with(spec.env);
  const std::vector<char*> argv = pointers_to(args);
  const std::vector<char*> envp = pointers_to(env);
  const std::string output = spec.output_file.string();
  const std::string dir = spec.working_dir.string();
  const int output_flags = O_WRONLY | O_CREAT | (spec.append_output ? O_APPEND : O_TRUNC);
  const pid_t parent = ::getpid();

  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child != 0) return child;

  if (spec.die_with_test) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The test died between fork and prctl: nobody would ever reap us.
    if (::getppid() != parent) ::_exit(127);
  }
  const int out =
      !output.empty() ? ::open(output.c_str(), output_flags, spec.output_mode) : spec.output_fd;
  if (out >= 0) {
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    if (out > STDERR_FILENO) ::close(out);
  }
  const int in = ::open("/dev/null", O_RDONLY);
  if (in >= 0) {
    ::dup2(in, STDIN_FILENO);
    if (in > STDERR_FILENO) ::close(in);
  }
  if (!dir.empty() && ::chdir(dir.c_str()) != 0) ::_exit(126);
  if (spec.run_as != 0 && (::setgroups(0, nullptr) != 0 || ::setgid(spec.run_as_group) != 0 ||
                           ::setuid(spec.run_as) != 0)) {
    ::_exit(126);
  }
  ::execve(argv[0], argv.data(), envp.data());
  ::_exit(127);
}

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace baton::testing
