// The watch on the database's clock (src/postgres/clock_watch.hpp): what an
// acquire may expect, when it may take a row that lapsed unreleased, and
// which jumps of the database's time are steps.
#include <gtest/gtest.h>

#include "postgres/clock_watch.hpp"

namespace baton::postgres_detail {
namespace {

using namespace std::chrono_literals;

constexpr milliseconds watch_ttl{1500};
constexpr std::int64_t db_start_us = 1'800'000'000'000'000;

time_point at_ms(std::int64_t ms) { return time_point{} + 1h + milliseconds(ms); }

// Looks at the database every `every_ms` from local `from_ms` for `looks`
// looks, its clock in step with ours (a 1 ms round trip each).
void look_steadily(clock_watch& w, std::int64_t from_ms, std::int64_t every_ms, int looks) {
  for (int i = 0; i < looks; ++i) {
    const std::int64_t t = from_ms + i * every_ms;
    ASSERT_FALSE(w.observe(db_start_us + t * 1000, at_ms(t), at_ms(t + 1))) << "look " << i;
  }
}

TEST(clock_watch, a_node_that_has_not_watched_for_a_ttl_may_not_take_a_lapsed_row) {
  clock_watch w(watch_ttl, 0.01);
  EXPECT_EQ(w.expected_us(at_ms(0)), 0);
  EXPECT_EQ(w.wait_left(at_ms(0)), watch_ttl);
  look_steadily(w, 0, 500, 3);  // the watch began at 1 ms
  EXPECT_EQ(w.expected_us(at_ms(1400)), 0);
  EXPECT_EQ(w.wait_left(at_ms(1001)), 500ms);
  // A ttl on: the last look (sent at 1000 ms, 1 ms round trip) plus the
  // time since, scaled by the drift factor, plus the slack.
  const std::int64_t expected = w.expected_us(at_ms(1501));
  EXPECT_EQ(expected, db_start_us + 1000 * 1000 + (501 + 1) * 1010 + 2000);
  EXPECT_EQ(w.wait_left(at_ms(1501)), 0ms);
}

TEST(clock_watch, a_step_forward_past_the_drift_is_seen_and_begins_the_watch_anew) {
  clock_watch w(watch_ttl, 0.01);
  look_steadily(w, 0, 500, 5);  // the last sent at 2000 ms
  // 500 ms later the database reads 3 s further on.
  const auto step = w.observe(db_start_us + (2500 + 3000) * 1000, at_ms(2500), at_ms(2501));
  ASSERT_TRUE(step);
  EXPECT_GE(*step, 2980ms);
  EXPECT_LE(*step, 3000ms);
  EXPECT_EQ(w.expected_us(at_ms(3000)), 0);
  EXPECT_EQ(w.wait_left(at_ms(2501)), watch_ttl);
  // Steady on the new time for a ttl: lapsed rows may be taken again.
  for (std::int64_t t = 3000; t <= 4000; t += 500) {
    EXPECT_FALSE(w.observe(db_start_us + (t + 3000) * 1000, at_ms(t), at_ms(t + 1)));
  }
  EXPECT_GT(w.expected_us(at_ms(4100)), 0);
}

TEST(clock_watch, a_step_back_and_the_drift_allowance_are_no_step) {
  clock_watch w(watch_ttl, 0.01);
  look_steadily(w, 0, 500, 4);
  EXPECT_FALSE(w.observe(db_start_us + (2000 - 4000) * 1000, at_ms(2000), at_ms(2001)));
  EXPECT_GT(w.expected_us(at_ms(2500)), 0);  // a step back ends no lease early
  // Running 1 % fast over a second, and a 2 ms slow reply: within the allowance.
  clock_watch v(watch_ttl, 0.01);
  look_steadily(v, 0, 500, 4);
  EXPECT_FALSE(v.observe(db_start_us + (2500 + 10) * 1000, at_ms(2500), at_ms(2503)));
  // 20 ms ahead is not.
  EXPECT_TRUE(v.observe(db_start_us + (3000 + 10 + 20 + 5) * 1000, at_ms(3000), at_ms(3001)));
}

TEST(clock_watch, a_look_after_a_long_gap_begins_the_watch_anew) {
  clock_watch w(watch_ttl, 0.01);
  look_steadily(w, 0, 500, 4);
  EXPECT_GT(w.expected_us(at_ms(1600)), 0);
  // More than two ttls without a look: the drift allowance has grown with
  // the gap, so the node watches a ttl again before it takes a lapsed row.
  EXPECT_EQ(w.expected_us(at_ms(1500 + 3001)), 0);
  EXPECT_FALSE(w.observe(db_start_us + 4501 * 1000, at_ms(4501), at_ms(4502)));
  EXPECT_EQ(w.wait_left(at_ms(4502)), watch_ttl);
}

TEST(clock_watch, an_older_statement_answered_late_changes_nothing) {
  clock_watch w(watch_ttl, 0.01);
  look_steadily(w, 0, 500, 4);
  const auto before = w.expected_us(at_ms(1700));
  EXPECT_FALSE(w.observe(db_start_us + 9'000'000, at_ms(1200), at_ms(1600)));
  EXPECT_EQ(w.expected_us(at_ms(1700)), before);
}

}  // namespace
}  // namespace baton::postgres_detail
