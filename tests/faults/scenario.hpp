// Small helpers shared by the fault scenarios: round naming, finding the
// intervals that matter around an injection, turning a round into a summary
// record, and the common assertion that no two apps ever worked at once.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "fault_cluster.hpp"
#include "fault_summary.hpp"

namespace baton::testing {

using namespace std::chrono_literals;

/// Rounds per scenario.
inline constexpr int rounds = 3;

/// An election name unique to this test and round (also shows in logs).
inline std::string round_name(int round) {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  if (name.size() > 56) name.resize(56);
  return name + "-r" + std::to_string(round);
}

/// The interval of worker process `pid`, if it started.
inline std::optional<interval> interval_of(const event_log& log, pid_t pid) {
  for (const auto& i : log.intervals()) {
    if (i.pid == pid) return i;
  }
  return std::nullopt;
}

/// The first interval that started after `ns`.
inline std::optional<interval> first_started_after(const event_log& log, std::int64_t ns) {
  std::optional<interval> first;
  for (const auto& i : log.intervals()) {
    if (i.start_ns > ns && (!first || i.start_ns < first->start_ns)) first = i;
  }
  return first;
}

/// Refreshes `log` until a worker that started after `after_ns` (a new term
/// after the fault injected then) has ticked `ticks` times, i.e. its app
/// works; false when none did within `timeout`. first_started_after(log,
/// after_ns) then gives it. The one way the fault tests await a takeover.
inline bool wait_for_new_term_after(event_log& log, std::int64_t after_ns,
                                    std::chrono::milliseconds timeout, std::size_t ticks = 1) {
  return wait_for(
      log,
      [&](const event_log& x) {
        const auto next = first_started_after(x, after_ns);
        return next && next->ticks >= ticks;
      },
      timeout);
}

/// Sleep until CLOCK_MONOTONIC `ns`: only for the length of a fault itself
/// (a freeze, a partition), never to wait for an outcome.
inline void hold_fault_until(std::int64_t ns) {
  const std::int64_t left = ns - mono_now_ns();
  if (left > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(left));
}

// Waits until one worker works, and returns it; a failure (with the logs)
// and an empty interval when none does within `within`.
inline interval single_worker(fault_cluster& c, std::chrono::milliseconds within = 20s) {
  std::string why;
  auto w = c.wait_for_single_worker(within, &why);
  if (!w) ADD_FAILURE() << why << "\n" << c.logs();
  return w.value_or(interval{});
}

/// Checks the whole event log of the round for overlaps and bad lines
/// (failing the test if any) and returns the number of overlaps. With
/// BATON_FAULT_VERBOSE set, also prints every daemon's log of the round.
inline std::size_t check_no_overlap(fault_cluster& cluster) {
  if (const char* verbose = std::getenv("BATON_FAULT_VERBOSE"); verbose && *verbose) {
    std::printf("%s\n", cluster.logs().c_str());
  }
  const event_log log = cluster.log();
  const auto overlaps = log.overlaps();
  EXPECT_TRUE(overlaps.empty()) << "TWO APPS WORKED AT ONCE in " << cluster.election() << ":\n"
                                << to_string(overlaps) << cluster.logs();
  EXPECT_TRUE(log.bad_lines().empty()) << log.bad_lines().front();
  return overlaps.size();
}

/// A record for the round: overlaps of the whole log, the old worker's last
/// work and the first start after `inject_ns`.
inline fault_record round_record(fault_cluster& cluster, const std::string& kind,
                                 std::int64_t inject_ns, std::optional<pid_t> old_pid,
                                 std::size_t overlaps) {
  const event_log log = cluster.log();
  fault_record r;
  r.kind = kind;
  r.overlaps = overlaps;
  if (old_pid) {
    // 0 when its last work came before the injection.
    if (auto old = interval_of(log, *old_pid)) {
      r.stopped_ms = std::max(0.0, ms_between(inject_ns, old->end_ns));
    }
  }
  if (auto next = first_started_after(log, inject_ns)) {
    r.started_ms = ms_between(inject_ns, next->start_ns);
  }
  return r;
}

/// Who stopped the old app after a freeze, from the logs: the app itself
/// (deadline_worker's `expired` line), the keeper ("lease deadline passed"),
/// or the thawed daemon's own SIGKILL at the end of validity; "" if none says.
inline std::string stop_cause(const event_log& log, pid_t app_pid, const std::string& daemon_log) {
  for (const auto& e : log.events()) {
    if (e.pid == app_pid && e.word == "expired") return "app: lease deadline expired";
  }
  if (daemon_log.find("lease deadline passed") != std::string::npos) {
    return "keeper: lease deadline passed";
  }
  if (daemon_log.find("the app did not stop in time: sending SIGKILL") != std::string::npos) {
    return "daemon: SIGKILL at the end of validity";
  }
  return {};
}

/// The integer value of a fencing token as a worker saw it (0 if unset).
inline std::uint64_t token_value(const interval& i) {
  try {
    return i.token.empty() ? 0 : std::stoull(i.token);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace baton::testing
