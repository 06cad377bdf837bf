// The candidate card in an etcd registration's value: a second line, read
// back whole; a value of a version before cards reads as one without.
#include <gtest/gtest.h>

#include <string>

#include "etcd/candidate_registry.hpp"

namespace baton::etcd_detail {
namespace {

using namespace std::chrono_literals;

TEST(registration_card, rides_on_a_second_line) {
  registration r{3, 1500ms, 17};
  r.card = "standing=drained;advertise=db-1:5432";
  const auto value = registration_value(r);
  EXPECT_EQ(value, "3 1500 17\nstanding=drained;advertise=db-1:5432");
  const auto back = parse_registration(value);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->priority, 3);
  EXPECT_EQ(back->card, "standing=drained;advertise=db-1:5432");
  registration cooling{3, 1500ms, 17, 20000ms, 9};
  cooling.card = "standing=eligible";
  const auto marked = parse_registration(registration_value(cooling));
  ASSERT_TRUE(marked);
  EXPECT_EQ(marked->cooling, 20000ms);
  EXPECT_EQ(marked->marks, 9);
  EXPECT_EQ(marked->card, "standing=eligible");
}

TEST(registration_card, an_older_value_has_none) {
  const auto old = parse_registration("3 1500 17");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->card, "");
  EXPECT_FALSE(parse_registration("3 x 17\nstanding=eligible"));
}

}  // namespace
}  // namespace baton::etcd_detail
