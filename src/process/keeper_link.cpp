// keeper_link: the socket pair, the deadline line, SIGPIPE-free writes; and the
// path of our own executable, which the daemon re-executes as the keeper.
#include "keeper_link.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <utility>

#include "baton/keeper.hpp"
#include "close_fd.hpp"

namespace baton::process {

namespace {

// write() that cannot raise SIGPIPE, whatever the process's disposition:
// main() ignores SIGPIPE, but this library must not rely on it. A SIGPIPE is
// sent to the writing thread, so blocking it here and consuming the one our
// write raised leaves no trace.
ssize_t write_without_sigpipe(int fd, const char* data, std::size_t size) {
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigset_t pending;
  sigemptyset(&pending);
  ::sigpending(&pending);
  bool already_pending = sigismember(&pending, SIGPIPE) == 1;
  sigset_t old_mask;
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);
  ssize_t n = ::write(fd, data, size);
  int error = errno;
  if (n < 0 && error == EPIPE && !already_pending) {
    timespec zero{};
    while (::sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = error;
  return n;
}


}  // namespace

std::vector<std::string> keeper_argv(const std::string& program,
                                     const std::vector<std::string>& command,
                                     time_point trace_since, bool parked) {
  std::vector<std::string> argv{program, std::string(keeper_verb)};
  if (parked) argv.emplace_back(keeper_parked_flag);
  if (trace_since != time_point{}) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(trace_since.time_since_epoch());
    argv.insert(argv.end(), {std::string(keeper_trace_flag), std::to_string(ns.count())});
  }
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::string deadline_message(time_point deadline) {
  // steady_clock is CLOCK_MONOTONIC on Linux, which the keeper reads too.
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch());
  auto count = ns.count() < 0 ? 0 : ns.count();
  return "deadline " + std::to_string(count) + "\n";
}

std::string start_message(std::uint64_t token, const std::string& reason,
                          time_point trace_since) {
  std::int64_t trace_ns = 0;
  if (trace_since != time_point{}) {
    trace_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(trace_since.time_since_epoch())
                   .count();
  }
  return "start " + std::to_string(token) + " " + reason + " " + std::to_string(trace_ns) + "\n";
}

int open_start_pipe(int (&fds)[2]) {
  int raw[2];
  if (::pipe2(raw, O_CLOEXEC) != 0) return errno;
  for (int i = 0; i < 2; ++i) {
    // Descriptors 3 and 4 are where the keeper expects its pipes: a start
    // pipe numbered 3 would be overwritten while they are put in place.
    fds[i] = raw[i] >= 5 ? raw[i] : ::fcntl(raw[i], F_DUPFD_CLOEXEC, 5);
    if (fds[i] != raw[i]) ::close(raw[i]);
  }
  int flags = fds[1] >= 0 ? ::fcntl(fds[1], F_GETFL) : -1;
  if (fds[0] < 0 || flags < 0 || ::fcntl(fds[1], F_SETFL, flags | O_NONBLOCK) != 0) {
    int error = errno;
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
    return error;
  }
  return 0;
}

int write_lines(int fd, const std::string& line) {
  if (fd < 0) return EBADF;
  // Lines are far below PIPE_BUF, so a non-blocking write is all or nothing:
  // a full pipe never leaves half a line behind.
  static_assert(PIPE_BUF >= 512);
  if (line.size() > PIPE_BUF) return EINVAL;
  for (int attempt = 0; attempt < 3; ++attempt) {
    ssize_t n = write_without_sigpipe(fd, line.data(), line.size());
    if (n == static_cast<ssize_t>(line.size())) return 0;
    if (n < 0 && errno == EINTR) continue;
    return n < 0 ? errno : EAGAIN;
  }
  return EINTR;
}

const std::string& parked_keeper_program() {
  static const std::string path = [] {
    const std::string& self = self_executable_path();
    auto slash = self.rfind('/');
    if (slash != std::string::npos) {
      const std::string dir = self.substr(0, slash);
      for (const std::string& candidate :
           {dir + "/baton-keeper", dir + "/../libexec/baton/baton-keeper"}) {
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
      }
    }
    return self;
  }();
  return path;
}

keeper_link::keeper_link(keeper_link&& other) noexcept
    : keeper_fd_(std::exchange(other.keeper_fd_, -1)),
      daemon_fd_(std::exchange(other.daemon_fd_, -1)) {}

keeper_link& keeper_link::operator=(keeper_link&& other) noexcept {
  if (this != &other) {
    close_keeper_end();
    close();
    keeper_fd_ = std::exchange(other.keeper_fd_, -1);
    daemon_fd_ = std::exchange(other.daemon_fd_, -1);
  }
  return *this;
}

keeper_link::~keeper_link() {
  close_keeper_end();
  close();
}

int keeper_link::open() {
  close_keeper_end();
  close();
  // A socket pair rather than a pipe: the keeper reports the command's end
  // on the descriptor it reads its deadlines from.
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return errno;
  keeper_fd_ = fds[0];
  daemon_fd_ = fds[1];
  // Only our end: the keeper's stays blocking, as it expects.
  int flags = ::fcntl(daemon_fd_, F_GETFL);
  if (flags < 0 || ::fcntl(daemon_fd_, F_SETFL, flags | O_NONBLOCK) != 0) {
    int error = errno;
    close_keeper_end();
    close();
    return error;
  }
  return 0;
}

void keeper_link::close_keeper_end() { close_fd(keeper_fd_); }

int keeper_link::send_deadline(time_point deadline) {
  return write_lines(daemon_fd_, deadline_message(deadline));
}

void keeper_link::close() { close_fd(daemon_fd_); }

const std::string& self_executable_path() {
  static const std::string path = [] {
    char buffer[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer);
    if (n <= 0 || static_cast<std::size_t>(n) >= sizeof buffer) return std::string();
    return std::string(buffer, static_cast<std::size_t>(n));
  }();
  return path;
}

}  // namespace baton::process
