// The candidate card in a ZooKeeper registry node's data: a line "card
// <card>" after the candidate's, before a cool-down's line.
#include <gtest/gtest.h>

#include <string>

#include "zookeeper/lease_nodes.hpp"

namespace baton::zookeeper_detail {
namespace {

using namespace std::chrono_literals;

TEST(candidate_card_node, a_line_of_its_own_that_the_other_readers_skip) {
  const candidate_value v{4, "node-a", "standing=never;advertise=db-a:5432"};
  const auto data = encode_candidate(v);
  EXPECT_EQ(data, "4 node-a\ncard standing=never;advertise=db-a:5432");
  EXPECT_EQ(candidate_card_of(data), "standing=never;advertise=db-a:5432");
  const auto back = decode_candidate(data);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->node_id, "node-a");
  EXPECT_EQ(back->priority, 4);
  const auto cooling = encode_cooling_candidate(v, 20s);
  EXPECT_EQ(candidate_card_of(cooling), "standing=never;advertise=db-a:5432");
  EXPECT_EQ(cooling_left(cooling, 1000, 6000), 15s);
  EXPECT_EQ(candidate_card_of("4 node-a"), "") << "a version before cards";
  EXPECT_EQ(encode_candidate({4, "node-a"}), "4 node-a");
}

}  // namespace
}  // namespace baton::zookeeper_detail
