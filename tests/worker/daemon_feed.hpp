// The daemon's Unix socket as the apps that tests supervise follow it
// (tests/faults/deadline_worker.cpp, tests/campaign/campaign_app.cpp):
// subscribed first, then a status request, so that a renewal after the
// status snapshot is seen; read without blocking between units of work.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton::testing {

/// The integer after `"key":` in a JSON line, if present.
std::optional<std::int64_t> json_int(std::string_view line, std::string_view key);

class daemon_feed {
 public:
  daemon_feed() = default;
  ~daemon_feed();
  daemon_feed(const daemon_feed&) = delete;
  daemon_feed& operator=(const daemon_feed&) = delete;

  /// Connects, subscribes and asks for the status; false when it cannot.
  bool connect_to(const std::string& path);
  /// For poll(); -1 before connect_to.
  int fd() const { return fd_; }
  /// The whole lines that arrived since the last call, without blocking
  /// (none when the daemon went away).
  std::vector<std::string> lines();

 private:
  int fd_ = -1;
  std::string pending_;
};

}  // namespace baton::testing
