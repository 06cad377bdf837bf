// The machine's pacing: the herd's staggers, jitter from the machine's own
// seeded generator, and the back-offs.
#include "baton/election_machine.hpp"

#include <algorithm>
#include <cmath>

#include "pacing.hpp"
#include "step_context.hpp"

namespace baton {

namespace {

std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

milliseconds doubled(milliseconds base, unsigned times, milliseconds cap) {
  auto value = base;
  for (unsigned i = 0; i < times && value < cap; ++i) value *= 2;
  return std::min(value, cap);
}

}  // namespace

using namespace pacing;

// --- timing helpers ---------------------------------------------------------

std::chrono::microseconds election_machine::herd_window() const {
  if (contenders_ <= 0) return expiry_stagger;
  if (back_runner_) {
    const auto cap = std::chrono::duration_cast<std::chrono::microseconds>(timing_.ttl / 4);
    return std::max(expiry_stagger,
                    std::min(cap, back_runner_stagger_per_contender * contenders_));
  }
  const auto cap = std::min(
      max_herd_stagger, std::chrono::duration_cast<std::chrono::microseconds>(timing_.ttl / 20));
  return std::max(expiry_stagger, std::min(cap, stagger_per_contender * contenders_));
}

mono_clock::duration election_machine::yield_delay() const {
  const auto step = std::clamp(std::chrono::duration_cast<milliseconds>(timing_.ttl / 40),
                               milliseconds(10), milliseconds(250));
  return step * (std::min(outranked_by_, 3) + (back_runner_ ? 1 : 0));
}

std::chrono::microseconds election_machine::herd_stagger() {
  const auto window = herd_window();
  return std::chrono::microseconds(
      static_cast<std::chrono::microseconds::rep>(splitmix64(rng_) % (window.count() + 1)));
}

void election_machine::wait_then_retry(step_context& ctx, mono_clock::duration delay) {
  ctx.emit(actions::arm_timer{timer_id::wake, ctx.now + delay});
}

milliseconds election_machine::jittered(milliseconds base, double spread) {
  // Uniform in [base * (1 - spread), base * (1 + spread)].
  auto unit = static_cast<double>(splitmix64(rng_) >> 11) * 0x1.0p-53;
  auto factor = 1.0 + spread * (2.0 * unit - 1.0);
  return milliseconds(
      static_cast<milliseconds::rep>(std::llround(static_cast<double>(base.count()) * factor)));
}

milliseconds election_machine::error_backoff() const {
  return doubled(timing_.retry_interval, acquire_errors_,
                 std::max(timing_.retry_interval, timing_.ttl));
}

milliseconds election_machine::failure_backoff() const {
  return doubled(timing_.retry_interval, app_failures_ - 1,
                 std::max(timing_.retry_interval, max_failure_backoff));
}

milliseconds election_machine::renew_retry_delay() const {
  return std::max(timing_.renew_interval / 4, milliseconds(1));
}

}  // namespace baton
