// Process management for integration tests: spawning baton in its own process
// group, observing its exit without reaping it early, and a blocking Unix
// socket client with a deadline.

#include "support/baton_process.hpp"
#include "support/errno_error.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <system_error>
#include <thread>

extern char** environ;

namespace baton::testing {
namespace {

using clock_type = std::chrono::steady_clock;

// Milliseconds left until `deadline`, rounded up, for poll(); 0 if past.
int poll_ms_until(clock_type::time_point deadline) {
  const auto left = deadline - clock_type::now();
  if (left <= clock_type::duration::zero()) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<long long>(ms, 60'000));
}

// Bytes of `path` from `offset` on ("" if unreadable).
std::string read_from(const std::filesystem::path& path, std::size_t offset) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  std::array<char, 16 * 1024> buffer{};
  for (;;) {
    const ssize_t n =
        ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(offset + text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

// RAII for the posix_spawn attribute objects.
struct spawn_setup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attr{};
  spawn_setup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~spawn_setup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  spawn_setup(const spawn_setup&) = delete;
  spawn_setup& operator=(const spawn_setup&) = delete;
};

}  // namespace

std::filesystem::path baton_binary() { return BATON_BINARY; }
std::filesystem::path test_worker_binary() { return BATON_TEST_WORKER; }

temp_dir::temp_dir(std::string_view prefix) {
  // A long $TMPDIR would push socket paths past the 107-byte limit.
  const char* env_tmp = std::getenv("TMPDIR");
  const std::string base = env_tmp != nullptr && *env_tmp != '\0' && std::strlen(env_tmp) <= 48
                               ? std::string(env_tmp)
                               : std::string("/tmp");
  std::string pattern = base + "/" + std::string(prefix) + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw errno_error(errno, "mkdtemp " + pattern);
  }
  path_ = pattern;
}

temp_dir::~temp_dir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

baton_process::baton_process(std::vector<std::string> args, env_list env,
                             std::filesystem::path log_file)
    : log_file_(std::move(log_file)) {
  spawn(baton_binary(), std::move(args), std::move(env));
}

baton_process baton_process::start(const std::filesystem::path& program,
                                   std::vector<std::string> args, env_list env,
                                   std::filesystem::path log_file) {
  baton_process process;
  process.log_file_ = std::move(log_file);
  process.spawn(program, std::move(args), std::move(env));
  return process;
}

void baton_process::spawn(const std::filesystem::path& program, std::vector<std::string> args,
                          env_list env) {
  // Everything exec needs is built before spawning: nothing is allocated in
  // the child.
  std::vector<std::string> argv_text;
  argv_text.push_back(program.string());
  for (auto& arg : args) argv_text.push_back(std::move(arg));
  std::vector<char*> argv;
  for (auto& arg : argv_text) argv.push_back(arg.data());
  argv.push_back(nullptr);

  std::set<std::string> overridden;
  for (const auto& [name, value] : env) overridden.insert(name);
  std::vector<std::string> env_text;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    if (!overridden.contains(std::string(text.substr(0, text.find('='))))) {
      env_text.emplace_back(text);
    }
  }
  for (const auto& [name, value] : env) env_text.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : env_text) envp.push_back(entry.data());
  envp.push_back(nullptr);

  spawn_setup setup;
  posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&setup.actions, STDOUT_FILENO, log_file_.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&setup.actions, STDOUT_FILENO, STDERR_FILENO);
  // Descriptors the test process happens to hold (other daemons' pipes,
  // sockets) must not leak into the daemon.
  posix_spawn_file_actions_addclosefrom_np(&setup.actions, 3);

  // Own process group; clean signal mask and default dispositions, whatever
  // the test runner set up.
  sigset_t empty;
  sigemptyset(&empty);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (const int sig : {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2,
                        SIGCHLD}) {
    sigaddset(&defaults, sig);
  }
  posix_spawnattr_setpgroup(&setup.attr, 0);
  posix_spawnattr_setsigmask(&setup.attr, &empty);
  posix_spawnattr_setsigdefault(&setup.attr, &defaults);
  posix_spawnattr_setflags(&setup.attr, static_cast<short>(POSIX_SPAWN_SETPGROUP |
                                                           POSIX_SPAWN_SETSIGMASK |
                                                           POSIX_SPAWN_SETSIGDEF));

  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, argv_text[0].c_str(), &setup.actions, &setup.attr, argv.data(), envp.data());
  if (rc != 0) throw errno_error(rc, "cannot start " + program.string());
  pid_ = pid;
  // Without pidfd support, wait_exit falls back to polling. The raw syscall:
  // glibc 2.36's <sys/pidfd.h> lacks extern "C" and so cannot link from C++.
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
}

baton_process::baton_process(baton_process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::exchange(other.pidfd_, -1)),
      exit_status_(other.exit_status_),
      reaped_(other.reaped_),
      log_file_(std::move(other.log_file_)) {}

baton_process::~baton_process() {
  if (pidfd_ >= 0) ::close(pidfd_);
  if (pid_ <= 0 || reaped_) return;
  // The daemon is not reaped yet, so its pid, and with it the group id, are
  // still ours: nothing else can be hit. The direct kill covers a daemon that
  // left its group.
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

bool baton_process::signal(int sig) const {
  return pid_ > 0 && !reaped_ && ::kill(pid_, sig) == 0;
}

bool baton_process::signal_group(int sig) const {
  return pid_ > 0 && !reaped_ && ::kill(-pid_, sig) == 0;
}

std::optional<int> baton_process::wait_exit(std::chrono::milliseconds timeout) {
  if (exit_status_ || pid_ <= 0) return exit_status_;
  const auto deadline = clock_type::now() + timeout;
  for (;;) {
    siginfo_t info{};
    // WNOWAIT: note the exit but leave the zombie, which keeps the pid and
    // group id reserved until the destructor.
    const int rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) {
      // ECHILD: someone else reaped it (SIGCHLD ignored); the status is lost.
      reaped_ = true;
      exit_status_ = -1;
      return exit_status_;
    }
    if (info.si_pid == pid_) {
      exit_status_ = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
      return exit_status_;
    }
    const int wait_ms = poll_ms_until(deadline);
    if (wait_ms == 0) return std::nullopt;
    if (pidfd_ >= 0) {
      pollfd pfd{pidfd_, POLLIN, 0};
      ::poll(&pfd, 1, wait_ms);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(wait_ms, 5)));
    }
  }
}

std::string baton_process::log_text() const { return read_from(log_file_, 0); }

bool baton_process::wait_for_log(std::string_view needle, std::chrono::milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  // Only the text appended since the last look is searched, plus enough of
  // the old tail to catch a needle that straddles the boundary.
  std::size_t searched = 0;
  std::string tail;
  for (;;) {
    // Checked before reading: whatever a dead daemon wrote is in the file now.
    const bool gone = exited();
    std::string fresh = read_from(log_file_, searched);
    searched += fresh.size();
    tail += fresh;
    if (tail.find(needle) != std::string::npos) return true;
    if (tail.size() > needle.size()) tail.erase(0, tail.size() - needle.size());
    if (gone || clock_type::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::optional<std::string> socket_request(const std::filesystem::path& path,
                                          std::string_view json_line,
                                          std::chrono::milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path_text = path.string();
  if (path_text.empty() || path_text.size() >= sizeof(address.sun_path)) return std::nullopt;
  std::memcpy(address.sun_path, path_text.data(), path_text.size());

  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return std::nullopt;
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } close_on_return{fd};

  // A Unix-socket connect completes at once, or fails with EAGAIN while the
  // listener's backlog is full: retry that until the deadline.
  for (;;) {
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) break;
    if (errno == EINTR) continue;
    if (errno != EAGAIN || poll_ms_until(deadline) == 0) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  std::string request(json_line);
  if (request.empty() || request.back() != '\n') request += '\n';
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return std::nullopt;
    pollfd pfd{fd, POLLOUT, 0};
    const int wait_ms = poll_ms_until(deadline);
    if (wait_ms == 0 || ::poll(&pfd, 1, wait_ms) <= 0) return std::nullopt;
  }

  std::string reply;
  std::array<char, 4096> buffer{};
  for (;;) {
    const auto newline = reply.find('\n');
    if (newline != std::string::npos) return reply.substr(0, newline);
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n > 0) {
      reply.append(buffer.data(), static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return std::nullopt;  // closed before a whole line
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return std::nullopt;
    pollfd pfd{fd, POLLIN, 0};
    const int wait_ms = poll_ms_until(deadline);
    if (wait_ms == 0 || ::poll(&pfd, 1, wait_ms) <= 0) return std::nullopt;
  }
}

}  // namespace baton::testing
