// Parsing of the acquire script's replies, without a server: every
// well-formed answer (granted, held, reserved, refused and why, a failsafe
// hold), and the malformed shapes that must become errors, not crashes. The
// other scripts' replies are redis_reply_test.cpp's.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "redis/redis_error.hpp"
#include "redis/redis_reply.hpp"

namespace {

using baton::acquire_outcome;
using baton::redis_errc;
using baton::redis_reply;
using r = baton::redis_reply;

TEST(acquire_reply_parsing, acquired_with_token) {
  auto p = baton::parse_acquire_reply(
      r::array({r::integer_reply(1), r::integer_reply(1700000000123457)}));
  ASSERT_FALSE(p.ec) << p.detail;
  EXPECT_TRUE(p.value.answer.acquired());
  EXPECT_EQ(p.value.answer.token, 1700000000123457u);
  EXPECT_EQ(p.value.answer.holder, "");
}

TEST(acquire_reply_parsing, held_by_another_node) {
  auto p = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("node-b:0123456789abcdef"), r::integer_reply(2500),
                r::string("42")}));
  ASSERT_FALSE(p.ec) << p.detail;
  EXPECT_FALSE(p.value.answer.acquired());
  EXPECT_EQ(p.value.answer.holder, "node-b");
  EXPECT_EQ(p.value.answer.remaining, baton::milliseconds(2500));
  EXPECT_EQ(p.value.answer.token, 42u);
}

TEST(acquire_reply_parsing, held_with_the_free_time_to_the_microsecond) {
  auto p = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("node-b:0123456789abcdef"), r::integer_reply(2500),
                r::string("42"), r::string(""), r::integer_reply(2500731)}));
  ASSERT_FALSE(p.ec) << p.detail;
  EXPECT_EQ(p.value.answer.outcome, acquire_outcome::held);
  EXPECT_EQ(p.value.answer.remaining, baton::milliseconds(2500));
  EXPECT_EQ(p.value.answer.free_in, std::chrono::microseconds(2500731));
  // Without it (older replies, other stores) it is unknown.
  auto plain = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("a:b"), r::integer_reply(2500), r::string("7")}));
  ASSERT_FALSE(plain.ec);
  EXPECT_LT(plain.value.answer.free_in.count(), 0);
}

TEST(acquire_reply_parsing, held_with_the_number_of_candidates_listening) {
  auto p = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("node-b:0123456789abcdef"), r::integer_reply(2500),
                r::string("42"), r::string(""), r::integer_reply(2500731), r::integer_reply(1001)}));
  ASSERT_FALSE(p.ec) << p.detail;
  EXPECT_EQ(p.value.answer.outcome, acquire_outcome::held);
  EXPECT_EQ(p.value.answer.free_in, std::chrono::microseconds(2500731));
  EXPECT_EQ(p.value.answer.contenders, 1001);
  // Without it, unknown.
  auto plain = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("a:b"), r::integer_reply(2500), r::string("7"),
                r::string(""), r::integer_reply(2500100)}));
  ASSERT_FALSE(plain.ec);
  EXPECT_LT(plain.value.answer.contenders, 0);
  // A negative count, a count that is not a number, or a bad free time is unexpected.
  for (const auto& last : {r::integer_reply(-1), r::string("3")}) {
    auto bad = baton::parse_acquire_reply(
        r::array({r::integer_reply(0), r::string("b:c"), r::integer_reply(2500), r::string("7"),
                  r::string(""), r::integer_reply(2500100), last}));
    EXPECT_EQ(bad.ec, redis_errc::unexpected_reply);
  }
  auto contradicting = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("b:c"), r::integer_reply(2500), r::string("7"),
                r::string(""), r::integer_reply(9999999), r::integer_reply(3)}));
  EXPECT_EQ(contradicting.ec, redis_errc::unexpected_reply);
}

// A large election's held answer says whether this candidate is one of its
// front runners (the count is then theirs and the holder's) or a back runner.
TEST(acquire_reply_parsing, held_as_a_front_or_a_back_runner) {
  const auto held = [](redis_reply runner) {
    return baton::parse_acquire_reply(
        r::array({r::integer_reply(0), r::string("node-b:0123456789abcdef"), r::integer_reply(2500),
                  r::string("42"), r::string(""), r::integer_reply(2500731), r::integer_reply(4),
                  std::move(runner)}));
  };
  auto front = held(r::string("front"));
  ASSERT_FALSE(front.ec) << front.detail;
  EXPECT_FALSE(front.value.answer.back_runner);
  EXPECT_EQ(front.value.answer.contenders, 4);
  EXPECT_EQ(front.value.answer.holder, "node-b");
  EXPECT_EQ(front.value.answer.free_in, std::chrono::microseconds(2500731));
  auto back = held(r::string("back"));
  ASSERT_FALSE(back.ec) << back.detail;
  EXPECT_TRUE(back.value.answer.back_runner);
  // Anything else in its place is unexpected.
  for (auto bad : {r::string("middle"), r::string(""), r::integer_reply(1)})
    EXPECT_EQ(held(bad).ec, redis_errc::unexpected_reply) << baton::describe_reply(bad);
  // Without it, not a back runner; and with the outranked count after it.
  auto plain = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("a:b"), r::integer_reply(2500), r::string("7"),
                r::string(""), r::integer_reply(2500100), r::integer_reply(9)}));
  ASSERT_FALSE(plain.ec);
  EXPECT_FALSE(plain.value.answer.back_runner);
  auto both = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("a:b"), r::integer_reply(2500), r::string("7"),
                r::string(""), r::integer_reply(2500100), r::integer_reply(900), r::string("back"),
                r::string("outranked"), r::integer_reply(2)}));
  ASSERT_FALSE(both.ec) << both.detail;
  EXPECT_TRUE(both.value.answer.back_runner);
  EXPECT_EQ(both.value.answer.outranked_by, 2);
  EXPECT_EQ(both.value.answer.contenders, 900);
}

TEST(acquire_reply_parsing, a_refusal_counts_the_candidates_that_outrank_this_one) {
  const auto outranked = [](std::vector<redis_reply> e, long long n) {
    e.push_back(r::string("outranked"));
    e.push_back(r::integer_reply(n));
    return r::array(std::move(e));
  };
  // Every shape of refusal carries it: held, with the free time and the
  // listeners, reserved, and held back.
  const std::vector<std::vector<redis_reply>> refusals{
      {r::integer_reply(0), r::string("b:c"), r::integer_reply(2500), r::string("7")},
      {r::integer_reply(0), r::string("b:c"), r::integer_reply(2500), r::string("7"), r::string(""),
       r::integer_reply(2500100), r::integer_reply(4)},
      {r::integer_reply(0), r::string("node-a"), r::integer_reply(4200), r::string("42"),
       r::string("reserved"), r::string("node-b")},
      {r::integer_reply(0), r::string("(store reset)"), r::integer_reply(900), r::string("7"),
       r::string("fence")}};
  for (const auto& refusal : refusals) {
    auto p = baton::parse_acquire_reply(outranked(refusal, 2));
    ASSERT_FALSE(p.ec) << p.detail;
    EXPECT_FALSE(p.value.answer.acquired());
    EXPECT_EQ(p.value.answer.outranked_by, 2) << baton::describe_reply(r::array(refusal));
    // The rest reads as without it.
    auto plain = baton::parse_acquire_reply(r::array(refusal));
    ASSERT_FALSE(plain.ec);
    EXPECT_EQ(plain.value.answer.outranked_by, -1) << "unknown without it";
    EXPECT_EQ(p.value.answer.outcome, plain.value.answer.outcome);
    EXPECT_EQ(p.value.answer.holder, plain.value.answer.holder);
    EXPECT_EQ(p.value.answer.remaining, plain.value.answer.remaining);
    EXPECT_EQ(p.value.answer.contenders, plain.value.answer.contenders);
    EXPECT_EQ(p.value.answer.reserved_for, plain.value.answer.reserved_for);
  }
  EXPECT_EQ(baton::parse_acquire_reply(outranked(refusals[0], 0)).value.answer.outranked_by, 0);
  // A negative count, a count that is not a number, or one after a grant is unexpected.
  EXPECT_EQ(baton::parse_acquire_reply(outranked(refusals[0], -1)).ec,
            redis_errc::unexpected_reply);
  auto text = refusals[0];
  text.push_back(r::string("outranked"));
  text.push_back(r::string("2"));
  EXPECT_EQ(baton::parse_acquire_reply(r::array(text)).ec, redis_errc::unexpected_reply);
  EXPECT_EQ(baton::parse_acquire_reply(
                outranked({r::integer_reply(1), r::integer_reply(1700000000123457)}, 1))
                .ec,
            redis_errc::unexpected_reply);
}

TEST(acquire_reply_parsing, a_free_time_that_contradicts_pttl_is_unexpected) {
  for (long long free_us : {2499999LL, 2502001LL, -1LL}) {
    auto p = baton::parse_acquire_reply(
        r::array({r::integer_reply(0), r::string("b:c"), r::integer_reply(2500), r::string("7"),
                  r::string(""), r::integer_reply(free_us)}));
    EXPECT_EQ(p.ec, redis_errc::unexpected_reply) << free_us;
  }
  auto flagged = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("b:c"), r::integer_reply(2500), r::string("7"),
                r::string("fence"), r::integer_reply(2500100)}));
  EXPECT_EQ(flagged.ec, redis_errc::unexpected_reply);
}

TEST(acquire_reply_parsing, held_without_token_or_expiry) {
  // A key written by hand: no token counter, no TTL (PTTL -1).
  auto p = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("someone"), r::integer_reply(-1), r::string("")}));
  ASSERT_FALSE(p.ec) << p.detail;
  EXPECT_FALSE(p.value.answer.acquired());
  EXPECT_EQ(p.value.answer.holder, "someone");
  EXPECT_LT(p.value.answer.remaining.count(), 0);
  EXPECT_EQ(p.value.answer.token, 0u);
}

TEST(acquire_reply_parsing, pttl_minus_two_is_unknown) {
  auto p = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("a:b"), r::integer_reply(-2), r::string("7")}));
  ASSERT_FALSE(p.ec);
  EXPECT_EQ(p.value.answer.remaining, baton::milliseconds(-1));
}

TEST(acquire_reply_parsing, server_error_is_reported) {
  auto p = baton::parse_acquire_reply(r::error("WRONGTYPE Operation against a key"));
  EXPECT_EQ(p.ec, redis_errc::server_error);
  EXPECT_NE(p.detail.find("WRONGTYPE"), std::string::npos);
}

TEST(acquire_reply_parsing, noauth_is_auth_failed) {
  auto p = baton::parse_acquire_reply(r::error("NOAUTH Authentication required."));
  EXPECT_EQ(p.ec, redis_errc::auth_failed);
}

TEST(acquire_reply_parsing, malformed_shapes_are_unexpected) {
  const std::vector<redis_reply> bad = {
      r::nil(),
      r::integer_reply(1),
      r::string("1"),
      r::status("OK"),
      r::array({}),
      r::array({r::string("1"), r::integer_reply(5)}),
      r::array({r::integer_reply(1)}),
      r::array({r::integer_reply(1), r::string("5")}),
      r::array({r::integer_reply(1), r::integer_reply(0)}),
      r::array({r::integer_reply(1), r::integer_reply(-3)}),
      r::array({r::integer_reply(1), r::integer_reply(5), r::integer_reply(6)}),
      r::array({r::integer_reply(2), r::integer_reply(5)}),
      r::array({r::integer_reply(0)}),
      r::array({r::integer_reply(0), r::string("a:b"), r::integer_reply(10)}),
      r::array({r::integer_reply(0), r::nil(), r::integer_reply(10), r::string("1")}),
      r::array({r::integer_reply(0), r::string("a:b"), r::string("10"), r::string("1")}),
      r::array({r::integer_reply(0), r::string("a:b"), r::integer_reply(10), r::string("x1")}),
      r::array({r::integer_reply(0), r::string("a:b"), r::integer_reply(10), r::string("-1")}),
      r::array({r::integer_reply(0), r::string("a:b"), r::integer_reply(10),
                r::string("99999999999999999999999")}),
      r::array({r::integer_reply(0), r::string("a:b"), r::integer_reply(10), r::nil()}),
      r::array({r::integer_reply(0), r::string("a:b"), r::integer_reply(10), r::string("1"),
                r::string("extra")}),
  };
  for (const auto& reply : bad) {
    auto p = baton::parse_acquire_reply(reply);
    EXPECT_EQ(p.ec, redis_errc::unexpected_reply) << baton::describe_reply(reply);
    EXPECT_NE(p.detail.find("acquire"), std::string::npos) << p.detail;
  }
}

TEST(acquire_reply_parsing, refusal_reasons) {
  auto taken = baton::parse_acquire_reply(
      r::array({r::integer_reply(1), r::integer_reply(7)}));
  ASSERT_FALSE(taken.ec) << taken.detail;
  EXPECT_TRUE(taken.value.answer.outcome == acquire_outcome::acquired && !taken.value.found_reset);

  auto held = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("node-b:00"), r::integer_reply(900), r::string("7")}));
  ASSERT_FALSE(held.ec) << held.detail;
  EXPECT_TRUE(held.value.answer.outcome == acquire_outcome::held && !held.value.found_reset);
  EXPECT_EQ(held.value.answer.holder, "node-b");

  // The fence is up and no lease exists: the script's marker holder becomes
  // no holder at all; the wait is the fence's PTTL.
  auto fenced = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string(std::string(baton::fenced_without_holder)),
                r::integer_reply(1800), r::string("1700000000123457"), r::string("fence")}));
  ASSERT_FALSE(fenced.ec) << fenced.detail;
  EXPECT_TRUE(fenced.value.answer.outcome == acquire_outcome::held_back &&
              !fenced.value.found_reset);
  EXPECT_FALSE(fenced.value.answer.acquired());
  EXPECT_TRUE(fenced.value.answer.outcome == acquire_outcome::held_back &&
              fenced.value.answer.holder == "")
      << fenced.value.answer.holder;
  EXPECT_EQ(fenced.value.answer.remaining, baton::milliseconds(1800));
  EXPECT_EQ(fenced.value.answer.token, 1700000000123457u);

  auto reset = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("(store reset)"), r::integer_reply(2000),
                r::string("1700000000123457"), r::string("reset")}));
  ASSERT_FALSE(reset.ec) << reset.detail;
  EXPECT_TRUE(reset.value.answer.outcome == acquire_outcome::held_back &&
              reset.value.found_reset);

  // A fence without expiry: the wait is unknown.
  auto plain = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("(store reset)"), r::integer_reply(-1),
                r::string("5"), r::string("fence")}));
  ASSERT_FALSE(plain.ec) << plain.detail;
  EXPECT_EQ(plain.value.answer.remaining, baton::milliseconds(-1));
}

TEST(acquire_reply_parsing, a_lease_under_the_fence_keeps_its_holder) {
  // The fence is up and a lease from before the reset still exists: held
  // back, naming that holder.
  auto p = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("node-a:00ff"), r::integer_reply(1400),
                r::string("9"), r::string("fence")}));
  ASSERT_FALSE(p.ec) << p.detail;
  EXPECT_EQ(p.value.answer.outcome, acquire_outcome::held_back);
  EXPECT_EQ(p.value.answer.holder, "node-a");
  EXPECT_EQ(p.value.answer.remaining, baton::milliseconds(1400));
  EXPECT_FALSE(p.value.found_reset);
}

TEST(acquire_reply_parsing, unknown_refusal_reasons_are_unexpected) {
  for (const auto& fifth : {r::string("Fence"), r::string(""), r::integer_reply(1), r::nil()}) {
    auto p = baton::parse_acquire_reply(r::array(
        {r::integer_reply(0), r::string("a:b"), r::integer_reply(10), r::string("1"), fifth}));
    EXPECT_EQ(p.ec, redis_errc::unexpected_reply) << baton::describe_reply(fifth);
  }
}

TEST(acquire_reply_parsing, a_failsafe_hold_names_the_term_and_whom_to_ask) {
  auto p = baton::parse_acquire_reply(r::array(
      {r::integer_reply(0), r::string("node-1:0123abcd"), r::integer_reply(-1),
       r::string("1700000000000099"), r::string("failsafe"), r::string("1700000000000042"),
       r::string("10.0.0.1:9465"), r::integer_reply(2), r::string("node-2"),
       r::string("10.0.0.2:9465"), r::string("node-3"), r::string("-"), r::string("outranked"),
       r::integer_reply(1)}));
  ASSERT_FALSE(p.ec) << p.detail;
  const auto& a = p.value.answer;
  EXPECT_EQ(a.outcome, baton::acquire_outcome::held_back);
  EXPECT_EQ(a.remaining, baton::milliseconds(-1));
  EXPECT_EQ(a.outranked_by, 1);
  EXPECT_NE(a.why.find("failsafe hold: node-1's term 1700000000000042"), std::string::npos) << a.why;
  ASSERT_TRUE(a.failsafe_hold);
  EXPECT_EQ(a.failsafe_hold->leader, "node-1");
  EXPECT_EQ(a.failsafe_hold->token, 1700000000000042u);
  EXPECT_EQ(a.failsafe_hold->leader_address, "10.0.0.1:9465");
  ASSERT_EQ(a.failsafe_hold->peers.size(), 2u);
  EXPECT_EQ(a.failsafe_hold->peers[0], (baton::failsafe_peer{"node-2", "10.0.0.2:9465"}));
  EXPECT_EQ(a.failsafe_hold->peers[1], (baton::failsafe_peer{"node-3", ""}));
  EXPECT_FALSE(p.value.found_reset);
  // A registered promise's hold: the leader by its node id, nobody listed
  // ("-"), and a peer whose node id is "outranked" still parses.
  auto promised = baton::parse_acquire_reply(r::array(
      {r::integer_reply(0), r::string("node-1"), r::integer_reply(-1), r::string("7"),
       r::string("failsafe"), r::string("5"), r::string("-"), r::integer_reply(1),
       r::string("outranked"), r::string("10.0.0.9:1")}));
  ASSERT_FALSE(promised.ec) << promised.detail;
  EXPECT_EQ(promised.value.answer.failsafe_hold->leader, "node-1");
  EXPECT_EQ(promised.value.answer.failsafe_hold->leader_address, "");
  EXPECT_EQ(promised.value.answer.failsafe_hold->peers[0].node, "outranked");
  for (const auto& bad :
       {// a count that does not match, a term token of 0, a missing address
        r::array({r::integer_reply(0), r::string("node-1:x"), r::integer_reply(-1), r::string("7"),
                  r::string("failsafe"), r::string("5"), r::string("-"), r::integer_reply(2),
                  r::string("node-2"), r::string("-")}),
        r::array({r::integer_reply(0), r::string("node-1:x"), r::integer_reply(-1), r::string("7"),
                  r::string("failsafe"), r::string("0"), r::string("-"), r::integer_reply(0)}),
        r::array({r::integer_reply(0), r::string("node-1:x"), r::integer_reply(-1), r::string("7"),
                  r::string("failsafe"), r::string("5"), r::string("-"), r::integer_reply(1),
                  r::string("node-2")})}) {
    EXPECT_EQ(baton::parse_acquire_reply(bad).ec, redis_errc::unexpected_reply)
        << baton::describe_reply(bad);
  }
}

TEST(acquire_reply_parsing, a_register_only_attempt_is_held_back_with_why) {
  auto p = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string(""), r::integer_reply(-1), r::string("12"),
                r::string("abstained"), r::string("outranked"), r::integer_reply(0)}));
  ASSERT_FALSE(p.ec) << p.detail;
  EXPECT_EQ(p.value.answer.outcome, baton::acquire_outcome::held_back);
  EXPECT_EQ(p.value.answer.holder, "");
  EXPECT_NE(p.value.answer.why.find("may not take the lease yet"), std::string::npos);
  EXPECT_FALSE(p.value.answer.failsafe_hold);
}

TEST(acquire_reply_parsing, a_reservation_for_another_node_is_held_naming_it) {
  auto p = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string("node-a"), r::integer_reply(4200), r::string("42"),
                r::string("reserved"), r::string("node-b")}));
  ASSERT_FALSE(p.ec) << p.detail;
  EXPECT_EQ(p.value.answer.outcome, acquire_outcome::held);
  EXPECT_EQ(p.value.answer.holder, "node-a");
  EXPECT_EQ(p.value.answer.reserved_for, "node-b");
  EXPECT_EQ(p.value.answer.remaining, baton::milliseconds(4200));
  EXPECT_EQ(p.value.answer.token, 42u);
  EXPECT_FALSE(p.value.found_reset);
  // A reservation for nobody, or named by a number, is no answer.
  for (const auto& to : {r::string(""), r::integer_reply(3)}) {
    auto bad = baton::parse_acquire_reply(
        r::array({r::integer_reply(0), r::string("node-a"), r::integer_reply(4200),
                  r::string("42"), r::string("reserved"), to}));
    EXPECT_EQ(bad.ec, redis_errc::unexpected_reply) << baton::describe_reply(to);
  }
}

}  // namespace
