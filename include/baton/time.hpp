// Time types shared by every component. All timing in baton runs on the
// monotonic clock, so wall-clock jumps (NTP, suspend) cannot shorten or stretch
// a lease. Pure code receives time points; only adapters read the clock.
#pragma once

#include <chrono>
#include <string>

namespace baton {

using mono_clock = std::chrono::steady_clock;
using time_point = mono_clock::time_point;
using milliseconds = std::chrono::milliseconds;

/// "1234us": a duration in whole microseconds, for timing lines in the log.
inline std::string microseconds_text(mono_clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(d).count()) + "us";
}

}  // namespace baton
