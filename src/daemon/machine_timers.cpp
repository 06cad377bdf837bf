// The election machine's timers (see machine_timers.hpp).
#include "machine_timers.hpp"

#include <spdlog/spdlog.h>

#include "narration.hpp"

namespace baton {

namespace asio = boost::asio;

machine_timers::machine_timers(asio::io_context& io, const config& cfg, metrics& stats,
                               std::function<void(event)> post)
    : cfg_(cfg),
      stats_(stats),
      post_(std::move(post)),
      timers_{asio::steady_timer(io), asio::steady_timer(io), asio::steady_timer(io),
              asio::steady_timer(io)} {}

void machine_timers::arm(timer_id id, time_point at) {
  const auto index = static_cast<std::size_t>(id);
  const auto generation = ++generation_[index];
  auto& timer = timers_[index];
  timer.expires_at(at);
  timer.async_wait([this, id, index, generation, due = at](const boost::system::error_code& ec) {
    if (ec || generation_[index] != generation) return;
    if (id != timer_id::gate) {
      const auto late = mono_clock::now() - due;
      stats_.observe_timer_delay(std::chrono::duration<double>(late).count());
      const auto line =
          stall_line(id, std::chrono::duration_cast<milliseconds>(late), cfg_.lease.renew_interval);
      if (line) spdlog::warn("{}", *line);
    }
    post_(events::timer{id});
  });
}

void machine_timers::cancel(timer_id id) {
  const auto index = static_cast<std::size_t>(id);
  ++generation_[index];
  timers_[index].cancel();
}

void machine_timers::cancel_all() {
  for (auto id : {timer_id::wake, timer_id::deadline, timer_id::kill, timer_id::gate}) cancel(id);
}

bool machine_timers::due_within(milliseconds window) const {
  const auto now = asio::steady_timer::clock_type::now();
  for (const auto& t : timers_) {
    if (t.expiry() > now && t.expiry() <= now + window) return true;
  }
  return false;
}

}  // namespace baton
