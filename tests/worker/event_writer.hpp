// The event-log line format shared by the workers that tests supervise
// (test_worker, and tests/faults' deadline_worker): `<CLOCK_MONOTONIC ns>
// <name> <pid> <event...>`, one line per write() so that concurrent writers'
// lines stay whole. tests/support/event_log.hpp parses it.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>

namespace baton::testing {

/// Exit code of a worker that could not write its event log.
inline constexpr int exit_log_failed = 1;

inline std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// An environment value as one word: "" when unset, anything that would break
/// the line format replaced by '_'.
inline std::string env_word(const char* variable) {
  const char* raw = std::getenv(variable);
  std::string text = raw == nullptr ? "" : raw;
  for (char& c : text) {
    if (c <= ' ' || c == 0x7f) c = '_';
  }
  return text;
}

class event_writer {
 public:
  /// `program` names the worker in the error message if the log cannot be written.
  event_writer(int fd, std::string name, std::string program)
      : fd_(fd), name_(std::move(name)), program_(std::move(program)), pid_(getpid()) {}

  /// Append one line; the whole line goes out in one write().
  void write_event(std::string_view event) {
    std::string line = std::to_string(now_ns()) + ' ' + name_ + ' ' + std::to_string(pid_) + ' ';
    line += event;
    line += '\n';
    for (;;) {
      const ssize_t n = ::write(fd_, line.data(), line.size());
      if (n == static_cast<ssize_t>(line.size())) return;
      if (n < 0 && errno == EINTR) continue;
      // A short or failed write would corrupt the log's one-line-per-write
      // contract; better to stop loudly than to keep working unrecorded.
      std::fprintf(stderr, "%s: cannot write event log: %s\n", program_.c_str(),
                   n < 0 ? std::strerror(errno) : "short write");
      std::exit(exit_log_failed);
    }
  }

 private:
  int fd_;
  std::string name_;
  std::string program_;
  pid_t pid_;
};

}  // namespace baton::testing
