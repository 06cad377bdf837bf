// What status shows of one Redlock master (member_state.hpp): the master as
// it is now, not as it was when it last failed or restarted.
#include <gtest/gtest.h>

#include "redlock/member_state.hpp"

namespace baton::redlock_detail {
namespace {

const time_point t0{std::chrono::seconds(100)};

TEST(member_state, an_error_lasts_until_the_master_answers_again) {
  member_state m;
  m.holds_lease(true);
  m.failed("connect 127.0.0.1:6380: Connection refused");
  EXPECT_EQ(m.last_error(), "connect 127.0.0.1:6380: Connection refused");
  EXPECT_FALSE(m.holds_lease()) << "not known any more: not shown as held";
  m.answered();
  EXPECT_EQ(m.last_error(), "");
}

TEST(member_state, a_fence_shows_until_it_ends_or_the_master_grants) {
  member_state m;
  m.holds_lease(true);
  m.fenced("run_id changed from a to b", t0, milliseconds(2000));
  EXPECT_FALSE(m.holds_lease());
  EXPECT_EQ(m.fence_at(t0 + milliseconds(1999)), "run_id changed from a to b");
  EXPECT_EQ(m.fence_at(t0 + milliseconds(2000)), "") << "the fence has ended";

  m.fenced("token counter missing", t0, milliseconds(2000));
  m.unfenced();  // it granted, or was taken: not fenced, whatever the time
  EXPECT_EQ(m.fence_at(t0 + milliseconds(10)), "");
}

}  // namespace
}  // namespace baton::redlock_detail
