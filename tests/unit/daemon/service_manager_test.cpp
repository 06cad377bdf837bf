// One systemd watchdog round (watchdog_round): notify only while live, say
// once when that changes, and look again sooner while withholding.
#include "daemon/service_manager.hpp"

#include <gtest/gtest.h>

namespace baton {
namespace {

using namespace std::chrono_literals;

struct round_case {
  const char* name;
  bool live;
  bool withheld_before;
  bool notify;
  const char* line;
  bool line_is_error;
  std::chrono::microseconds next;
};

TEST(service_manager, a_watchdog_round_notifies_only_while_the_daemon_is_live) {
  constexpr std::chrono::microseconds interval = 10s;
  const round_case cases[] = {
      {"live", true, false, true, "", false, interval},
      {"live again", true, true, true, "systemd watchdog: live again, notifying", false,
       interval},
      {"not live", false, false, false,
       "systemd watchdog: not notifying while the daemon is not live, so that systemd restarts "
       "it: wedged",
       true, interval / 10},
      {"still not live: said once", false, true, false, "", false, interval / 10},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    health_verdict liveness{c.live, c.live ? "ok" : "wedged"};
    auto step = watchdog_round(liveness, c.withheld_before, interval);
    EXPECT_EQ(step.notify, c.notify);
    EXPECT_EQ(step.withheld, !c.live);
    EXPECT_EQ(step.line, c.line);
    EXPECT_EQ(step.line_is_error, c.line_is_error);
    EXPECT_EQ(step.next, c.next);
  }
}

}  // namespace
}  // namespace baton
