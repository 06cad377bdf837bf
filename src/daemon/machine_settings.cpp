// What the election machine is made with (see machine_settings.hpp).
#include "machine_settings.hpp"

#include <random>

namespace baton {

lease_timing lease_timing_of(const config& cfg) {
  lease_timing t;
  t.ttl = cfg.lease.ttl;
  t.renew_interval = cfg.lease.renew_interval;
  t.renew_deadline = cfg.lease.renew_deadline;
  t.retry_interval = cfg.lease.retry_interval;
  t.drift_factor = cfg.lease.drift_factor;
  t.stop_timeout = cfg.child.stop_timeout;
  t.exit_when_app_exits = cfg.child.on_exit == child_exit_policy::exit;
  t.resign_cooldown = cfg.lease.resign_cooldown;
  t.one_term = cfg.once.enabled;
  t.one_term_wait = cfg.once.wait;
  return t;
}

std::uint64_t random_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace baton
