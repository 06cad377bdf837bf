// redis_store's calls for lease.failsafe peers against a real redis-server
// (docs/safety.md, rules F1, F6, F7, F8 and F9): the record a grant writes
// and a release deletes, the list a renewal writes only when its number is
// above the record's, the failsafe hold a free lease answers until the term
// is cleared, the register-only acquire, the promise a registration
// carries, and the resume after the store was away or lost its data.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

#include "redis/lease_keys.hpp"
#include "redis/redis_store.hpp"
#include "store_test_util.hpp"
#include "support/servers/redis_server.hpp"

namespace {

namespace asio = boost::asio;
using baton::milliseconds;
using namespace std::chrono_literals;
using namespace baton::testing::store_test_util;

baton::redis_store_options peer_options(const baton::testing::redis_server& server,
                                        const std::string& node, const std::string& address) {
  auto o = options_for(server, node);
  o.identity.peer_address = address;
  return o;
}

baton::failsafe_list list_of(std::uint64_t seq, std::vector<baton::failsafe_peer> peers) {
  return {seq, std::move(peers)};
}

class redis_failsafe_test : public ::testing::Test {
 protected:
  redis_failsafe_test() { seed_counter(server); }

  acquired acquire_with(baton::redis_store& store, const baton::failsafe_acquire& a) {
    return completed<baton::acquire_answer>(io, "acquire", [&](auto h) {
      store.failsafe()->async_acquire(a, std::move(h));
    });
  }
  outcome<baton::renew_answer> renew_with(baton::redis_store& store, const baton::failsafe_list& l) {
    return completed<baton::renew_answer>(
        io, "renew", [&](auto h) { store.failsafe()->async_renew(l, std::move(h)); });
  }
  outcome<baton::renew_answer> resume_with(baton::redis_store& store, std::uint64_t token,
                                           const baton::failsafe_list& l) {
    return completed<baton::renew_answer>(
        io, "resume", [&](auto h) { store.failsafe()->async_resume(token, l, std::move(h)); });
  }
  std::string record() const {
    const auto r = server.command({"GET", baton::failsafe_key(election)});
    return r.empty() ? std::string() : r.at(0);
  }
  // node-a wins with node-b and node-c listed.
  std::uint64_t a_leads() {
    baton::failsafe_acquire args;
    args.list = list_of(1, {{"node-b", "10.0.0.2:9465"}, {"node-c", "10.0.0.3:9465"}});
    auto won = acquire_with(a, args);
    EXPECT_FALSE(won.error) << won.error.message();
    EXPECT_TRUE(won.value.acquired());
    return won.value.token;
  }
  // The lease key gone, as after its expiry (the store kept the rest): the
  // holder record's end has passed too, or the key would have vanished early.
  void lease_expires() {
    server.command({"DEL", baton::lease_key(election), baton::holder_key(election)});
  }

  baton::testing::redis_server server;
  asio::io_context io;
  baton::redis_store a{io, peer_options(server, "node-a", "10.0.0.1:9465")};
  baton::redis_store b{io, peer_options(server, "node-b", "10.0.0.2:9465")};
  baton::redis_store c{io, peer_options(server, "node-c", "10.0.0.3:9465")};
};

TEST_F(redis_failsafe_test, a_grant_writes_the_record_and_a_release_deletes_it) {
  const auto token = a_leads();
  EXPECT_EQ(record(), std::to_string(token) + " 1 " + a.lease_value() +
                          " 10.0.0.1:9465\nnode-b 10.0.0.2:9465\nnode-c 10.0.0.3:9465");
  EXPECT_EQ(server.command({"PTTL", baton::failsafe_key(election)}).at(0), "-1") << "no ttl";
  auto released = release(io, a);
  EXPECT_EQ(released.value, baton::release_answer::released);
  EXPECT_EQ(record(), "");
}

TEST_F(redis_failsafe_test, a_renewal_writes_its_list_only_when_its_number_is_higher) {
  const auto token = a_leads();
  auto renewed = renew_with(a, list_of(3, {{"node-b", "10.0.0.2:9465"}}));
  EXPECT_EQ(renewed.value, baton::renew_answer::renewed) << renewed.error.message();
  EXPECT_EQ(record(), std::to_string(token) + " 3 " + a.lease_value() +
                          " 10.0.0.1:9465\nnode-b 10.0.0.2:9465");
  // A write that lands late, numbered 2: the lease is renewed, the list stays.
  renewed = renew_with(a, list_of(2, {}));
  EXPECT_EQ(renewed.value, baton::renew_answer::renewed);
  EXPECT_EQ(record(), std::to_string(token) + " 3 " + a.lease_value() +
                          " 10.0.0.1:9465\nnode-b 10.0.0.2:9465");
}

TEST_F(redis_failsafe_test, a_held_answer_names_the_holders_own_token) {
  const auto token = a_leads();
  // A reset lifted the counter above the term's token.
  server.command({"SET", baton::token_key(election), std::to_string(token + 1000000)});
  auto held = acquire_with(b, {});
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, baton::acquire_outcome::held);
  EXPECT_EQ(held.value.holder, "node-a");
  EXPECT_EQ(held.value.token, token) << "a confirm for this term must not look old";
}

TEST_F(redis_failsafe_test, a_free_lease_is_held_until_the_term_is_cleared) {
  const auto token = a_leads();
  lease_expires();
  baton::failsafe_acquire args;
  auto held = acquire_with(b, args);
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, baton::acquire_outcome::held_back);
  ASSERT_TRUE(held.value.failsafe_hold);
  EXPECT_EQ(held.value.failsafe_hold->leader, "node-a");
  EXPECT_EQ(held.value.failsafe_hold->token, token);
  EXPECT_EQ(held.value.failsafe_hold->leader_address, "10.0.0.1:9465");
  ASSERT_EQ(held.value.failsafe_hold->peers.size(), 2u);
  EXPECT_EQ(held.value.failsafe_hold->peers[0].node, "node-b");
  // Cleared up to an older token: still held.
  args.cleared_token = token - 1;
  EXPECT_TRUE(acquire_with(b, args).value.failsafe_hold);
  // Cleared: granted, and the record is the new term's.
  args.cleared_token = token;
  args.list = list_of(1, {{"node-c", "10.0.0.3:9465"}});
  auto won = acquire_with(b, args);
  ASSERT_TRUE(won.value.acquired()) << won.error.message();
  EXPECT_GT(won.value.token, token);
  EXPECT_EQ(record(), std::to_string(won.value.token) + " 1 " + b.lease_value() +
                          " 10.0.0.2:9465\nnode-c 10.0.0.3:9465");
}

TEST_F(redis_failsafe_test, a_term_with_an_empty_list_holds_nobody_back_for_long) {
  baton::failsafe_acquire args;  // nobody listed
  const auto token = acquire_with(a, args).value.token;
  lease_expires();
  auto held = acquire_with(b, {});
  ASSERT_TRUE(held.value.failsafe_hold);
  EXPECT_TRUE(held.value.failsafe_hold->peers.empty()) << "the taker may clear it at once (F2)";
  EXPECT_EQ(held.value.failsafe_hold->token, token);
}

TEST_F(redis_failsafe_test, a_caller_that_may_not_win_only_registers) {
  baton::failsafe_acquire args;
  args.may_win = false;
  auto r = acquire_with(b, args);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value.outcome, baton::acquire_outcome::held_back);
  EXPECT_FALSE(r.value.failsafe_hold);
  EXPECT_NE(r.value.why.find("may not take the lease yet"), std::string::npos) << r.value.why;
  EXPECT_TRUE(server.command({"GET", baton::lease_key(election)}).empty()) << "nothing granted";
  auto listed = completed<std::vector<baton::candidate_info>>(
      io, "candidates", [&](auto h) { a.async_candidates(std::move(h)); });
  ASSERT_EQ(listed.value.size(), 1u);
  EXPECT_EQ(listed.value[0].node, "node-b");
  EXPECT_EQ(listed.value[0].peer_address, "10.0.0.2:9465");
}

TEST_F(redis_failsafe_test, a_registered_promise_holds_a_free_lease) {
  // node-c promised node-a's term 5000 for 3 s (F9); the store has no record.
  baton::failsafe_acquire promising;
  promising.may_win = false;
  promising.promise = baton::failsafe_promise{"node-a", 5000, 3000ms};
  acquire_with(c, promising);
  auto held = acquire_with(b, {});
  ASSERT_TRUE(held.value.failsafe_hold) << held.value.why;
  EXPECT_EQ(held.value.failsafe_hold->leader, "node-a");
  EXPECT_EQ(held.value.failsafe_hold->token, 5000u);
  ASSERT_EQ(held.value.failsafe_hold->peers.size(), 1u);
  EXPECT_EQ(held.value.failsafe_hold->peers[0], (baton::failsafe_peer{"node-c", "10.0.0.3:9465"}));
  baton::failsafe_acquire cleared;
  cleared.cleared_token = 5000;
  EXPECT_TRUE(acquire_with(b, cleared).value.acquired());
  // The cool-down script keeps the promise's fields as they were.
  c.register_cooldown(1000ms);
  run_for(io, 100ms);
  const auto registry = server.command({"GET", baton::candidates_key(election)}).at(0);
  EXPECT_NE(registry.find(" 10.0.0.3:9465 5000 node-a "), std::string::npos) << registry;
}

TEST_F(redis_failsafe_test, a_resume_takes_the_term_up_again_with_its_token) {
  const auto token = a_leads();
  lease_expires();
  auto resumed = resume_with(a, token, list_of(2, {{"node-b", "10.0.0.2:9465"}}));
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  EXPECT_EQ(resumed.value, baton::renew_answer::renewed);
  EXPECT_EQ(server.command({"GET", baton::lease_key(election)}).at(0), a.lease_value());
  EXPECT_EQ(record(), std::to_string(token) + " 2 " + a.lease_value() +
                          " 10.0.0.1:9465\nnode-b 10.0.0.2:9465");
  EXPECT_EQ(renew_with(a, list_of(3, {})).value, baton::renew_answer::renewed);
}

TEST_F(redis_failsafe_test, a_resume_after_the_store_lost_its_data_keeps_the_token_rising) {
  const auto token = a_leads();
  server.command({"FLUSHALL"});
  auto resumed = resume_with(a, token, list_of(2, {{"node-b", "10.0.0.2:9465"}}));
  ASSERT_EQ(resumed.value, baton::renew_answer::renewed) << resumed.error.message();
  const auto counter = std::stoull(server.command({"GET", baton::token_key(election)}).at(0));
  EXPECT_GE(counter, token) << "tokens never go back";
  // The next term's token is above the resumed one.
  release(io, a);
  auto won = acquire_with(b, {});
  ASSERT_TRUE(won.value.acquired()) << won.value.why;
  EXPECT_GT(won.value.token, token);
}

TEST_F(redis_failsafe_test, a_resume_fails_when_another_term_exists) {
  const auto token = a_leads();
  lease_expires();
  // node-b cleared node-a's term and took the lease.
  baton::failsafe_acquire cleared;
  cleared.cleared_token = token;
  ASSERT_TRUE(acquire_with(b, cleared).value.acquired());
  EXPECT_EQ(resume_with(a, token, list_of(2, {})).value, baton::renew_answer::lost);
  // The lease free again, the record naming node-b's term: still lost.
  lease_expires();
  EXPECT_EQ(resume_with(a, token, list_of(3, {})).value, baton::renew_answer::lost);
  EXPECT_TRUE(server.command({"GET", baton::lease_key(election)}).empty());
}

}  // namespace
