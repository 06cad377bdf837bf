// The Redlock announcement merge (announcements.hpp): each release and term
// is heard once per master and told once; a watch that comes back while a
// majority kept listening wakes nobody.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "redlock/announcements.hpp"

namespace baton::redlock_detail {
namespace {

TEST(announcements, a_release_is_told_once_whatever_master_brings_it) {
  announcement_merge m(3);
  EXPECT_TRUE(m.released("released node-a:n1 7"));
  EXPECT_FALSE(m.released("released node-a:n1 7"));  // master 2's copy
  EXPECT_FALSE(m.released("released node-a:n1 7"));  // master 3's copy
  EXPECT_TRUE(m.released("released node-b:n2 9"));   // another node's
  EXPECT_FALSE(m.released("garbage"));
}

TEST(announcements, a_term_is_told_once_and_not_after_its_release) {
  announcement_merge m(3);
  EXPECT_TRUE(m.acquired({"node-a", 7}));
  EXPECT_FALSE(m.acquired({"node-a", 7}));
  ASSERT_TRUE(m.known());
  EXPECT_EQ(m.known()->holder, "node-a");
  EXPECT_TRUE(m.released("released node-a:n1 7"));
  EXPECT_FALSE(m.known()) << "a released term is not known any more";
  // A late copy of that term through a slower master: old news.
  EXPECT_FALSE(m.acquired({"node-a", 7}));
  // Its next term, and then its next release, are news again.
  EXPECT_TRUE(m.acquired({"node-a", 8}));
  EXPECT_TRUE(m.released("released node-a:n1 8"));
}

// A table of watch counts over time (3 masters, a majority is 2) and what
// each change says.
TEST(announcements, only_regained_trust_wakes_a_standby) {
  struct step {
    std::size_t subscribed;
    bool trust_changed;
    bool trusted;
    bool wake;
  };
  const std::vector<step> steps = {
      {1, false, false, false},  // connecting: not trusted yet, nothing changed
      {2, true, true, false},    // first trusted: nothing was missed before
      {3, false, true, false},
      {2, false, true, false},   // one master restarted: a majority still listens
      {3, false, true, false},   // it comes back: missed nothing, wakes nobody
      {1, true, false, false},   // a majority gone: announcements may be missed
      {2, true, true, true},     // back: a release may have been missed, try now
  };
  announcement_merge m(3);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto news = m.watches(steps[i].subscribed);
    EXPECT_EQ(news.trust_changed, steps[i].trust_changed) << "step " << i;
    EXPECT_EQ(news.trusted, steps[i].trusted) << "step " << i;
    EXPECT_EQ(news.wake, steps[i].wake) << "step " << i;
  }
}

}  // namespace
}  // namespace baton::redlock_detail
