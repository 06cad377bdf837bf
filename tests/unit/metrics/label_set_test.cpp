#include "../../../src/metrics/label_set.hpp"

#include <gtest/gtest.h>

#include <string>

namespace baton {
namespace {

TEST(label_set, known_values_pass_and_a_closed_set_maps_the_rest_to_other) {
  label_set hooks({"on_start", "on_stop"}, 2);
  EXPECT_EQ(hooks.admit("on_start"), "on_start");
  EXPECT_EQ(hooks.admit("on_stop"), "on_stop");
  EXPECT_EQ(hooks.admit("on_reload"), "other");
  EXPECT_EQ(hooks.admit(""), "other");
}

TEST(label_set, admits_new_values_up_to_the_limit_then_other) {
  label_set kinds({"connect"}, 3);
  EXPECT_EQ(kinds.admit("a"), "a");
  EXPECT_EQ(kinds.admit("b"), "b");
  EXPECT_EQ(kinds.admit("c"), "other");
  // Values admitted before the set filled keep their own series.
  EXPECT_EQ(kinds.admit("a"), "a");
  EXPECT_EQ(kinds.admit("connect"), "connect");
}

TEST(label_set, other_never_takes_a_slot) {
  label_set kinds({}, 1);
  EXPECT_EQ(kinds.admit("other"), "other");
  EXPECT_EQ(kinds.admit("x"), "x");
}

}  // namespace
}  // namespace baton
