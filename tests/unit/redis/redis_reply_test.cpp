// Parsing of the Lua scripts' replies, without a server: every well-formed
// answer, and the malformed shapes that must become errors, not crashes.
// The acquire script's are acquire_reply_test.cpp's.
#include "redis/redis_reply.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "redis/redis_error.hpp"
#include "redis/replica_requirement.hpp"

namespace {

using baton::acquire_outcome;
using baton::redis_errc;
using baton::redis_reply;
using r = baton::redis_reply;

TEST(run_id_from_info, finds_the_field_at_the_start_of_a_line) {
  const std::string id = "1ffd277c2117705f6c363cbde81590e2857efa6f";
  EXPECT_EQ(baton::run_id_from_info("# Server\r\nredis_version:7.0.11\r\nrun_id:" + id +
                                    "\r\ntcp_port:6379\r\n"),
            id);
  EXPECT_EQ(baton::run_id_from_info("run_id:" + id), id);
  EXPECT_EQ(baton::run_id_from_info("# Server\nrun_id:" + id + "\n"), id);
}

TEST(run_id_from_info, missing_or_malformed_is_empty) {
  EXPECT_EQ(baton::run_id_from_info(""), "");
  EXPECT_EQ(baton::run_id_from_info("# Server\r\nredis_version:7.0.11\r\n"), "");
  EXPECT_EQ(baton::run_id_from_info("run_id:abc\r\n"), "");
  EXPECT_EQ(baton::run_id_from_info("run_id:1FFD277C2117705F6C363CBDE81590E2857EFA6F\r\n"), "");
  EXPECT_EQ(baton::run_id_from_info("master_run_id:1ffd277c2117705f6c363cbde81590e2857efa6f\r\n"),
            "");
  EXPECT_EQ(baton::run_id_from_info("run_id:1ffd277c2117705f6c363cbde81590e2857efa6fff\r\n"), "");
}

TEST(renew_reply_parsing, one_is_renewed_zero_is_lost) {
  auto renewed = baton::parse_renew_reply(r::integer_reply(1));
  ASSERT_FALSE(renewed.ec);
  EXPECT_EQ(renewed.value, baton::renew_answer::renewed);
  auto lost = baton::parse_renew_reply(r::integer_reply(0));
  ASSERT_FALSE(lost.ec);
  EXPECT_EQ(lost.value, baton::renew_answer::lost);
}

TEST(renew_reply_parsing, malformed_shapes_are_unexpected) {
  for (const auto& reply : {r::integer_reply(2), r::integer_reply(-1), r::nil(), r::string("1"),
                            r::status("OK"), r::array({r::integer_reply(1)})}) {
    auto p = baton::parse_renew_reply(reply);
    EXPECT_EQ(p.ec, redis_errc::unexpected_reply) << baton::describe_reply(reply);
  }
  EXPECT_EQ(baton::parse_renew_reply(r::error("ERR boom")).ec, redis_errc::server_error);
}

TEST(release_reply_parsing, one_is_released_zero_is_not) {
  auto released = baton::parse_release_reply(r::integer_reply(1));
  ASSERT_FALSE(released.ec);
  EXPECT_EQ(released.value, baton::release_answer::released);
  auto kept = baton::parse_release_reply(r::integer_reply(0));
  ASSERT_FALSE(kept.ec);
  EXPECT_EQ(kept.value, baton::release_answer::not_ours);
}

TEST(release_reply_parsing, malformed_shapes_are_unexpected) {
  for (const auto& reply : {r::integer_reply(7), r::nil(), r::string("0"), r::array({})}) {
    auto p = baton::parse_release_reply(reply);
    EXPECT_EQ(p.ec, redis_errc::unexpected_reply) << baton::describe_reply(reply);
    EXPECT_NE(p.detail.find("release"), std::string::npos);
  }
  auto err = baton::parse_release_reply(r::error("ERR x"));
  EXPECT_EQ(err.ec, redis_errc::server_error);
  EXPECT_EQ(err.detail, "release: ERR x");
}

TEST(candidates_reply_parsing, every_registration_and_the_bad_shapes) {
  constexpr baton::milliseconds ttl{5000};
  auto p = baton::parse_candidates_reply(
      r::array({r::string("node-a"), r::integer_reply(0), r::integer_reply(1500),
                r::integer_reply(9000), r::string("0123abcd"), r::integer_reply(0),
                r::string("10.0.0.1:9465"), r::string("standing=drained;advertise=h:1"),
                r::string("node-b"), r::integer_reply(-2), r::integer_reply(0),
                r::integer_reply(12), r::string("-"), r::integer_reply(7400), r::string(""),
                r::string("")}),
      ttl);
  ASSERT_FALSE(p.ec) << p.detail;
  ASSERT_EQ(p.value.size(), 2u);
  EXPECT_EQ(p.value[0].info.node, "node-a");
  EXPECT_EQ(p.value[0].info.priority, 0);
  EXPECT_EQ(p.value[0].info.live_for, baton::milliseconds(1500));
  EXPECT_EQ(p.value[0].left, baton::milliseconds(9000));
  EXPECT_EQ(p.value[0].nonce, "0123abcd");
  EXPECT_EQ(p.value[0].info.last_attempt_ago, baton::milliseconds(1000)) << "two ttls less left";
  EXPECT_EQ(p.value[0].info.cooling_down_for, baton::milliseconds(0));
  EXPECT_EQ(p.value[0].info.peer_address, "10.0.0.1:9465");
  EXPECT_EQ(p.value[1].info.peer_address, "") << "none published";
  EXPECT_EQ(p.value[0].info.card, "standing=drained;advertise=h:1");
  EXPECT_EQ(p.value[1].info.card, "") << "none published";
  EXPECT_EQ(p.value[1].info.priority, -2);
  EXPECT_EQ(p.value[1].nonce, "-");
  EXPECT_EQ(p.value[1].info.last_attempt_ago, baton::milliseconds(9988));
  EXPECT_EQ(p.value[1].info.cooling_down_for, baton::milliseconds(7400));
  // A line cut to two ttls ahead (the server's clock went back) was just made.
  auto ahead = baton::parse_candidates_reply(
      r::array({r::string("a"), r::integer_reply(0), r::integer_reply(1), r::integer_reply(10001),
                r::string("n"), r::integer_reply(0), r::string(""), r::string("")}),
      ttl);
  ASSERT_FALSE(ahead.ec) << ahead.detail;
  EXPECT_EQ(ahead.value[0].info.last_attempt_ago, baton::milliseconds(0));
  auto none = baton::parse_candidates_reply(r::array({}), ttl);
  ASSERT_FALSE(none.ec);
  EXPECT_TRUE(none.value.empty());
  const auto n = r::string("ab");
  const auto z = r::integer_reply(0);
  const auto a = r::string("");
  for (const auto& reply :
       {r::nil(), r::integer_reply(1), r::array({r::string("a"), r::integer_reply(0)}),
        r::array({r::string(""), r::integer_reply(0), r::integer_reply(1), r::integer_reply(1), n,
                  z, a, a}),
        r::array({r::string("a"), r::string("0"), r::integer_reply(1), r::integer_reply(1), n, z, a,
                  a}),
        r::array({r::string("a"), r::integer_reply(1LL << 40), r::integer_reply(1),
                  r::integer_reply(1), n, z, a, a}),
        r::array({r::string("a"), r::integer_reply(0), r::integer_reply(-1), r::integer_reply(1), n,
                  z, a, a}),
        r::array({r::string("a"), r::integer_reply(0), r::integer_reply(1), r::integer_reply(0), n,
                  z, a, a}),
        // The six fields of a version before the peer address, the seven of
        // one before the card, and a bad cool-down or address.
        r::array({r::string("a"), r::integer_reply(0), r::integer_reply(1), r::integer_reply(1), n,
                  z}),
        r::array({r::string("a"), r::integer_reply(0), r::integer_reply(1), r::integer_reply(1), n,
                  z, a}),
        r::array({r::string("a"), r::integer_reply(0), r::integer_reply(1), r::integer_reply(1), n,
                  r::integer_reply(-1), a, a}),
        r::array({r::string("a"), r::integer_reply(0), r::integer_reply(1), r::integer_reply(1), n,
                  r::string("5"), a, a}),
        r::array({r::string("a"), r::integer_reply(0), r::integer_reply(1), r::integer_reply(1), n,
                  z, z, a}),
        // A card that is no string.
        r::array({r::string("a"), r::integer_reply(0), r::integer_reply(1), r::integer_reply(1), n,
                  z, a, z}),
        // An empty or numeric nonce.
        r::array({r::string("a"), r::integer_reply(0), r::integer_reply(1), r::integer_reply(1),
                  r::string(""), z, a, a}),
        r::array({r::string("a"), r::integer_reply(0), r::integer_reply(1), r::integer_reply(1),
                  r::integer_reply(7), z, a, a})}) {
    auto bad = baton::parse_candidates_reply(reply, ttl);
    EXPECT_EQ(bad.ec, redis_errc::unexpected_reply) << baton::describe_reply(reply);
    EXPECT_NE(bad.detail.find("candidates"), std::string::npos);
  }
  auto err = baton::parse_candidates_reply(r::error("WRONGTYPE x"), ttl);
  EXPECT_EQ(err.ec, redis_errc::server_error);
}

TEST(reservation_in, reads_the_hand_overs_value_and_nothing_else) {
  const auto r = baton::reservation_in("(reserved) node-b node-a");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->to, "node-b");
  EXPECT_EQ(r->by, "node-a");
  for (const auto* value :
       {"node-a:0123456789abcdef", "(reserved) node-b", "(reserved)  x", "(store reset)", ""}) {
    EXPECT_FALSE(baton::reservation_in(value).has_value()) << value;
  }
}

TEST(holder_from_value, takes_everything_before_the_last_colon) {
  EXPECT_EQ(baton::holder_from_value("node-a:0123abcd"), "node-a");
  EXPECT_EQ(baton::holder_from_value("host:8080:0123abcd"), "host:8080");
  EXPECT_EQ(baton::holder_from_value("plain"), "plain");
  EXPECT_EQ(baton::holder_from_value(":nonce"), "");
  EXPECT_EQ(baton::holder_from_value(""), "");
}

TEST(release_messages, only_other_nodes_releases_count) {
  const std::string own = "node-a:00ff";
  EXPECT_TRUE(baton::is_foreign_release("released node-b:11aa 17", own));
  EXPECT_FALSE(baton::is_foreign_release("released node-a:00ff 17", own));
  EXPECT_FALSE(baton::is_foreign_release("released node-a:00ff ", own));
  EXPECT_TRUE(baton::is_foreign_release("released node b:11aa 17", own));
  EXPECT_FALSE(baton::is_foreign_release("hello", own));
  EXPECT_FALSE(baton::is_foreign_release("released ", own));
  EXPECT_FALSE(baton::is_foreign_release("", own));
}

TEST(noscript, is_recognised) {
  EXPECT_TRUE(baton::is_noscript_error(r::error("NOSCRIPT No matching script.")));
  EXPECT_FALSE(baton::is_noscript_error(r::error("ERR other")));
  EXPECT_FALSE(baton::is_noscript_error(r::string("NOSCRIPT")));
}

TEST(describe_reply, is_short_and_readable) {
  EXPECT_EQ(baton::describe_reply(r::integer_reply(5)), "integer 5");
  EXPECT_EQ(baton::describe_reply(r::nil()), "nil");
  EXPECT_EQ(baton::describe_reply(r::array({r::nil(), r::nil()})), "array[2]");
  EXPECT_EQ(baton::describe_reply(r::error("ERR x")), "error \"ERR x\"");
  EXPECT_LT(baton::describe_reply(r::string(std::string(1000, 'x'))).size(), 100u);
}

TEST(redis_error_category, codes_have_names_and_messages) {
  std::error_code ec = redis_errc::timeout;
  EXPECT_STREQ(ec.category().name(), "baton.redis");
  EXPECT_EQ(ec.message(), "redis command timed out");
  EXPECT_EQ(std::error_code(redis_errc::auth_failed).message(), "redis authentication failed");
  EXPECT_NE(std::error_code(redis_errc::connect_failed), std::error_code(redis_errc::timeout));
}

TEST(redis_error_category, codes_map_onto_store_conditions) {
  using baton::store_errc;
  EXPECT_EQ(std::error_code(redis_errc::connect_failed), store_errc::unavailable);
  EXPECT_EQ(std::error_code(redis_errc::connection_lost), store_errc::unavailable);
  EXPECT_EQ(std::error_code(redis_errc::timeout), store_errc::timeout);
  EXPECT_EQ(std::error_code(redis_errc::auth_failed), store_errc::auth);
  EXPECT_EQ(std::error_code(redis_errc::protocol_error), store_errc::protocol);
  EXPECT_EQ(std::error_code(redis_errc::unexpected_reply), store_errc::protocol);
  EXPECT_EQ(std::error_code(redis_errc::server_error), store_errc::refused);
  EXPECT_NE(std::error_code(redis_errc::auth_failed), store_errc::unavailable);
  EXPECT_STREQ(baton::store_error_kind(redis_errc::auth_failed), "auth");
  EXPECT_STREQ(baton::store_error_kind(redis_errc::connection_lost), "unavailable");
}

}  // namespace

TEST(acquired_announcement, names_the_node_and_the_token) {
  auto term = baton::parse_acquired_announcement("acquired node-b:11aa 17");
  ASSERT_TRUE(term);
  EXPECT_EQ(term->holder, "node-b");
  EXPECT_EQ(term->token, 17u);
  EXPECT_FALSE(baton::parse_acquired_announcement("released node-b:11aa 17"));
  EXPECT_FALSE(baton::parse_acquired_announcement("acquired node-b:11aa"));
  EXPECT_FALSE(baton::parse_acquired_announcement("acquired node-b:11aa x17"));
  EXPECT_FALSE(baton::parse_acquired_announcement("acquired  17"));
}

namespace {

TEST(redis_reply_acl, refusals_are_permission_denied_with_or_without_a_script) {
  using baton::classify_error_reply;
  EXPECT_EQ(classify_error_reply("NOPERM this user has no permissions to run the 'info' command"),
            redis_errc::permission_denied);
  EXPECT_EQ(classify_error_reply("ERR The user executing the script can't run this command or "
                                 "subcommand (command SET) script: 1234, on @user_script:4."),
            redis_errc::permission_denied);
  EXPECT_EQ(classify_error_reply("WRONGPASS invalid username-password pair"), redis_errc::auth_failed);
  EXPECT_EQ(classify_error_reply("ERR value is not an integer (command INCR)"), redis_errc::server_error);
  EXPECT_EQ(std::error_code(redis_errc::permission_denied), baton::store_errc::auth);
}

TEST(redis_reply_acl, a_vanished_lease_is_held_back_with_its_holder_and_why) {
  redis_reply reply;
  reply.kind = redis_reply::type::array;
  auto item = [](redis_reply::type t, std::string s, long long i = 0) {
    redis_reply e;
    e.kind = t;
    e.str = std::move(s);
    e.integer = i;
    return e;
  };
  reply.elements = {item(redis_reply::type::integer, "", 0),
                item(redis_reply::type::string, "node-1:abcdef"),
                item(redis_reply::type::integer, "", 1234),
                item(redis_reply::type::string, "42"),
                item(redis_reply::type::string, "vanished")};
  const auto parsed = baton::parse_acquire_reply(reply);
  ASSERT_FALSE(parsed.ec) << parsed.detail;
  EXPECT_EQ(parsed.value.answer.outcome, baton::acquire_outcome::held_back);
  EXPECT_EQ(parsed.value.answer.holder, "node-1");
  EXPECT_EQ(parsed.value.answer.remaining.count(), 1234);
  EXPECT_EQ(parsed.value.answer.token, 42u);
  EXPECT_FALSE(parsed.value.found_reset);
  EXPECT_NE(parsed.value.answer.why.find("vanished before its expiry"), std::string::npos);
  reply.elements[4].str = "gone";
  EXPECT_TRUE(baton::parse_acquire_reply(reply).ec);
}

}  // namespace

// --- redis.replica_ack: the scripts' answers with a replica requirement -----

namespace replica_requirement {

TEST(acquire_reply_parsing, a_grant_with_a_replica_requirement_names_the_count_and_the_announcement) {
  auto p = baton::parse_acquire_reply(r::array(
      {r::integer_reply(1), r::integer_reply(77), r::integer_reply(2), r::integer_reply(1)}));
  ASSERT_FALSE(p.ec) << p.detail;
  EXPECT_TRUE(p.value.answer.acquired());
  EXPECT_EQ(p.value.answer.token, 77u);
  EXPECT_EQ(p.value.replicas_needed, 2);
  EXPECT_TRUE(p.value.announce);
  EXPECT_FALSE(p.value.replicas_short);
}

TEST(acquire_reply_parsing, too_few_replicas_is_no_grant) {
  auto p = baton::parse_acquire_reply(
      r::array({r::integer_reply(0), r::string(""), r::integer_reply(0), r::string("41"),
                r::string("replicas"), r::integer_reply(0), r::integer_reply(1)}));
  ASSERT_FALSE(p.ec) << p.detail;
  EXPECT_FALSE(p.value.answer.acquired());
  ASSERT_TRUE(p.value.replicas_short);
  EXPECT_EQ(*p.value.replicas_short, 0);
  EXPECT_EQ(p.value.replicas_needed, 1);
}

TEST(acquire_reply_parsing, contradictory_replica_counts_are_unexpected) {
  const std::vector<redis_reply> bad = {
      // a grant that needs no replica
      r::array({r::integer_reply(1), r::integer_reply(77), r::integer_reply(0), r::integer_reply(1)}),
      r::array({r::integer_reply(1), r::integer_reply(77), r::integer_reply(1)}),
      // "short" with enough replicas, or another tag
      r::array({r::integer_reply(0), r::string(""), r::integer_reply(0), r::string("41"),
                r::string("replicas"), r::integer_reply(1), r::integer_reply(1)}),
      r::array({r::integer_reply(0), r::string(""), r::integer_reply(0), r::string("41"),
                r::string("fence"), r::integer_reply(0), r::integer_reply(1)}),
  };
  for (const auto& reply : bad) {
    EXPECT_EQ(baton::parse_acquire_reply(reply).ec, redis_errc::unexpected_reply)
        << baton::describe_reply(reply);
  }
}

TEST(required_renew_reply_parsing, every_answer_and_the_bad_shapes) {
  struct row {
    redis_reply reply;
    bool ok;
    baton::renew_answer answer;
    int needed;
    std::optional<int> short_of;
  };
  using baton::renew_answer;
  const std::vector<row> rows = {
      {r::array({r::integer_reply(1), r::integer_reply(0), r::integer_reply(2)}), true,
       renew_answer::renewed, 2, std::nullopt},
      {r::array({r::integer_reply(0), r::integer_reply(0), r::integer_reply(0)}), true,
       renew_answer::lost, 0, std::nullopt},
      {r::array({r::integer_reply(2), r::integer_reply(0), r::integer_reply(1)}), true,
       renew_answer::lost, 1, 0},
      {r::array({r::integer_reply(2), r::integer_reply(1), r::integer_reply(1)}), false, {}, 0, {}},
      {r::array({r::integer_reply(1), r::integer_reply(0), r::integer_reply(0)}), false, {}, 0, {}},
      {r::array({r::integer_reply(3), r::integer_reply(0), r::integer_reply(1)}), false, {}, 0, {}},
      {r::integer_reply(1), false, {}, 0, {}},
  };
  for (const auto& x : rows) {
    const auto p = baton::parse_required_renew_reply(x.reply);
    if (!x.ok) {
      EXPECT_EQ(p.ec, redis_errc::unexpected_reply) << baton::describe_reply(x.reply);
      continue;
    }
    ASSERT_FALSE(p.ec) << p.detail;
    EXPECT_EQ(p.value.answer, x.answer) << baton::describe_reply(x.reply);
    EXPECT_EQ(p.value.needed, x.needed) << baton::describe_reply(x.reply);
    EXPECT_EQ(p.value.short_of, x.short_of) << baton::describe_reply(x.reply);
  }
}

// The switch script's verdicts, and what the store makes of each: a reset
// (acquisitions held back) unless the record named this server already and
// no fence is up, or the server was promoted with every acknowledged write.
TEST(switch_reply_parsing, every_verdict_and_whether_it_holds_back) {
  using baton::redis_reply;
  using seen = baton::server_switch::seen;
  auto reply = [](std::string verdict, long long fence_ms) {
    return redis_reply::array(
        {redis_reply::string(std::move(verdict)), redis_reply::integer_reply(fence_ms)});
  };
  struct row {
    redis_reply reply;
    bool ok;
    seen what;
    bool held_back;
  };
  const std::vector<row> rows{
      {reply("promoted", -2), true, seen::promoted, false},
      {reply("promoted", 900), true, seen::promoted, true},  // another fence stands
      {reply("same", -2), true, seen::same, false},
      {reply("same", 1500), true, seen::same, true},  // another candidate fenced
      {reply("same", -1), true, seen::same, true},    // an operator's hold
      {reply("failover", 2000), true, seen::fenced, true},
      {reply("unrecorded", 2000), true, seen::fenced, true},
      {reply("lost", 2000), true, seen::fenced, true},
      {reply("maybe", 0), false, seen::fenced, true},
      {redis_reply::array({redis_reply::string("same")}), false, seen::fenced, true},
      {redis_reply::integer_reply(2000), false, seen::fenced, true},
  };
  for (const auto& x : rows) {
    const auto p = baton::parse_switch_reply(x.reply);
    if (!x.ok) {
      EXPECT_EQ(p.ec, redis_errc::unexpected_reply) << baton::describe_reply(x.reply);
      continue;
    }
    ASSERT_FALSE(p.ec) << p.detail;
    EXPECT_EQ(p.value.what, x.what) << baton::describe_reply(x.reply);
    EXPECT_EQ(p.value.held_back(), x.held_back) << baton::describe_reply(x.reply);
  }
}

TEST(replicas_required, off_a_number_or_the_most_recorded_and_at_least_one) {
  struct row {
    int replica_ack, recorded, connected, needed;
  };
  for (const auto& x : std::vector<row>{{-1, 3, 0, 0},
                                        {2, 0, 0, 2},
                                        {2, 5, 5, 2},
                                        {0, 0, 0, 1},  // all of none is not all
                                        {0, 2, 1, 2},  // a replica down: still two
                                        {0, 1, 2, 2},  // a new one counts at once
                                        {0, 0, 3, 3}}) {
    EXPECT_EQ(baton::replicas_required(x.replica_ack, x.recorded, x.connected), x.needed)
        << x.replica_ack << " " << x.recorded << " " << x.connected;
  }
}

TEST(replica_shortfall_text, names_the_counts_and_for_all_the_key_that_keeps_them) {
  EXPECT_EQ(baton::replica_shortfall(0, 1, "all", "baton:{jobs}:replicas"),
            "the master has 0 of the 1 replicas redis.replica_ack all requires (all: the most it "
            "has had, kept in baton:{jobs}:replicas, and at least one); nobody can lead until "
            "they are back");
  EXPECT_EQ(baton::replica_shortfall(1, 2, "2", "baton:{jobs}:replicas"),
            "the master has 1 of the 2 replicas redis.replica_ack 2 requires; nobody can lead "
            "until they are back");
}

}  // namespace replica_requirement
