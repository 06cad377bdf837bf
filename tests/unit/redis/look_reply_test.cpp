// What the standby script answers (a look: the lease's value and the token
// counter) and the registration argument that carries the card.
#include <gtest/gtest.h>

#include "redis/redis_error.hpp"
#include "redis/redis_reply.hpp"
#include "redis/scripts.hpp"

namespace {

using look_r = baton::redis_reply;

TEST(look_reply, names_the_holder_and_its_token) {
  const auto held = baton::parse_look_reply(
      look_r::array({look_r::string("node-b:0123abcd"), look_r::string("42")}));
  ASSERT_FALSE(held.ec) << held.detail;
  EXPECT_EQ(held.value.node, "node-b");
  EXPECT_EQ(held.value.token, 42u);
  const auto free =
      baton::parse_look_reply(look_r::array({look_r::string(""), look_r::string("7")}));
  ASSERT_FALSE(free.ec);
  EXPECT_EQ(free.value.node, "");
  const auto reserved = baton::parse_look_reply(
      look_r::array({look_r::string("(reserved) node-c node-b"), look_r::string("7")}));
  ASSERT_FALSE(reserved.ec);
  EXPECT_EQ(reserved.value.node, "") << "a reservation is nobody's lease";
}

TEST(look_reply, a_reply_of_another_shape_is_unexpected) {
  for (const auto& reply :
       {look_r::nil(), look_r::integer_reply(1), look_r::array({look_r::string("a:1")}),
        look_r::array({look_r::string("a:1"), look_r::string("x")}),
        look_r::array({look_r::string("a:1"), look_r::string("")}),
        look_r::array({look_r::string("a:1"), look_r::integer_reply(4)})}) {
    EXPECT_EQ(baton::parse_look_reply(reply).ec, baton::redis_errc::unexpected_reply)
        << baton::describe_reply(reply);
  }
}

TEST(look_reply, the_registration_argument_carries_the_card_after_the_priority) {
  EXPECT_EQ(baton::redis_detail::registration_argument(5, ""), "5");
  EXPECT_EQ(baton::redis_detail::registration_argument(-3, "standing=drained;advertise=h:1/x"),
            "-3/standing=drained;advertise=h:1/x");
}

}  // namespace
