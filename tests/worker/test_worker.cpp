// test_worker: the app that integration tests put under baton's supervision.
//
// It records what it does, not what anyone tells it: every line it appends to
// the event log is `<CLOCK_MONOTONIC ns> <name> <pid> <event>[ details]`, where
// event is `start`, `env`, `tick` (one unit of "work"), `term` (SIGTERM seen),
// `stop` (graceful end) or `exit` (ended by itself). Several workers share one
// log; each line is a single write() on an O_APPEND descriptor, so lines from
// concurrent writers never interleave, and CLOCK_MONOTONIC is one clock for the
// whole host, so timestamps from different workers compare directly. The test
// side of this format lives in tests/support/event_log.hpp.
//
// Signals are taken synchronously (SIGTERM blocked, collected with
// sigtimedwait between ticks), so no handler runs in the middle of a write.
//
// Usage: test_worker --log FILE --name NAME [--tick-ms 5] [--ignore-term]
//                    [--term-delay-ms N] [--exit-after-ms N] [--exit-code C]
// Exit codes: 0 after SIGTERM, --exit-code after --exit-after-ms, 1 when the
// log cannot be written, 2 on bad arguments, 124 after the one-hour safety net.

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "event_writer.hpp"

using baton::testing::env_word;
using baton::testing::event_writer;
using baton::testing::exit_log_failed;
using baton::testing::now_ns;

namespace {

constexpr std::int64_t ns_per_ms = 1'000'000;
/// The worker never outlives this, even if nobody ever signals it.
constexpr std::int64_t safety_limit_ns = 3600LL * 1000 * ns_per_ms;
constexpr int exit_bad_args = 2;
constexpr int exit_safety_net = 124;

struct options {
  std::string log_path;
  std::string name;
  std::int64_t tick_ms = 5;
  bool ignore_term = false;
  std::int64_t term_delay_ms = 0;
  std::optional<std::int64_t> exit_after_ms;
  int exit_code = 0;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "test_worker: %s\n"
               "usage: test_worker --log FILE --name NAME [--tick-ms 5] [--ignore-term]\n"
               "                   [--term-delay-ms N] [--exit-after-ms N] [--exit-code C]\n",
               message.c_str());
  std::exit(exit_bad_args);
}

std::int64_t parse_int(std::string_view flag, std::string_view text, std::int64_t min,
                       std::int64_t max) {
  std::int64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr != end || value < min || value > max) {
    usage_error(std::string(flag) + " wants an integer in [" + std::to_string(min) + ", " +
                std::to_string(max) + "], got '" + std::string(text) + "'");
  }
  return value;
}

// Names go into a whitespace-separated log, so they must be one plain word.
bool plain_word(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (c <= ' ' || c == 0x7f) return false;
  }
  return true;
}

options parse_args(int argc, char** argv) {
  options opts;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) usage_error(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--log") {
      opts.log_path = std::string(value());
    } else if (arg == "--name") {
      opts.name = std::string(value());
    } else if (arg == "--tick-ms") {
      opts.tick_ms = parse_int(arg, value(), 1, 60'000);
    } else if (arg == "--ignore-term") {
      opts.ignore_term = true;
    } else if (arg == "--term-delay-ms") {
      opts.term_delay_ms = parse_int(arg, value(), 0, 3'600'000);
    } else if (arg == "--exit-after-ms") {
      opts.exit_after_ms = parse_int(arg, value(), 0, 3'600'000);
    } else if (arg == "--exit-code") {
      opts.exit_code = static_cast<int>(parse_int(arg, value(), 0, 255));
    } else {
      usage_error("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (opts.log_path.empty()) usage_error("--log is required");
  if (!plain_word(opts.name)) usage_error("--name is required and must be one word");
  return opts;
}

// Block SIGTERM (to be collected by sigtimedwait) after resetting whatever
// disposition and mask the parent left us, so an inherited SIG_IGN cannot make
// the worker deaf.
sigset_t take_over_sigterm() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGTERM, &dfl, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_SETMASK, &set, nullptr);
  return set;
}

// Wait until `deadline_ns` or SIGTERM, whichever comes first; true on SIGTERM.
bool wait_until(const sigset_t& set, std::int64_t deadline_ns) {
  for (;;) {
    const std::int64_t left = deadline_ns - now_ns();
    if (left <= 0) return false;
    timespec timeout{};
    timeout.tv_sec = static_cast<time_t>(left / 1'000'000'000);
    timeout.tv_nsec = static_cast<long>(left % 1'000'000'000);
    const int sig = sigtimedwait(&set, nullptr, &timeout);
    if (sig == SIGTERM) return true;
    if (sig < 0 && errno == EAGAIN) return false;
    // EINTR (a stop/continue, or an unrelated handler): recompute and wait again.
  }
}

}  // namespace

int main(int argc, char** argv) {
  const options opts = parse_args(argc, argv);
  const sigset_t term_set = take_over_sigterm();

  const int fd = ::open(opts.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "test_worker: cannot open %s: %s\n", opts.log_path.c_str(),
                 std::strerror(errno));
    return exit_log_failed;
  }
  event_writer log(fd, opts.name, "test_worker");

  const std::int64_t started = now_ns();
  log.write_event("start");
  log.write_event("env token=" + env_word("BATON_TOKEN") + " node=" + env_word("BATON_NODE_ID"));

  const std::int64_t tick_ns = opts.tick_ms * ns_per_ms;
  const std::int64_t safety_at = started + safety_limit_ns;
  const std::optional<std::int64_t> exit_at =
      opts.exit_after_ms ? std::optional(started + *opts.exit_after_ms * ns_per_ms) : std::nullopt;
  std::optional<std::int64_t> stop_at;
  // Ticks are scheduled on a fixed grid from the start, so a slow tick does not
  // push every later tick back.
  std::int64_t next_tick = started + tick_ns;

  for (;;) {
    std::int64_t deadline = std::min(next_tick, safety_at);
    if (exit_at) deadline = std::min(deadline, *exit_at);
    if (stop_at) deadline = std::min(deadline, *stop_at);

    if (wait_until(term_set, deadline)) {
      log.write_event("term");
      if (!opts.ignore_term && !stop_at) stop_at = now_ns() + opts.term_delay_ms * ns_per_ms;
      continue;
    }

    const std::int64_t now = now_ns();
    if (exit_at && now >= *exit_at) {
      log.write_event("exit code=" + std::to_string(opts.exit_code));
      return opts.exit_code;
    }
    if (stop_at && now >= *stop_at) {
      log.write_event("stop");
      return 0;
    }
    if (now >= safety_at) {
      log.write_event("exit safety-net");
      return exit_safety_net;
    }
    if (now >= next_tick) {
      log.write_event("tick");
      next_tick += tick_ns;
      // After a long stall (SIGSTOP, overloaded box) skip the missed slots
      // rather than writing a burst of ticks that no work stood behind.
      if (next_tick <= now) next_tick = now + tick_ns;
    }
  }
}
