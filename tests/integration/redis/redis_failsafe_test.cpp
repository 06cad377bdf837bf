// redis_store's calls for lease.failsafe peers against a real redis-server:
// the Redis form of what the contract (tests/contract/failsafe_contract.cpp)
// checks through the port. The record a grant writes (no ttl) and a release
// deletes, the list a renewal writes only when its number is above the
// record's, a held answer's token when a reset lifted the counter, the
// promise the cool-down script keeps, and the lease value a resume writes.
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
    return completed<baton::acquire_answer>(
        io, "acquire", [&](auto h) { store.failsafe()->async_acquire(a, std::move(h)); });
  }
  outcome<baton::renew_answer> renew_with(baton::redis_store& store,
                                          const baton::failsafe_list& l) {
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

TEST_F(redis_failsafe_test, the_cooldown_script_keeps_a_registered_promise) {
  // node-c promised node-a's term 5000 for 3 s (F9).
  baton::failsafe_acquire promising;
  promising.may_win = false;
  promising.promise = baton::failsafe_promise{"node-a", 5000, 3000ms};
  acquire_with(c, promising);
  c.register_cooldown(1000ms);
  run_for(io, 100ms);
  const auto registry = server.command({"GET", baton::candidates_key(election)}).at(0);
  EXPECT_NE(registry.find(" 10.0.0.3:9465 5000 node-a "), std::string::npos) << registry;
}

TEST_F(redis_failsafe_test, a_resume_writes_the_same_lease_value_and_the_record) {
  const auto token = a_leads();
  lease_expires();
  auto resumed = resume_with(a, token, list_of(2, {{"node-b", "10.0.0.2:9465"}}));
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  EXPECT_EQ(resumed.value, baton::renew_answer::renewed);
  EXPECT_EQ(server.command({"GET", baton::lease_key(election)}).at(0), a.lease_value());
  EXPECT_EQ(record(), std::to_string(token) + " 2 " + a.lease_value() +
                          " 10.0.0.1:9465\nnode-b 10.0.0.2:9465");
}

}  // namespace
