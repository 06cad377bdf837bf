// What the election machine is made with (src/daemon/machine_settings.hpp):
// every timing field comes from its option, none left at the default.
#include "daemon/machine_settings.hpp"

#include <gtest/gtest.h>

namespace baton {
namespace {

using namespace std::chrono_literals;

TEST(machine_settings, the_lease_timing_takes_every_field_from_its_option) {
  config c;
  c.lease.ttl = 9000ms;
  c.lease.renew_interval = 2000ms;
  c.lease.renew_deadline = 5000ms;
  c.lease.retry_interval = 700ms;
  c.lease.drift_factor = 0.02;
  c.lease.resign_cooldown = 4000ms;
  c.child.stop_timeout = 3000ms;
  c.child.on_exit = child_exit_policy::exit;
  const auto t = lease_timing_of(c);
  EXPECT_EQ(t.ttl, 9000ms);
  EXPECT_EQ(t.renew_interval, 2000ms);
  EXPECT_EQ(t.renew_deadline, 5000ms);
  EXPECT_EQ(t.retry_interval, 700ms);
  EXPECT_DOUBLE_EQ(t.drift_factor, 0.02);
  EXPECT_EQ(t.resign_cooldown, 4000ms);
  EXPECT_EQ(t.stop_timeout, 3000ms);
  EXPECT_TRUE(t.exit_when_app_exits);

  c.child.on_exit = child_exit_policy::compete;
  EXPECT_FALSE(lease_timing_of(c).exit_when_app_exits);
  EXPECT_FALSE(lease_timing_of(c).one_term);
}

TEST(machine_settings, once_makes_a_one_term_machine_with_its_wait) {
  config c;
  c.once.enabled = true;
  c.once.wait = 1500ms;
  const auto t = lease_timing_of(c);
  EXPECT_TRUE(t.one_term);
  EXPECT_EQ(t.one_term_wait, 1500ms);
}

}  // namespace
}  // namespace baton
