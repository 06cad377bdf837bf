// Where a handover's time goes, in debug-level lines for the operator: on the
// old leader, when its release was sent and answered after its app was
// reported stopped; on the new leader, when its won acquire was answered, its
// app's start requested and returned, and its first renewal answered, each
// counted from when the acquire was sent. (The release announcement a
// standby hears is a line of its own: release_heard_line.)
//
// This keeps the moments those lines count from; it reads no clock, so it is
// tested with made-up times (tests/unit/daemon/handover_timing_test.cpp).
// The words are narration's.
#pragma once

#include <optional>
#include <string>

#include "baton/time.hpp"

namespace baton {

class handover_timing {
 public:
  /// The app was reported stopped at `at`.
  void app_stopped(time_point at) { app_stopped_ = at; }
  /// A release sent at `sent` was answered at `answered`: its line, or
  /// nullopt when no app was ever reported stopped.
  std::optional<std::string> release_answered(time_point sent, time_point answered) const;

  /// An acquire sent at `sent` was won at `answered`.
  void acquire_won(time_point sent, time_point answered);
  /// When the latest won acquire was sent; {} before the first.
  time_point acquire_sent() const { return acquire_sent_; }
  /// The app's start was requested at `requested` and start() returned at
  /// `returned`: the line, or nullopt before the first won acquire.
  std::optional<std::string> app_start(time_point requested, time_point returned) const;
  /// A renewal was answered at `answered`: the line for the first one after
  /// each won acquire, nullopt for the others.
  std::optional<std::string> renewal_answered(time_point answered);

 private:
  time_point app_stopped_{};
  time_point acquire_sent_{};
  time_point acquire_answered_{};
  bool first_renewal_pending_ = false;
};

}  // namespace baton
