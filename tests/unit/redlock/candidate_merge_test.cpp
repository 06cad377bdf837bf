// The Redlock candidates' merge (candidate_merge.hpp): the union of what the
// masters that answered list, one entry per node.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "redlock/candidate_merge.hpp"

namespace baton::redlock_detail {
namespace {

registered_candidate entry(std::string node, int priority, long live_ms, long left_ms,
                           std::string nonce = "n1") {
  registered_candidate c;
  c.info.node = std::move(node);
  c.info.priority = priority;
  c.info.live_for = milliseconds(live_ms);
  c.left = milliseconds(left_ms);
  c.nonce = std::move(nonce);
  return c;
}

TEST(candidate_merge, lists_every_node_any_master_lists_once) {
  const auto merged = merge_candidates({
      {entry("b", 1, 500, 9000), entry("a", 0, 3000, 8000)},
      {entry("a", 0, 1200, 9500)},  // a master that restarted since
      {entry("c", -2, 100, 9900)},  // a candidate only this master saw
  });
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].node, "a");
  EXPECT_EQ(merged[0].live_for, milliseconds(3000)) << "the longest run without a gap";
  EXPECT_EQ(merged[1].node, "b");
  EXPECT_EQ(merged[2].node, "c");
  EXPECT_EQ(merged[2].priority, -2);
}

TEST(candidate_merge, a_node_keeps_the_priority_of_its_latest_registration) {
  const auto merged = merge_candidates({{entry("a", 1, 4000, 2000)}, {entry("a", 5, 100, 9000)}});
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].priority, 5);
  EXPECT_EQ(merged[0].live_for, milliseconds(4000));
}

TEST(candidate_merge, a_restarted_process_is_live_since_its_own_start) {
  // The new process (n2) reached two masters; the third still holds the line
  // of the process before it, live for longer and lapsing sooner.
  const auto merged = merge_candidates({
      {entry("a", 5, 200, 9800, "n2")},
      {entry("a", 0, 7000, 3000, "n1")},
      {entry("a", 5, 150, 9900, "n2")},
  });
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].live_for, milliseconds(200)) << "the predecessor's start counted";
  EXPECT_EQ(merged[0].priority, 5);
}

TEST(candidate_merge, no_registrations_are_no_candidates) {
  EXPECT_TRUE(merge_candidates({}).empty());
  EXPECT_TRUE(merge_candidates({{}, {}}).empty());
}

TEST(candidate_merge, the_latest_attempt_and_the_longest_cooldown_of_the_process_win) {
  auto first = entry("a", 0, 4000, 7000);
  first.info.last_attempt_ago = milliseconds(3000);
  first.info.cooling_down_for = milliseconds(8000);
  auto latest = entry("a", 0, 900, 9500);
  latest.info.last_attempt_ago = milliseconds(500);
  auto earlier_process = entry("a", 0, 100, 6000, "n0");
  earlier_process.info.cooling_down_for = milliseconds(60000);
  const auto merged = merge_candidates({{first}, {latest}, {earlier_process}});
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].last_attempt_ago, milliseconds(500));
  EXPECT_EQ(merged[0].cooling_down_for, milliseconds(8000))
      << "a master the cool-down did not reach hides nothing; an earlier process's is ignored";
}

}  // namespace
}  // namespace baton::redlock_detail
