// The store-clock-jump class: only the postgres kind meets it (the kinds
// whose leases the store host's wall clock judges, where libfaketime
// reaches the server: docs/campaign.md), its step rides in the fault's pick
// so that a hand-written schedule names the step it wants, and the drawn
// steps span a fifth of the ttl to three ttls, some back first.
#include <gtest/gtest.h>

#include <algorithm>

#include "campaign/fault_schedule.hpp"

namespace baton::campaign {
namespace {

bool kind_meets_clock_jumps(const std::string& kind, int members) {
  const auto all = classes_of(kind, members);
  return std::find(all.begin(), all.end(), fault_class::store_clock_jump) != all.end();
}

std::vector<fault> clock_jumps_of(std::uint64_t seed) {
  schedule_params p;
  p.kind = "postgres";
  p.seed = seed;
  p.duration_ms = 180'000;
  p.ttl_ms = 1'500;
  std::vector<fault> out;
  for (const auto& f : make_schedule(p)) {
    if (f.what == fault_class::store_clock_jump) out.push_back(f);
  }
  return out;
}

TEST(clock_jump_schedule, only_postgres_meets_it) {
  for (const auto& kind : campaign_kinds()) {
    EXPECT_EQ(kind_meets_clock_jumps(kind, 1), kind == "postgres") << kind;
    EXPECT_FALSE(kind_meets_clock_jumps(kind, 3)) << kind;
  }
  EXPECT_EQ(to_string(fault_class::store_clock_jump), "store-clock-jump");
  EXPECT_EQ(parse_fault_class("store-clock-jump"), fault_class::store_clock_jump);
}

TEST(clock_jump_schedule, drawn_steps_span_a_fifth_of_the_ttl_to_three_ttls_some_back_first) {
  int forward = 0;
  int back = 0;
  bool short_one = false;
  bool past_a_lease = false;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (const auto& f : clock_jumps_of(seed)) {
      EXPECT_EQ(f.target, fault_target::store);
      const std::int64_t step = clock_step_ms(f);
      const std::int64_t length = step < 0 ? -step : step;
      EXPECT_GE(length, 1'500 / 5) << to_line(f);
      EXPECT_LE(length, 3 * 1'500) << to_line(f);
      // The clock stays off for the hold, then returns.
      EXPECT_GE(f.hold_ms, 1'500 / 2) << to_line(f);
      EXPECT_LE(f.hold_ms, 3 * 1'500) << to_line(f);
      (step < 0 ? back : forward) += 1;
      short_one = short_one || length < 1'500 * 2 / 3;
      past_a_lease = past_a_lease || length > 1'500;
    }
  }
  EXPECT_GT(forward, 2 * back);  // about three in four forward first
  EXPECT_GT(back, 0);
  EXPECT_TRUE(short_one);
  EXPECT_TRUE(past_a_lease);
}

TEST(clock_jump_schedule, the_pick_holds_the_step_and_reads_back_from_a_line) {
  for (const std::int64_t step : {3'000, -3'000, 1, -1, 0, 450}) {
    fault f;
    f.what = fault_class::store_clock_jump;
    f.pick = clock_jump_pick(step);
    EXPECT_EQ(clock_step_ms(f), step);
  }
  // Two ttls forward at a 1.5 s ttl, kept for 2 s: pick 6000.
  const auto parsed = parse_schedule("2000 store-clock-jump store 2000 6000\n");
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(clock_step_ms(parsed[0]), 3'000);
  const auto back_first = parse_schedule("2000 store-clock-jump store 2000 6001\n");
  EXPECT_EQ(clock_step_ms(back_first[0]), -3'000);
}

TEST(clock_jump_schedule, a_step_of_two_thirds_of_the_ttl_either_way_may_end_a_lease) {
  fault f;
  f.what = fault_class::store_clock_jump;
  f.pick = clock_jump_pick(1'000);
  EXPECT_TRUE(clock_jump_may_end_a_lease(f, 1'500));
  f.pick = clock_jump_pick(-1'000);  // its return is forward by 1 s
  EXPECT_TRUE(clock_jump_may_end_a_lease(f, 1'500));
  f.pick = clock_jump_pick(999);
  EXPECT_FALSE(clock_jump_may_end_a_lease(f, 1'500));
}

TEST(clock_jump_schedule, a_known_postgres_seed_keeps_its_clock_jumps_across_builds) {
  // Pinned as the redis seed is (fault_schedule_test): recorded seeds replay.
  const auto jumps = clock_jumps_of(105);
  ASSERT_FALSE(jumps.empty());
  // 1901 ms back first (pick 3803), back to the true time 3.9 s later.
  EXPECT_EQ(to_line(jumps[0]), "46466 store-clock-jump store 3908 3803");
}

}  // namespace
}  // namespace baton::campaign
