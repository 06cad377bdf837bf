// lease.failsafe peers in the acquire's rows and the candidates' (the last
// columns lease_sql adds with the mode): a failsafe hold, a register-only
// answer, a peer address; malformed ones are errors, never a crash.
#include <gtest/gtest.h>

#include "postgres/lease_answers.hpp"

namespace baton::postgres_detail {
namespace {

using cell = std::optional<std::string>;

// A held row of the failsafe acquire, its hold and register-only columns last.
result_rows failsafe_row(cell outcome, cell holder, cell hold, cell abstained) {
  return {{outcome, cell("f"), cell("f"), cell("f"), holder, cell("42"), cell("0"),
           cell("1/00000001/2"), cell(), cell("f"), cell("0/1500790"), cell(), cell("-1"),
           cell(""), cell("-1"), cell("1795478993544884"), cell("f"), hold, abstained}};
}

TEST(postgres_failsafe_rows, a_hold_names_the_term_and_whom_to_ask) {
  const auto p = parse_acquire_rows(failsafe_row(
      "held_back", "",
      R"({"leader": "node-a", "token": 1795478993544800, "address": "10.0.0.1:9465",
          "peers": [{"node": "node-b", "address": "10.0.0.2:9465"}, {"node": "node-c", "address": ""}]})",
      "f"));
  ASSERT_FALSE(p.error) << p.error.message();
  EXPECT_EQ(p.answer.outcome, acquire_outcome::held_back);
  ASSERT_TRUE(p.answer.failsafe_hold);
  EXPECT_EQ(p.answer.failsafe_hold->leader, "node-a");
  EXPECT_EQ(p.answer.failsafe_hold->token, 1795478993544800u);
  EXPECT_EQ(p.answer.failsafe_hold->leader_address, "10.0.0.1:9465");
  EXPECT_EQ(p.answer.failsafe_hold->peers,
            (std::vector<failsafe_peer>{{"node-b", "10.0.0.2:9465"}, {"node-c", ""}}));
  EXPECT_EQ(p.answer.remaining, milliseconds(-1));
  EXPECT_NE(p.answer.why.find("failsafe hold: node-a's term"), std::string::npos) << p.answer.why;
}

TEST(postgres_failsafe_rows, a_register_only_answer_is_held_back_with_why) {
  const auto p = parse_acquire_rows(failsafe_row("held_back", "", cell(), "t"));
  ASSERT_FALSE(p.error) << p.error.message();
  EXPECT_TRUE(p.abstained);
  EXPECT_EQ(p.answer.outcome, acquire_outcome::held_back);
  EXPECT_FALSE(p.answer.failsafe_hold);
  EXPECT_TRUE(p.answer.holder.empty());
  EXPECT_NE(p.answer.why.find("may not take the lease yet"), std::string::npos);
}

TEST(postgres_failsafe_rows, a_plain_answer_of_the_mode_is_as_without_it) {
  const auto p = parse_acquire_rows(failsafe_row("held", "node-a", cell(), "f"));
  ASSERT_FALSE(p.error) << p.error.message();
  EXPECT_EQ(p.answer.outcome, acquire_outcome::held);
  EXPECT_EQ(p.answer.holder, "node-a");
  EXPECT_EQ(p.answer.token, 42u);
  EXPECT_FALSE(p.answer.failsafe_hold);
}

TEST(postgres_failsafe_rows, a_malformed_hold_or_verdict_is_an_error) {
  for (const char* hold : {"not json", "[]", R"({"leader": "", "token": 1, "address": "", "peers": []})",
                           R"({"leader": "a", "token": 0, "address": "", "peers": []})",
                           R"({"leader": "a", "token": -3, "address": "", "peers": []})",
                           R"({"leader": "a", "token": 1, "address": "", "peers": [{"node": ""}]})",
                           R"({"leader": "a", "token": 1, "peers": []})"}) {
    EXPECT_TRUE(parse_acquire_rows(failsafe_row("held_back", "", hold, "f")).error) << hold;
  }
  EXPECT_TRUE(parse_acquire_rows(failsafe_row("held", "", cell(), "maybe")).error);
  EXPECT_TRUE(parse_acquire_rows(failsafe_row("held", "", cell(), cell())).error);
}

TEST(postgres_failsafe_rows, a_candidate_row_of_the_mode_carries_its_peer_address) {
  const auto p = parse_candidate_rows(
      {{cell("node-b"), cell("0"), cell("10"), cell("5"), cell("0"), cell(""), cell("10.0.0.2:9465")}});
  ASSERT_FALSE(p.error) << p.error.message();
  ASSERT_EQ(p.list.size(), 1u);
  EXPECT_EQ(p.list[0].peer_address, "10.0.0.2:9465");
}

TEST(postgres_failsafe_rows, a_list_is_sent_as_json) {
  EXPECT_EQ(failsafe_peers_json({{"node-b", "10.0.0.2:9465"}, {"node-\"c", ""}}),
            R"([{"address":"10.0.0.2:9465","node":"node-b"},{"address":"","node":"node-\"c"}])");
  EXPECT_EQ(failsafe_peers_json({}), "[]");
}

}  // namespace
}  // namespace baton::postgres_detail
