// What a SIGHUP leads to (judge_reload): the configuration run from then on
// and the lines logged, word for word, since operators and tests grep them.
#include "daemon/hangup_reload.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace baton {
namespace {

using namespace std::chrono_literals;

config running() {
  config c;
  c.election = "jobs";
  c.node_id = "node-a";
  c.lease.ttl = 9000ms;
  c.lease.renew_interval = 3000ms;
  c.lease.renew_deadline = 6000ms;
  c.lease.retry_interval = 1000ms;
  c.lease.resign_cooldown = 9000ms;
  return c;
}

struct reload_case {
  const char* name;
  std::function<config()> read;
  bool changes;
  std::vector<reload_line> lines;
};

TEST(hangup_reload, a_sighup_is_judged_against_the_running_configuration) {
  const reload_case cases[] = {
      {"no configuration source", {}, false,
       {{reload_level::warn,
         "received SIGHUP: this daemon has no configuration source to reload"}}},
      {"an invalid configuration", [] () -> config { throw std::runtime_error("lease.ttl: too short"); },
       false,
       {{reload_level::error,
         "received SIGHUP: the configuration is invalid, nothing changed: lease.ttl: too short"}}},
      {"nothing changed", [] { return running(); }, false,
       {{reload_level::info, "received SIGHUP: configuration reloaded, nothing changed"}}},
      {"an option that cannot change",
       [] {
         auto c = running();
         c.election = "other";
         c.child.stop_timeout = 4s;
         return c;
       },
       false,
       {{reload_level::error,
         "received SIGHUP: reload refused, nothing changed: these options cannot change while "
         "baton runs (restart it to apply them): election: jobs -> other"}}},
      {"options that may change",
       [] {
         auto c = running();
         c.child.stop_timeout = 4s;
         c.log.level = "debug";
         return c;
       },
       true,
       {{reload_level::info, "received SIGHUP: child.stop_timeout: 10s -> 4s"},
        {reload_level::info, "received SIGHUP: log.level: info -> debug"}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto v = judge_reload(running(), c.read);
    EXPECT_EQ(v.next.has_value(), c.changes);
    ASSERT_EQ(v.lines.size(), c.lines.size());
    for (std::size_t i = 0; i < c.lines.size(); ++i) {
      EXPECT_EQ(v.lines[i].level, c.lines[i].level) << i;
      EXPECT_EQ(v.lines[i].text, c.lines[i].text) << i;
    }
  }
}

TEST(hangup_reload, an_accepted_reload_runs_with_the_new_values) {
  auto v = judge_reload(running(), [] {
    auto c = running();
    c.child.stop_timeout = 4s;
    return c;
  });
  ASSERT_TRUE(v.next);
  EXPECT_EQ(v.next->child.stop_timeout, 4s);
  EXPECT_EQ(v.next->election, "jobs");
}

}  // namespace
}  // namespace baton
