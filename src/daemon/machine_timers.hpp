// The election machine's timers (timer_id: wake, deadline, kill, gate) on the
// daemon's loop, armed and cancelled as its actions say; one that fires
// reaches the machine as events::timer. Each arm has a generation number, so
// that a completion asio had already queued when the timer was re-armed or
// cancelled is dropped: asio cannot take those back.
//
// How late a timer fired is measured for the metrics, and a timer far past
// its due time is said (narration.hpp, stall_line): the process did not run.
// Not the gate's, which waits for a socket client, not for the daemon's own
// work.
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>

#include "baton/config.hpp"
#include "baton/election_machine.hpp"
#include "baton/metrics.hpp"

namespace baton {

class machine_timers {
 public:
  /// `cfg` is read when a timer fires (lease.renew_interval, for the stall
  /// warning); `post` hands events::timer to the driver. Both, and `stats`,
  /// must outlive this object.
  machine_timers(boost::asio::io_context& io, const config& cfg, metrics& stats,
                 std::function<void(event)> post);

  /// actions::arm_timer: `id` fires at `at`, whatever it was armed for before.
  void arm(timer_id id, time_point at);
  /// actions::cancel_timer: `id` does not fire.
  void cancel(timer_id id);
  /// The daemon exits: none fires any more.
  void cancel_all();
  /// Whether one of them fires within `window` from now.
  bool due_within(milliseconds window) const;

 private:
  static constexpr std::size_t count = 4;  // the values of timer_id

  const config& cfg_;
  metrics& stats_;
  std::function<void(event)> post_;
  std::array<boost::asio::steady_timer, count> timers_;
  std::array<std::uint64_t, count> generation_{};
};

}  // namespace baton
