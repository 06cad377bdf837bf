// Notification payloads: baton's own are understood; anything else another
// program sends on the channel is ignored, never a crash.
#include "postgres/announcement.hpp"

#include <gtest/gtest.h>

namespace baton::postgres_detail {
namespace {

TEST(postgres_announcement, releases_and_new_terms_are_understood) {
  const auto r = parse_announcement(
      R"({"event":"released","election":"e","holder":"n1","session":"s1","token":41})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->what, announcement::kind::released);
  EXPECT_EQ(r->holder, "n1");
  EXPECT_EQ(r->session, "s1");
  EXPECT_EQ(r->token, 41u);
  const auto a = parse_announcement(
      R"({"event":"acquired","election":"e","holder":"n2","session":"s2","token":1795478993544884})");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->what, announcement::kind::acquired);
  EXPECT_EQ(a->token, 1795478993544884u);
}

TEST(postgres_announcement, a_probe_round_trips) {
  const auto p = parse_announcement(probe_payload("e \"x\"", "abc"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->what, announcement::kind::probe);
  EXPECT_EQ(p->election, "e \"x\"");
  EXPECT_EQ(p->session, "abc");
}

TEST(postgres_announcement, foreign_or_broken_payloads_are_ignored) {
  for (const char* bad :
       {"", "hello", "[]", "{}", R"({"event":"released"})",
        R"({"event":"other","election":"e","session":"s"})",
        R"({"event":"acquired","election":"e","holder":"n","session":"s","token":"7"})",
        R"({"event":"acquired","election":"e","holder":"n","session":"s","token":-1})",
        R"({"event":"acquired","election":"e","holder":"n","session":"s","token":1.5})",
        R"({"event":"released","election":3,"holder":"n","session":"s","token":1})"}) {
    EXPECT_FALSE(parse_announcement(bad)) << bad;
  }
}

}  // namespace
}  // namespace baton::postgres_detail
