// The shrinker (ddmin) against made-up predicates: it keeps exactly the
// faults a failure needs, respects its bound on tries, and keeps order.
#include <gtest/gtest.h>

#include <algorithm>

#include "campaign/shrink.hpp"

namespace baton::campaign {
namespace {

std::vector<fault> numbered_faults(int n) {
  std::vector<fault> out;
  for (int i = 0; i < n; ++i) {
    fault f;
    f.at_ms = 1000 * i;
    f.what = i % 2 == 0 ? fault_class::daemon_kill : fault_class::store_freeze;
    f.pick = static_cast<std::uint32_t>(i);
    out.push_back(f);
  }
  return out;
}

bool holds_pick(const std::vector<fault>& s, std::uint32_t pick) {
  return std::any_of(s.begin(), s.end(), [&](const fault& f) { return f.pick == pick; });
}

TEST(shrink, keeps_the_two_faults_a_failure_needs) {
  const auto all = numbered_faults(40);
  const auto fails = [](const std::vector<fault>& s) {
    return holds_pick(s, 7) && holds_pick(s, 31);
  };
  const auto r = shrink_schedule(all, fails, 200);
  ASSERT_EQ(r.faults.size(), 2u);
  EXPECT_EQ(r.faults[0].pick, 7u);  // order and times kept
  EXPECT_EQ(r.faults[1].pick, 31u);
  EXPECT_EQ(r.faults[1].at_ms, 31'000);
  EXPECT_FALSE(r.exhausted);
  EXPECT_LT(r.tries, 60);
}

TEST(shrink, keeps_one_fault_when_one_is_enough) {
  const auto r = shrink_schedule(
      numbered_faults(17), [](const std::vector<fault>& s) { return holds_pick(s, 16); }, 100);
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].pick, 16u);
}

TEST(shrink, a_failure_without_faults_shrinks_to_none) {
  const auto r = shrink_schedule(
      numbered_faults(9), [](const std::vector<fault>&) { return true; }, 100);
  EXPECT_TRUE(r.faults.empty());
}

TEST(shrink, stops_at_its_bound_on_tries_with_the_smallest_failure_so_far) {
  int calls = 0;
  const auto all = numbered_faults(64);
  const auto r = shrink_schedule(
      all,
      [&](const std::vector<fault>& s) {
        ++calls;
        return holds_pick(s, 3) && holds_pick(s, 60);
      },
      5);
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(r.tries, 5);
  EXPECT_TRUE(r.exhausted);
  EXPECT_TRUE(holds_pick(r.faults, 3) && holds_pick(r.faults, 60));
  EXPECT_LE(r.faults.size(), all.size());
}

TEST(shrink, a_flaky_failure_that_never_repeats_keeps_the_whole_schedule) {
  const auto all = numbered_faults(8);
  const auto r = shrink_schedule(
      all, [](const std::vector<fault>&) { return false; }, 100);
  EXPECT_EQ(r.faults, all);
}

}  // namespace
}  // namespace baton::campaign
