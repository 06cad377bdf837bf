// `baton once`'s last word (src/daemon/one_term_lines.hpp), as a table: a
// machine brought to each ending by its events, and the line it gets.
#include "daemon/one_term_lines.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace baton {
namespace {

using namespace std::chrono_literals;

lease_timing once_timing() {
  lease_timing t;
  t.ttl = 10s;
  t.renew_interval = 3s;
  t.renew_deadline = 6s;
  t.retry_interval = 1s;
  t.one_term = true;
  return t;
}

struct one_term_case {
  const char* name;
  std::vector<event> events;
  std::string line;
  loudness level;
};

events::busy busy_answer(const std::string& holder, std::uint64_t token, bool held_back = false) {
  events::busy b;
  b.holder = holder;
  b.holder_ttl = 5s;
  b.token = token;
  b.held_back = held_back;
  return b;
}

TEST(one_term_lines, each_ending_has_its_line) {
  const std::vector<one_term_case> cases{
      {"held", {events::start{}, busy_answer("web-2", 17)},
       "once: not running the command: the lease is held by web-2 (token 17); exit 75",
       loudness::info},
      {"held, token unknown", {events::start{}, busy_answer("web-2", 0)},
       "once: not running the command: the lease is held by web-2; exit 75", loudness::info},
      {"held back", {events::start{}, busy_answer("", 99, true)},
       "once: not running the command: the store holds the lease back (after a store reset); "
       "exit 75",
       loudness::info},
      {"unavailable", {events::start{}, events::acquire_failed{"connection refused"}},
       "once: not running the command: the store gave no lease before the wait ran out (the "
       "lines above say why); exit 69",
       loudness::error},
      {"ran",
       {events::start{}, events::acquired{time_point{} + 1000s, 5}, events::app_started{},
        events::app_exited{3, "exited 3"}, events::app_stopped{}, events::release_done{}},
       "once: the command ran with token 5 and ended with status 3; exit 3", loudness::info},
      {"cannot execute",
       {events::start{}, events::acquired{time_point{} + 1000s, 5},
        events::app_start_failed{"no such file", true}, events::app_stopped{},
        events::release_done{}},
       "once: the command could not be executed; exit 127", loudness::error},
      {"interrupted",
       {events::start{}, events::acquired{time_point{} + 1000s, 5}, events::app_started{},
        events::shutdown{"SIGTERM"}, events::app_stopped{}, events::release_done{}},
       "once: interrupted by a signal; the command, if it ran, was stopped before the lease was "
       "released; exit 143",
       loudness::info},
  };
  for (const auto& c : cases) {
    election_machine m(once_timing(), 1);
    const auto now = time_point{} + 1000s;
    int code = -1;
    for (const auto& e : c.events) {
      for (const auto& a : m.step(e, now).actions) {
        if (const auto* exit = std::get_if<actions::exit_process>(&a)) code = exit->code;
      }
    }
    ASSERT_EQ(m.current(), state::stopped) << c.name;
    const auto line = one_term_line(m, code, now);
    ASSERT_TRUE(line) << c.name;
    EXPECT_EQ(line->text, c.line) << c.name;
    EXPECT_EQ(line->level, c.level) << c.name;
  }
}

TEST(one_term_lines, a_run_daemon_has_none) {
  election_machine m(lease_timing{}, 1);
  const auto now = time_point{} + 1000s;
  m.step(events::start{}, now);
  m.step(events::shutdown{"SIGTERM"}, now);
  EXPECT_FALSE(one_term_line(m, 0, now));
}

}  // namespace
}  // namespace baton
