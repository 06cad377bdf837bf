// posix_spawn-based process start. glibc's posix_spawn uses a vfork-style
// clone and returns the exec errno to the parent, so no self-pipe is needed,
// and the process group is set before the parent resumes: the caller can
// signal the group as soon as it has the pid.
#include "spawn.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace baton::process {

namespace {

// RAII for the two posix_spawn attribute objects, so every return path frees them.
struct spawn_attributes {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attr{};
  bool actions_ok = false;
  bool attr_ok = false;
  spawn_attributes() {
    actions_ok = posix_spawn_file_actions_init(&actions) == 0;
    attr_ok = posix_spawnattr_init(&attr) == 0;
  }
  ~spawn_attributes() {
    if (actions_ok) posix_spawn_file_actions_destroy(&actions);
    if (attr_ok) posix_spawnattr_destroy(&attr);
  }
  spawn_attributes(const spawn_attributes&) = delete;
  spawn_attributes& operator=(const spawn_attributes&) = delete;
};


int configure(spawn_attributes& a, const spawn_request& request) {
  if (!a.actions_ok || !a.attr_ok) return ENOMEM;
  if (request.stdout_fd >= 0) {
    if (int rc = posix_spawn_file_actions_adddup2(&a.actions, request.stdout_fd, STDOUT_FILENO))
      return rc;
  }
  if (request.stderr_fd >= 0) {
    if (int rc = posix_spawn_file_actions_adddup2(&a.actions, request.stderr_fd, STDERR_FILENO))
      return rc;
  }
  int first_closed = 3;
  if (request.keep_fd > STDERR_FILENO) {
    // dup2 onto itself (keep_fd == 3) clears close-on-exec in glibc, as POSIX asks.
    if (int rc = posix_spawn_file_actions_adddup2(&a.actions, request.keep_fd, 3)) return rc;
    first_closed = 4;
    if (request.start_fd > STDERR_FILENO) {
      // dup2 onto 3 above would have replaced it.
      if (request.start_fd == 3) return EINVAL;
      if (int rc = posix_spawn_file_actions_adddup2(&a.actions, request.start_fd, 4)) return rc;
      first_closed = 5;
    }
  }
  // Whatever the daemon (or a library in it) opened without O_CLOEXEC stays
  // out of the app: Redis sockets, the app socket, the pipe ends.
  if (int rc = posix_spawn_file_actions_addclosefrom_np(&a.actions, first_closed)) return rc;

  // The daemon handles signals through asio and may block some; the app must
  // start with a clean slate. SIG_IGN (e.g. SIGPIPE) would otherwise survive exec.
  sigset_t none;
  sigemptyset(&none);
  // Every bit set, not sigfillset(): glibc's sigfillset leaves out the two
  // signals it reserves (32, 33), and its posix_spawn then sets those to
  // SIG_IGN in the child, which exec would carry into the app.
  sigset_t all;
  std::memset(&all, 0xff, sizeof all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  if (int rc = posix_spawnattr_setsigmask(&a.attr, &none)) return rc;
  if (int rc = posix_spawnattr_setsigdefault(&a.attr, &all)) return rc;
  // pgroup 0: a new group whose id is the child's pid.
  if (int rc = posix_spawnattr_setpgroup(&a.attr, 0)) return rc;
  return posix_spawnattr_setflags(
      &a.attr, static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                  POSIX_SPAWN_SETSIGDEF));
}

}  // namespace

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  // exec and posix_spawn take char* const[] for historical reasons; they do not write.
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

spawn_result spawn_process(const spawn_request& request) {
  spawn_result result;
  if (request.argv.empty() || request.argv.front().empty()) {
    result.error = ENOENT;
    return result;
  }
  spawn_attributes a;
  if (int rc = configure(a, request)) {
    result.error = rc;
    return result;
  }
  auto argv = c_strings(request.argv);
  auto envp = c_strings(request.env);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv.front(), &a.actions, &a.attr, argv.data(), envp.data());
  if (rc != 0) {
    result.error = rc;
    return result;
  }
  result.pid = pid;
  return result;
}

namespace {

// 0 if `path` is a regular file we may execute, else the errno exec would give.
int executable_error(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno;
  if (!S_ISREG(st.st_mode)) return EACCES;  // what execve says of a directory
  if (::access(path.c_str(), X_OK) != 0) return errno;
  return 0;
}

}  // namespace

int find_executable(const std::string& argv0, const std::vector<std::string>& env) {
  if (argv0.empty()) return ENOENT;
  if (argv0.find('/') != std::string::npos) return executable_error(argv0);
  std::string_view path = "/bin:/usr/bin";  // glibc's execvp default
  for (const auto& entry : env) {
    if (entry.rfind("PATH=", 0) == 0) path = std::string_view(entry).substr(5);
  }
  // Like execvp: the first hit wins; EACCES anywhere beats ENOENT at the end.
  bool denied = false;
  while (true) {
    auto colon = path.find(':');
    std::string_view dir = path.substr(0, colon);
    std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + argv0;
    int error = executable_error(candidate);
    if (error == 0) return 0;
    if (error == EACCES) denied = true;
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  return denied ? EACCES : ENOENT;
}

std::string spawn_error_message(const std::vector<std::string>& argv, int error) {
  std::string what = argv.empty() || argv.front().empty() ? std::string("(empty command)")
                                                          : argv.front();
  return "cannot execute " + what + ": " + std::strerror(error);
}

}  // namespace baton::process
