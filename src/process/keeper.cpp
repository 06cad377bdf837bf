// The keeper mode of the baton binary (see baton/keeper.hpp). Plain POSIX on
// purpose: no asio, no logging library, no threads. It waits for three events
// only — the child's exit (SIGCHLD through a signalfd), a line or end of file
// on descriptor 3, and the deadline (the ppoll timeout) — and every wake-up
// consumes the event that caused it, so it cannot spin.
//
// SIGTERM, SIGINT and SIGHUP are blocked and read from the signalfd, which
// makes the keeper immune to them: a stop signal to the process group reaches
// the child, and the keeper stays to report how the child ended.
//
// The child must get a stop signal exactly once, even one the daemon sends to
// the group while the command is being started: never lost, and never twice
// (many apps take a second SIGTERM or SIGINT as "quit now, skip the cleanup").
// One sent before the fork reaches only the keeper, which must pass it on;
// one sent after reaches both, and the child already has it. The keeper
// cannot tell the two apart by itself, so the child waits, stop signals
// blocked, until the keeper has drained its signalfd and "released" it with
// the set of stop signals it took; the child then re-raises only those it does
// not have pending itself, and execs with an empty mask. Any group signal
// after the release reaches the (already released) child directly.
#include "baton/keeper.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
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

#include "baton/private_memory.hpp"
#include "signal_safe_text.hpp"

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

// The signals whose arrival means "stop the app".
constexpr int stop_signals[] = {SIGTERM, SIGINT, SIGHUP};

// A set of stop signals: bit `sig` for signal number `sig` (all below 32).
using signal_bits = std::uint32_t;

constexpr signal_bits bit(int sig) { return signal_bits{1} << sig; }

bool is_stop_signal(int sig) {
  for (int stop : stop_signals) {
    if (sig == stop) return true;
  }
  return false;
}

// The lowest-numbered stop signal in `set` (0 if none): the one signalfd
// would have handed out first.
int first_of(signal_bits set) {
  for (int sig = 1; sig < 32; ++sig) {
    if ((set & bit(sig)) != 0) return sig;
  }
  return 0;
}

// Reads every pending signal off the signalfd. Returns the stop signals among
// them; SIGCHLD needs no record: the caller polls waitpid.
signal_bits drain_signals(int sfd) {
  signal_bits stops = 0;
  // Standard signals do not queue: at most one entry per signal is pending.
  for (int i = 0; i < 64; ++i) {
    signalfd_siginfo info{};
    ssize_t n = ::read(sfd, &info, sizeof info);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof info)) break;  // EAGAIN: drained
    int sig = static_cast<int>(info.ssi_signo);
    if (is_stop_signal(sig)) stops |= bit(sig);
  }
  return stops;
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

// Tells the daemon on descriptor 3 how the command ended (see
// keeper_exited_report), the moment it is reaped: the daemon need not wait
// for the keeper's exit and its SIGCHLD. Never blocks: a daemon that does not
// read (frozen, or gone) must not hold the keeper, which exits right after
// either way. On a plain pipe (an older daemon's) send() fails: nothing lost.
void report_end(int wait_status) {
  char line[32];
  std::size_t used = 0;
  const bool killed = WIFSIGNALED(wait_status);
  const std::string_view word = killed ? keeper_killed_report : keeper_exited_report;
  for (char c : word) line[used++] = c;
  line[used++] = ' ';
  const int value = killed ? WTERMSIG(wait_status)
                           : (WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : usage_error);
  auto [end, ec] = std::to_chars(line + used, line + sizeof line - 1, value);
  if (ec != std::errc{}) return;
  used = static_cast<std::size_t>(end - line);
  line[used++] = '\n';
  while (::send(keeper_deadline_fd, line, used, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
         errno == EINTR) {
  }
}

[[noreturn]] void kill_group(const std::string& why, pid_t child) {
  pid_t group = ::getpgrp();
  say(why + "; killing the app (process group " + std::to_string(group) + ")");
  ::kill(-group, SIGKILL);
  // Only reached if the group kill could not include us, which it always does.
  ::kill(child, SIGKILL);
  ::_exit(128 + SIGKILL);
}

// What a parked keeper's command is told when the lease is won.
struct term_start {
  std::uint64_t token = 0;
  std::int64_t trace_since = 0;  // 0: no timing line
  char reason[48] = {};          // BATON_REASON's value, NUL-terminated
};

// Parses "start <token> <reason> <trace_ns>" (without the newline).
// Async-signal-safe: the parked command's process runs it.
bool parse_start_line(std::string_view line, term_start& start) {
  constexpr std::string_view prefix = "start ";
  if (!line.starts_with(prefix)) return false;
  std::string_view rest = line.substr(prefix.size());
  std::string_view fields[3];
  for (auto& field : fields) {
    auto space = rest.find(' ');
    field = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  auto number = [](std::string_view text, auto& value) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc{} && end == text.data() + text.size();
  };
  term_start parsed;
  if (!number(fields[0], parsed.token) || fields[1].empty() ||
      fields[1].size() >= sizeof parsed.reason || !number(fields[2], parsed.trace_since) ||
      parsed.trace_since < 0 || !rest.empty()) {
    return false;
  }
  fields[1].copy(parsed.reason, fields[1].size());
  start = parsed;
  return true;
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

// "baton keeper: takeover timing: command exec'd <N>us after the acquire was
// sent (at monotonic <ns> ns)", written by the command's process right before
// its exec: the moment on the clock the app's own timestamps can use, so
// that a bench can split the exec from the app's start. Async-signal-safe:
// no allocation, one write.
void say_exec_timing(std::int64_t now_ns, std::int64_t sent_ns) {
  char line[160];
  std::size_t used = 0;
  append(line, sizeof line - 1, used, "baton keeper: takeover timing: command exec'd ");
  append_number(line, sizeof line - 1, used, (now_ns - sent_ns) / 1000);
  append(line, sizeof line - 1, used, "us after the acquire was sent (at monotonic ");
  append_number(line, sizeof line - 1, used, sent_ns);
  append(line, sizeof line - 1, used, " ns)");
  line[used++] = '\n';
  write_all(STDERR_FILENO, line, used);
}

// The forked child, until it becomes the command. The keeper is single-
// threaded, so nothing here can meet a lock held by another thread at fork;
// the calls are still kept to async-signal-safe ones (execvp and strerror
// aside, which glibc implements without locks or allocation for this use).

// Sets BATON_TOKEN and BATON_REASON for a command that was forked before its
// term was known (a parked keeper's). The keeper is single-threaded, so its
// forked copy may use putenv; the entries live in static storage.
void apply_term(const term_start& term) {
  static char token_entry[48];
  static char reason_entry[64];
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits - 1, term.token);
  *end = '\0';
  ::putenv(environment_entry(token_entry, sizeof token_entry, "BATON_TOKEN",
                             ec == std::errc{} ? digits : "0"));
  ::putenv(environment_entry(reason_entry, sizeof reason_entry, "BATON_REASON", term.reason));
}

// The stop signals the keeper passes on, read from the release pipe.
signal_bits wait_for_release(int release_fd) {
  // Stop signals are still blocked (the keeper's mask): a group signal that
  // arrives now stays pending here, and the keeper will know it need not
  // pass its own copy on.
  signal_bits passed_on = 0;
  auto* bytes = reinterpret_cast<char*>(&passed_on);
  std::size_t got = 0;
  while (got < sizeof passed_on) {
    ssize_t n = ::read(release_fd, bytes + got, sizeof passed_on - got);
    if (n < 0 && errno == EINTR) continue;
    // The keeper died before releasing us: nothing would supervise the
    // command, so it does not run.
    if (n <= 0) ::_exit(usage_error);
    got += static_cast<std::size_t>(n);
  }
  ::close(release_fd);
  return passed_on;
}

// A parked command's process: waits for the daemon's start line on the start
// descriptor (the lease is won) and takes the term from it. Written by the
// daemon itself, so winning costs this one wake-up and the exec.
term_start wait_for_start(int start_fd) {
  char line[max_message_bytes];
  std::size_t used = 0;
  for (;;) {
    ssize_t n = ::read(start_fd, line + used, 1);
    if (n < 0 && errno == EINTR) continue;
    // The daemon gave the term up (or is gone): the command never runs.
    if (n <= 0) ::_exit(0);
    if (line[used] == '\n') break;
    if (++used == sizeof line) {
      say("the start line from the daemon is too long; the command does not run");
      ::_exit(usage_error);
    }
  }
  ::close(start_fd);
  term_start term;
  if (!parse_start_line(std::string_view(line, used), term)) {
    say("malformed start line from the daemon; the command does not run");
    ::_exit(usage_error);
  }
  return term;
}

[[noreturn]] void run_command_when_released(char** command, int release_fd, int start_fd,
                                            std::int64_t trace_since) {
  signal_bits passed_on = 0;
  if (start_fd >= 0) {
    // Parked: forked right after the keeper drained its stop signals, so a
    // group signal since then has reached us too; nothing to pass on.
    term_start term = wait_for_start(start_fd);
    apply_term(term);
    if (term.trace_since > 0) trace_since = term.trace_since;
  } else {
    passed_on = wait_for_release(release_fd);
  }

  // Signals the keeper took before we existed, unless we got our own copy
  // since (it arrived after the fork): pending ones of a kind do not add up,
  // so the command sees each stop exactly once.
  sigset_t pending;
  sigemptyset(&pending);
  ::sigpending(&pending);
  for (int sig : stop_signals) {
    if ((passed_on & bit(sig)) != 0 && sigismember(&pending, sig) == 0) ::kill(::getpid(), sig);
  }

  // A clean slate for the command: SIG_IGN (SIGPIPE here) would survive exec.
  // glibc refuses its two reserved signals (32, 33); the daemon started us
  // with those at their defaults already.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &default_action, nullptr);
  }
  // Pending stop signals are delivered here or right after exec: to the
  // command's defaults either way, as for any signal that beats its handlers.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  if (trace_since > 0) say_exec_timing(monotonic_ns(), trace_since);
  ::execvp(command[0], command);
  int error = errno;
  // The line the daemon and its tests know, on the stderr we share.
  char line[4352];
  std::size_t used = 0;
  append(line, sizeof line - 1, used, "baton keeper: cannot execute ");
  append(line, sizeof line - 1, used, command[0]);
  append(line, sizeof line - 1, used, ": ");
  append(line, sizeof line - 1, used, std::strerror(error));
  line[used++] = '\n';
  write_all(STDERR_FILENO, line, used);
  ::_exit(exec_error);
}

// Forks the command's process in the keeper's own process group. It waits,
// stop signals blocked, until release_command() or, when parked, until the
// daemon's start line on `start_fd`. Descriptors above 2 are all
// close-on-exec by now. Returns the pid and the release pipe's write end in
// `release_fd` (-1 when parked), or -1 after telling why on stderr.
pid_t fork_command(char** command, int start_fd, std::int64_t trace_since, int& release_fd) {
  int release[2] = {-1, -1};
  if (start_fd < 0 && ::pipe2(release, O_CLOEXEC) != 0) {
    say(std::string("cannot execute ") + command[0] + ": " + std::strerror(errno));
    return -1;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    // Without the write end, the keeper's death reads as end of file.
    if (release[1] >= 0) ::close(release[1]);
    run_command_when_released(command, release[0], start_fd, trace_since);
  }
  int fork_error = errno;
  if (release[0] >= 0) ::close(release[0]);
  if (pid < 0) {
    if (release[1] >= 0) ::close(release[1]);
    say(std::string("cannot execute ") + command[0] + ": " + std::strerror(fork_error));
    return -1;
  }
  release_fd = release[1];
  return pid;
}

// Lets the forked command exec, with default signal dispositions and an
// empty mask, passing on the stop signals that reached only the keeper (see
// the top of the file).
void release_command(int release_fd, int sfd) {
  // Everything that reached the keeper up to now. The child re-raises only
  // what it lacks, so reading first and the child checking after is the
  // safe order: a signal in between reaches the child, which then has it.
  signal_bits stops = drain_signals(sfd);
  // A child that is already gone (the group was SIGKILLed) makes this fail
  // with EPIPE (SIGPIPE is ignored): the main loop reaps it.
  write_all(release_fd, &stops, sizeof stops);
  ::close(release_fd);
}

}  // namespace

int run_keeper(int argc, char** argv) {
  // A keeper forked from the daemon shares its memory image (the store's
  // password among it); an exec'd one does not, but is kept the same way so
  // that both modes show the app the same thing (baton/private_memory.hpp).
  keep_memory_private();
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

  int first = 2;  // argv[first] is "--"
  std::int64_t trace_since = 0;
  bool parked = false;
  while (first < argc) {
    std::string_view flag(argv[first]);
    if (flag == keeper_parked_flag) {
      parked = true;
      ++first;
    } else if (flag == keeper_trace_flag && first + 1 < argc) {
      std::string_view text(argv[first + 1]);
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), trace_since);
      if (ec != std::errc{} || end != text.data() + text.size() || trace_since <= 0) {
        say("--trace-since wants a CLOCK_MONOTONIC time in nanoseconds");
        return usage_error;
      }
      first += 2;
    } else {
      break;
    }
  }
  if (argc < first + 2 || std::string_view(argv[first]) != "--" || argv[first + 1][0] == '\0') {
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
  if (int sig = first_of(drain_signals(sfd))) die_by(sig);

  if (parked && ::fcntl(keeper_start_fd, F_GETFD) < 0) {
    say("--parked needs descriptor 4 (the daemon's start pipe); it is started by the baton "
        "daemon only");
    return usage_error;
  }
  int release_fd = -1;
  pid_t child = fork_command(argv + first + 1, parked ? keeper_start_fd : -1, trace_since,
                             release_fd);
  if (child < 0) return exec_error;
  if (parked) {
    // Only the waiting command reads the start pipe.
    ::close(keeper_start_fd);
    // A stop signal that reached only us (it came before the fork) would
    // not reach the command: when in doubt, nothing runs.
    if (int sig = first_of(drain_signals(sfd))) {
      ::kill(child, SIGKILL);
      die_by(sig);
    }
  } else {
    release_command(release_fd, sfd);
  }

  std::optional<std::int64_t> deadline;
  message_reader messages;
  bool pipe_open = true;
  for (;;) {
    int status = 0;
    pid_t reaped = ::waitpid(child, &status, WNOHANG);
    if (reaped == child) {
      report_end(status);
      exit_like(status);
    }
    if (reaped < 0 && errno != EINTR) {
      kill_group(std::string("lost track of the app (waitpid: ") + std::strerror(errno) + ")",
                 child);
    }
    if (!pipe_open) {
      // Parked and never given a deadline: the daemon gave this term up
      // (or is gone) before winning it; the command never ran. Quietly.
      if (parked && !deadline) {
        ::kill(child, SIGKILL);
        ::_exit(0);
      }
      kill_group("the daemon is gone (its deadline pipe closed)", child);
    }

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
    // The daemon's lines first: a started command's deadline comes before
    // any stop signal the daemon sends it.
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
    if (fds[0].revents != 0) {
      // Stop signals went to the whole group; the child acts on them.
      const signal_bits stops = drain_signals(sfd);
      // Still parked (never given a deadline): the command waits with stop
      // signals blocked and would not act on them. Nothing of it runs.
      if (parked && !deadline && first_of(stops) != 0) {
        ::kill(child, SIGKILL);
        die_by(first_of(stops));
      }
      // Back to waitpid first: a child that exited as the daemon went away
      // is reported with its own status.
    }
  }
}

}  // namespace baton::process
