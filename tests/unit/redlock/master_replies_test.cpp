// What a Redlock master's replies mean (master_replies.hpp): grants carry
// the master's counter and whether the lease was free; busy replies are the
// single-server script's; a reply of any other shape is an error with a
// detail, never a crash.
#include <gtest/gtest.h>

#include "redis/redis_error.hpp"
#include "redlock/master_replies.hpp"

namespace baton::redlock_detail {
namespace {

using kind = master_answer::kind;

redis_reply arr(std::vector<redis_reply> e) { return redis_reply::array(std::move(e)); }
redis_reply num(long long i) { return redis_reply::integer_reply(i); }
redis_reply str(std::string s) { return redis_reply::string(std::move(s)); }

TEST(grant_reply, a_grant_carries_the_counter_and_whether_the_lease_was_free) {
  auto r = parse_grant_reply(arr({num(1), str("1795557681313483"), num(1)}));
  ASSERT_FALSE(r.ec) << r.detail;
  EXPECT_EQ(r.value.answer.what, kind::granted);
  EXPECT_EQ(r.value.answer.counter, 1795557681313483u);
  EXPECT_TRUE(r.value.answer.was_free);
  EXPECT_FALSE(r.value.found_reset);

  r = parse_grant_reply(arr({num(1), str("7"), num(0)}));
  ASSERT_FALSE(r.ec) << r.detail;
  EXPECT_FALSE(r.value.answer.was_free);
  // Counters past 2^53 survive: they travel as strings.
  r = parse_grant_reply(arr({num(1), str("18446744073709551615"), num(0)}));
  ASSERT_FALSE(r.ec) << r.detail;
  EXPECT_EQ(r.value.answer.counter, 18446744073709551615u);
}

TEST(grant_reply, busy_answers_are_held_or_held_back_with_the_time_until_free) {
  auto held = parse_grant_reply(arr({num(0), str("node-b:abc"), num(2500), str("42"), str(""), num(2500400)}));
  ASSERT_FALSE(held.ec) << held.detail;
  EXPECT_EQ(held.value.answer.what, kind::held);
  EXPECT_EQ(held.value.answer.holder, "node-b");
  EXPECT_EQ(held.value.answer.counter, 42u);
  EXPECT_EQ(held.value.answer.free_in, std::chrono::microseconds(2500400));

  auto fenced = parse_grant_reply(arr({num(0), str("(store reset)"), num(900), str("42"), str("reset")}));
  ASSERT_FALSE(fenced.ec) << fenced.detail;
  EXPECT_EQ(fenced.value.answer.what, kind::held_back);
  EXPECT_EQ(fenced.value.answer.holder, "");
  EXPECT_EQ(fenced.value.answer.free_in, std::chrono::milliseconds(900));
  EXPECT_TRUE(fenced.value.found_reset);
}

TEST(grant_reply, a_reservation_for_another_node_is_held_with_its_target) {
  auto r = parse_grant_reply(
      arr({num(0), str("node-a"), num(4200), str("42"), str("reserved"), str("node-b")}));
  ASSERT_FALSE(r.ec) << r.detail;
  EXPECT_EQ(r.value.answer.what, kind::held);
  EXPECT_EQ(r.value.answer.holder, "node-a");
  EXPECT_EQ(r.value.answer.reserved_for, "node-b");
  EXPECT_EQ(r.value.answer.counter, 42u);
  EXPECT_EQ(r.value.answer.free_in, std::chrono::milliseconds(4200));
}

TEST(grant_reply, a_refusal_carries_the_masters_count_of_candidates_above_us) {
  auto held = parse_grant_reply(arr({num(0), str("node-b:abc"), num(2500), str("42"), str(""),
                                     num(2500400), str("outranked"), num(2)}));
  ASSERT_FALSE(held.ec) << held.detail;
  EXPECT_EQ(held.value.answer.what, kind::held);
  EXPECT_EQ(held.value.answer.outranked_by, 2);
  auto fenced = parse_grant_reply(arr(
      {num(0), str("(store reset)"), num(900), str("42"), str("fence"), str("outranked"), num(0)}));
  ASSERT_FALSE(fenced.ec) << fenced.detail;
  EXPECT_EQ(fenced.value.answer.what, kind::held_back);
  EXPECT_EQ(fenced.value.answer.outranked_by, 0);
  auto unknown = parse_grant_reply(arr({num(0), str("node-b:abc"), num(2500), str("42")}));
  ASSERT_FALSE(unknown.ec) << unknown.detail;
  EXPECT_EQ(unknown.value.answer.outranked_by, -1);
}

// lease.failsafe peers: a record's hold carries its list number in the
// third element, a promise's -1; a register-only attempt keeps its why.
TEST(grant_reply, a_failsafe_hold_keeps_its_term_and_list_number) {
  auto record = parse_grant_reply(arr({num(0), str("node-a:abc"), num(4), str("42"), str("failsafe"),
                                       str("41"), str("10.0.0.1:9465"), num(1), str("node-b"),
                                       str("10.0.0.2:9465")}));
  ASSERT_FALSE(record.ec) << record.detail;
  EXPECT_EQ(record.value.answer.what, kind::held_back);
  ASSERT_TRUE(record.value.answer.failsafe_hold);
  EXPECT_EQ(record.value.answer.failsafe_hold->leader, "node-a");
  EXPECT_EQ(record.value.answer.failsafe_hold->token, 41u);
  EXPECT_EQ(record.value.answer.hold_list, 4);
  EXPECT_FALSE(record.value.answer.why.empty());

  auto promise = parse_grant_reply(arr({num(0), str("node-a"), num(-1), str("42"), str("failsafe"),
                                        str("5000"), str("-"), num(0)}));
  ASSERT_FALSE(promise.ec) << promise.detail;
  EXPECT_EQ(promise.value.answer.hold_list, -1);

  auto bad = parse_grant_reply(arr({num(0), str("node-a"), str("x"), str("42"), str("failsafe"),
                                    str("5000"), str("-"), num(0)}));
  EXPECT_EQ(bad.ec, redis_errc::unexpected_reply);

  auto abstained =
      parse_grant_reply(arr({num(0), str(""), num(-1), str("42"), str("abstained")}));
  ASSERT_FALSE(abstained.ec) << abstained.detail;
  EXPECT_EQ(abstained.value.answer.what, kind::held_back);
  EXPECT_NE(abstained.value.answer.why.find("may not take the lease yet"), std::string::npos);
  EXPECT_FALSE(abstained.value.found_reset);
}

TEST(grant_reply, other_shapes_are_errors_that_say_what_came) {
  for (const auto& bad : {arr({num(1), str("x1"), num(1)}), arr({num(1), str(""), num(1)}),
                          arr({num(1), str("5"), num(2)}), arr({num(1), num(5)}),
                          arr({num(1), str("-5"), num(0)}), num(1), redis_reply::nil()}) {
    auto r = parse_grant_reply(bad);
    EXPECT_EQ(r.ec, redis_errc::unexpected_reply) << describe_reply(bad);
    EXPECT_NE(r.detail.find("acquire: unexpected reply"), std::string::npos) << r.detail;
  }
  auto refused = parse_grant_reply(redis_reply::error("NOPERM this user has no permissions to run the 'evalsha' command"));
  EXPECT_EQ(refused.ec, redis_errc::permission_denied);
  EXPECT_NE(refused.detail.find("NOPERM"), std::string::npos);
}

TEST(write_back_reply, written_or_not_with_the_reason) {
  auto ok = parse_write_back_reply(arr({num(1), str("")}));
  ASSERT_FALSE(ok.ec);
  EXPECT_TRUE(ok.value);
  auto no = parse_write_back_reply(arr({num(0), str("token counter already at 900")}));
  ASSERT_FALSE(no.ec);
  EXPECT_FALSE(no.value);
  EXPECT_EQ(no.detail, "token counter already at 900");
  for (const auto& bad : {arr({num(2), str("")}), arr({num(1)}), num(1), arr({str("1"), str("")})}) {
    EXPECT_EQ(parse_write_back_reply(bad).ec, redis_errc::unexpected_reply) << describe_reply(bad);
  }
}

}  // namespace
}  // namespace baton::redlock_detail

namespace baton::redlock_detail {
namespace {

TEST(renewal_reply, renewed_taken_or_not_ours) {
  EXPECT_EQ(parse_renewal_reply(redis_reply::integer_reply(1)).value, renewal::renewed);
  EXPECT_EQ(parse_renewal_reply(redis_reply::integer_reply(2)).value, renewal::taken);
  EXPECT_EQ(parse_renewal_reply(redis_reply::integer_reply(0)).value, renewal::not_ours);
  EXPECT_EQ(parse_renewal_reply(redis_reply::integer_reply(3)).ec, redis_errc::unexpected_reply);
  EXPECT_EQ(parse_renewal_reply(redis_reply::string("1")).ec, redis_errc::unexpected_reply);
}

}  // namespace
}  // namespace baton::redlock_detail
