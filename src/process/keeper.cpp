// The keeper mode of the baton binary (see baton/keeper.hpp). Plain POSIX on
// purpose: no asio, no logging library, no threads. It waits for three events
// only — the child's exit (SIGCHLD through a signalfd), a line or end of file
// on descriptor 3, and the deadline (the ppoll timeout) — and every wake-up
// consumes the event that caused it, so it cannot spin.
//
// SIGTERM, SIGINT and SIGHUP are blocked and read from the signalfd, which
// makes the keeper immune to them: a stop signal to the process group reaches
// the child, and the keeper stays to report how the child ended.
#include "baton/keeper.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

extern char** environ;

namespace baton::process {

namespace {

constexpr int usage_error = 125;
constexpr int exec_error = 127;
// A deadline line is ~30 bytes; anything this long is not one of ours.
constexpr std::size_t max_message_bytes = 128;

// One line to stderr, unbuffered: it must be out before the SIGKILL.
void say(const std::string& text) {
  std::string line = "baton keeper: " + text + "\n";
  const char* data = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // stderr is gone: nothing else to tell
    data += n;
    left -= static_cast<std::size_t>(n);
  }
}

std::int64_t monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

bool is_stop_signal(int sig) { return sig == SIGTERM || sig == SIGINT || sig == SIGHUP; }

// Reads every pending signal off the signalfd. Returns the first stop signal
// among them (0 if none); SIGCHLD needs no record: the caller polls waitpid.
int drain_signals(int sfd) {
  int stop = 0;
  // Standard signals do not queue: at most one entry per signal is pending.
  for (int i = 0; i < 64; ++i) {
    signalfd_siginfo info{};
    ssize_t n = ::read(sfd, &info, sizeof info);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof info)) break;  // EAGAIN: drained
    int sig = static_cast<int>(info.ssi_signo);
    if (stop == 0 && is_stop_signal(sig)) stop = sig;
  }
  return stop;
}

// Dies of `sig`, as the child did, so the daemon's waitpid sees "killed by sig".
[[noreturn]] void die_by(int sig) {
  // The core would be the keeper's, not the app's: useless and misleading.
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
  // Unblock only this one: another pending signal (a group SIGTERM the keeper
  // has not read yet) must not take its place.
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::_exit(128 + sig);  // not reached for a signal whose default is to terminate
}

// Ends the keeper the way the child ended: the same exit code, or death by
// the same signal.
[[noreturn]] void exit_like(int wait_status) {
  if (WIFSIGNALED(wait_status)) die_by(WTERMSIG(wait_status));
  ::_exit(WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : usage_error);
}

[[noreturn]] void kill_group(const std::string& why, pid_t child) {
  pid_t group = ::getpgrp();
  say(why + "; killing the app (process group " + std::to_string(group) + ")");
  ::kill(-group, SIGKILL);
  // Only reached if the group kill could not include us, which it always does.
  ::kill(child, SIGKILL);
  ::_exit(128 + SIGKILL);
}

// Splits descriptor 3's byte stream into lines and keeps the latest deadline.
class message_reader {
 public:
  void feed(const char* data, std::size_t size, std::optional<std::int64_t>& deadline) {
    for (std::size_t i = 0; i < size; ++i) {
      char c = data[i];
      if (c != '\n') {
        if (line_.size() < max_message_bytes) {
          line_.push_back(c);
        } else {
          overlong_ = true;
        }
        continue;
      }
      if (!overlong_) apply(line_, deadline);
      line_.clear();
      overlong_ = false;
    }
  }

 private:
  static void apply(std::string_view line, std::optional<std::int64_t>& deadline) {
    constexpr std::string_view prefix = "deadline ";
    // Other lines are ignored, so a newer daemon may add messages.
    if (!line.starts_with(prefix)) return;
    line.remove_prefix(prefix.size());
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (ec != std::errc{} || end != line.data() + line.size() || value < 0) {
      say("ignoring a malformed deadline from the daemon");
      return;
    }
    deadline = value;
  }

  std::string line_;
  bool overlong_ = false;
};

// Starts the command in the keeper's own process group with default signal
// dispositions and an empty mask. Descriptors above 2 are all close-on-exec
// by now. Returns the pid, or -1 after telling why on stderr.
pid_t spawn_command(char** command) {
  posix_spawnattr_t attr;
  if (int rc = ::posix_spawnattr_init(&attr)) {
    say(std::string("cannot prepare the command: ") + std::strerror(rc));
    return -1;
  }
  sigset_t none;
  sigemptyset(&none);
  // Every bit, not sigfillset(): see spawn.cpp for glibc's reserved signals.
  sigset_t all;
  std::memset(&all, 0xff, sizeof all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  int rc = ::posix_spawnattr_setsigmask(&attr, &none);
  if (rc == 0) rc = ::posix_spawnattr_setsigdefault(&attr, &all);
  if (rc == 0) {
    rc = ::posix_spawnattr_setflags(
        &attr, static_cast<short>(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
  }
  pid_t pid = -1;
  // The new process starts with our mask (stop signals blocked), so a group
  // SIGTERM that reaches it before exec stays pending, and is delivered once
  // the empty mask applies: it is not lost.
  if (rc == 0) rc = ::posix_spawnp(&pid, command[0], nullptr, &attr, command, environ);
  ::posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    say(std::string("cannot execute ") + command[0] + ": " + std::strerror(rc));
    return -1;
  }
  return pid;
}

}  // namespace

int run_keeper(int argc, char** argv) {
  // Block the stop signals before anything else: from here on they are read,
  // never acted upon. (One arriving earlier kills the keeper before the
  // command exists, which is the right outcome of a stop.)
  sigset_t watched;
  sigemptyset(&watched);
  sigaddset(&watched, SIGTERM);
  sigaddset(&watched, SIGINT);
  sigaddset(&watched, SIGHUP);
  sigaddset(&watched, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &watched, nullptr);
  // A closed stderr must not kill the keeper while the app runs.
  ::signal(SIGPIPE, SIG_IGN);

  if (argc < 4 || std::string_view(argv[2]) != "--" || argv[3][0] == '\0') {
    say("internal mode of the baton daemon; usage: baton __keeper -- COMMAND [ARGS...]");
    return usage_error;
  }
  // It kills its whole process group: refuse to run inside somebody else's.
  if (::getpgrp() != ::getpid()) {
    say("must lead its own process group; it is started by the baton daemon only");
    return usage_error;
  }
  if (::fcntl(keeper_deadline_fd, F_GETFD) < 0) {
    say("descriptor 3 (the daemon's deadline pipe) is not open; it is started by the baton "
        "daemon only");
    return usage_error;
  }
  // Nothing of ours reaches the command: not the pipe, not the signalfd.
  if (::close_range(keeper_deadline_fd, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    ::fcntl(keeper_deadline_fd, F_SETFD, FD_CLOEXEC);
  }
  int sfd = ::signalfd(-1, &watched, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    say(std::string("cannot watch signals: ") + std::strerror(errno));
    return usage_error;
  }

  // Told to stop before the command even started: do not start it.
  if (int sig = drain_signals(sfd)) die_by(sig);

  pid_t child = spawn_command(argv + 3);
  if (child < 0) return exec_error;
  // A stop signal that came between the check above and the spawn reached
  // only us; pass it on. (One that came just after the spawn reached both,
  // so the child may see it twice: better than never.)
  if (int sig = drain_signals(sfd)) ::kill(child, sig);

  std::optional<std::int64_t> deadline;
  message_reader messages;
  bool pipe_open = true;
  for (;;) {
    int status = 0;
    pid_t reaped = ::waitpid(child, &status, WNOHANG);
    if (reaped == child) exit_like(status);
    if (reaped < 0 && errno != EINTR) {
      kill_group(std::string("lost track of the app (waitpid: ") + std::strerror(errno) + ")",
                 child);
    }
    if (!pipe_open) kill_group("the daemon is gone (its deadline pipe closed)", child);

    timespec wait{};
    timespec* timeout = nullptr;
    if (deadline) {
      std::int64_t left = *deadline - monotonic_ns();
      if (left <= 0) {
        kill_group("lease deadline passed with no renewal from the daemon", child);
      }
      wait.tv_sec = static_cast<time_t>(left / 1'000'000'000);
      wait.tv_nsec = static_cast<long>(left % 1'000'000'000);
      timeout = &wait;
    }
    pollfd fds[2] = {{sfd, POLLIN, 0}, {keeper_deadline_fd, POLLIN, 0}};
    int ready = ::ppoll(fds, 2, timeout, nullptr);
    if (ready < 0) {
      if (errno == EINTR) continue;
      kill_group(std::string("cannot wait (ppoll: ") + std::strerror(errno) + ")", child);
    }
    if (fds[0].revents != 0) {
      // Stop signals went to the whole group; the child acts on them.
      drain_signals(sfd);
      // Back to waitpid first: a child that exited as the daemon went away
      // is reported with its own status.
      continue;
    }
    if (fds[1].revents != 0) {
      char buffer[512];
      ssize_t n = ::read(keeper_deadline_fd, buffer, sizeof buffer);
      if (n > 0) {
        messages.feed(buffer, static_cast<std::size_t>(n), deadline);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        // End of file, or a descriptor that is no longer a pipe to the daemon.
        pipe_open = false;
      }
    }
  }
}

}  // namespace baton::process
