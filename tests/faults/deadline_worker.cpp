// deadline_worker: a supervised app that holds the lease deadline on its own,
// as baton's docs tell apps to: it follows the daemon's Unix socket and never
// does a unit of work once `valid_until_mono_ns` (from the status reply, the
// `start` event or the latest `renewed` event) has passed. So a daemon that
// freezes, or a whole host that pauses and resumes, cannot make it work past
// its lease, even before the keeper's SIGKILL lands.
//
// It writes the same event log as tests/worker/test_worker.cpp
// (`<CLOCK_MONOTONIC ns> <name> <pid> <event>[ details]`, one write() per line),
// so the overlap checker judges it the same way. When it gives up because the
// deadline passed it writes `expired ...` (not a work line) and exits 0
// without a `stop` line: the `stop` line would count as work in the checker,
// and none was done after the check.
//
// Usage: deadline_worker --log FILE --name NAME --socket PATH [--tick-ms 5]
//                        [--margin-ms 2]
// Exit codes: 0 after SIGTERM, a `stop` event or an expired deadline; 1 when
// the log cannot be written; 2 on bad arguments; 3 when no deadline was
// learnt within 2 s (it never worked).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "../worker/daemon_feed.hpp"
#include "../worker/event_writer.hpp"

using baton::testing::env_word;
using baton::testing::event_writer;
using baton::testing::daemon_feed;
using baton::testing::json_int;
using baton::testing::now_ns;

namespace {

constexpr std::int64_t ns_per_ms = 1'000'000;
constexpr std::int64_t learn_deadline_within_ns = 2'000 * ns_per_ms;
constexpr std::int64_t safety_limit_ns = 3600LL * 1000 * ns_per_ms;

struct options {
  std::string log_path;
  std::string name;
  std::string socket_path;
  std::int64_t tick_ms = 5;
  std::int64_t margin_ms = 2;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "deadline_worker: %s\nusage: deadline_worker --log FILE --name NAME --socket PATH "
               "[--tick-ms 5] [--margin-ms 2]\n",
               message.c_str());
  std::exit(2);
}

std::int64_t parse_int(std::string_view flag, std::string_view text, std::int64_t max) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size() || value < 0 || value > max) {
    usage_error(std::string(flag) + " wants an integer in [0, " + std::to_string(max) + "]");
  }
  return value;
}

options parse_args(int argc, char** argv) {
  options opts;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (i + 1 >= argc) usage_error(std::string(arg) + " needs a value");
    const std::string_view value = argv[++i];
    if (arg == "--log") {
      opts.log_path = value;
    } else if (arg == "--name") {
      opts.name = value;
    } else if (arg == "--socket") {
      opts.socket_path = value;
    } else if (arg == "--tick-ms") {
      opts.tick_ms = std::max<std::int64_t>(1, parse_int(arg, value, 60'000));
    } else if (arg == "--margin-ms") {
      opts.margin_ms = parse_int(arg, value, 60'000);
    } else {
      usage_error("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (opts.log_path.empty() || opts.name.empty() || opts.socket_path.empty()) {
    usage_error("--log, --name and --socket are required");
  }
  return opts;
}

// Reads what arrived; updates the deadline; true if a `stop` came. A stop
// ends validity for this app as far as it is concerned; only the
// lease-bearing messages move the deadline.
bool drain(daemon_feed& feed, std::optional<std::int64_t>& valid_until) {
  bool stop = false;
  for (const auto& line : feed.lines()) {
    if (line.find("\"event\":\"stop\"") != std::string::npos) {
      stop = true;
    } else if (auto v = json_int(line, "valid_until_mono_ns")) {
      valid_until = std::max(valid_until.value_or(0), *v);
    }
  }
  return stop;
}

}  // namespace

int main(int argc, char** argv) {
  const options opts = parse_args(argc, argv);
  sigset_t term_set;
  sigemptyset(&term_set);
  sigaddset(&term_set, SIGTERM);
  sigprocmask(SIG_SETMASK, &term_set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  const int fd = ::open(opts.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return 1;
  event_writer log(fd, opts.name, "deadline_worker");
  const std::int64_t started = now_ns();
  log.write_event("start");
  log.write_event("env token=" + env_word("BATON_TOKEN") + " node=" + env_word("BATON_NODE_ID"));

  daemon_feed feed;
  if (!feed.connect_to(opts.socket_path)) {
    log.write_event("expired cannot-connect");
    return 3;
  }
  std::optional<std::int64_t> valid_until;
  const std::int64_t tick_ns = opts.tick_ms * ns_per_ms;
  std::int64_t next_tick = started + tick_ns;
  for (;;) {
    const std::int64_t left = next_tick - now_ns();
    if (left > 0) {
      timespec timeout{static_cast<time_t>(left / 1'000'000'000),
                       static_cast<long>(left % 1'000'000'000)};
      if (sigtimedwait(&term_set, nullptr, &timeout) == SIGTERM) {
        log.write_event("term");
        log.write_event("stop");
        return 0;
      }
      if (now_ns() < next_tick) continue;  // woken early (EINTR): wait again
    }
    if (drain(feed, valid_until)) {
      log.write_event("stop reason=stop-event");
      return 0;
    }
    // The check that matters: right before the unit of work, on the clock.
    const std::int64_t now = now_ns();
    if (!valid_until) {
      if (now - started > learn_deadline_within_ns) {
        log.write_event("expired no-deadline-learnt");
        return 3;
      }
    } else if (now + opts.margin_ms * ns_per_ms >= *valid_until) {
      log.write_event("expired valid_until_ns=" + std::to_string(*valid_until) +
                      " late_ms=" + std::to_string((now - *valid_until) / ns_per_ms));
      return 0;
    } else {
      log.write_event("tick");
    }
    if (now - started > safety_limit_ns) return 124;
    next_tick += tick_ns;
    if (next_tick <= now) next_tick = now + tick_ns;
  }
}
