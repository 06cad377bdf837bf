// zookeeper_store's calls for lease.failsafe peers against a real standalone
// ZooKeeper (docs/safety.md, rules F1, F6, F7, F8 and F9): the term a grant
// writes into the record node and a release drops, the list a renewal
// writes only when its number is above the record's, the failsafe hold a
// free lease answers until the term is cleared, the register-only acquire,
// the promise a registry node carries, and the resume: after the lease node
// went, after the session that held it expired with the server away (the
// node re-created on a new session), and after the ensemble lost its data.
// The nodes are read with a client of the test's own.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/servers/zookeeper_server.hpp"
#include "zookeeper/lease_nodes.hpp"
#include "zookeeper/zk_link.hpp"
#include "zookeeper/zookeeper_store.hpp"

namespace baton {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace zookeeper_detail;

constexpr milliseconds fs_ttl{1500};
const std::string fs_election = "jobs";
const std::string lease_path = "/baton/jobs/lease";
const std::string record_path = "/baton/jobs/record";

template <typename T>
struct call_outcome {
  int calls = 0;
  store_error error;
  T value{};
};

failsafe_list list_of(std::uint64_t seq, std::vector<failsafe_peer> peers) {
  return {seq, std::move(peers)};
}

class zookeeper_failsafe_test : public ::testing::Test {
 protected:
  zookeeper_failsafe_test() {
    // `baton init-store`'s way: the record exists, no first-start hold-back.
    auto init = make_store("init", "");
    EXPECT_TRUE(finish<record_answer>("create the record", [&](auto h) {
                  init->async_create_record(std::move(h));
                }).error.code == std::error_code{});
  }

  std::unique_ptr<zookeeper_store> make_store(const std::string& node, const std::string& peer) {
    zookeeper_store_options o;
    o.servers = server.address();
    o.identity = {fs_election, node, fs_ttl, 0, peer};
    o.connect_timeout = 2000ms;
    o.command_timeout = 2000ms;
    return std::make_unique<zookeeper_store>(io, std::move(o));
  }

  bool run_until(const std::function<bool()>& done, milliseconds limit = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return false;
      io.restart();
      io.run_one_for(std::min<std::chrono::steady_clock::duration>(deadline - now, 50ms));
    }
    return true;
  }

  template <typename T>
  call_outcome<T> finish(const char* what,
                         const std::function<void(std::function<void(store_error, T)>)>& call) {
    auto out = std::make_shared<call_outcome<T>>();
    call([out](store_error e, T r) {
      ++out->calls;
      out->error = std::move(e);
      out->value = std::move(r);
    });
    EXPECT_TRUE(run_until([&] { return out->calls > 0; }, 15s)) << what << " never completed";
    EXPECT_EQ(out->calls, 1) << what;
    return *out;
  }

  call_outcome<acquire_answer> acquire_with(zookeeper_store& store, const failsafe_acquire& a) {
    return finish<acquire_answer>(
        "acquire", [&](auto h) { store.failsafe()->async_acquire(a, std::move(h)); });
  }
  call_outcome<renew_answer> renew_with(zookeeper_store& store, const failsafe_list& l) {
    return finish<renew_answer>("renew",
                                [&](auto h) { store.failsafe()->async_renew(l, std::move(h)); });
  }
  call_outcome<renew_answer> resume_with(zookeeper_store& store, std::uint64_t token,
                                         const failsafe_list& l) {
    return finish<renew_answer>(
        "resume", [&](auto h) { store.failsafe()->async_resume(token, l, std::move(h)); });
  }
  call_outcome<release_answer> release(zookeeper_store& store) {
    return finish<release_answer>("release", [&](auto h) { store.async_release(std::move(h)); });
  }
  // Acquires until the answer is no plain hold-back (the early-loss guard
  // or a reset's, each at most a ttl), bounded.
  call_outcome<acquire_answer> acquire_past_holdbacks(zookeeper_store& store,
                                                      const failsafe_acquire& a) {
    auto r = acquire_with(store, a);
    for (int i = 0; i < 40 && !r.error && r.value.outcome == acquire_outcome::held_back &&
                    !r.value.failsafe_hold;
         ++i) {
      const auto wait = std::clamp(r.value.remaining, milliseconds(20), milliseconds(200));
      io.restart();
      io.run_for(wait);
      r = acquire_with(store, a);
    }
    return r;
  }

  // The test's own client, for reading and changing nodes by hand.
  zk_link& probe() {
    if (!probe_ || !probe_->connected()) {
      zk_link_options o;
      o.hosts = server.address();
      o.session_timeout = 4000ms;
      o.owner = owner_;
      std::string error;
      probe_ = zk_link::open(io, o, error);
      EXPECT_NE(probe_, nullptr) << error;
      EXPECT_TRUE(run_until([&] { return probe_->connected(); }));
    }
    return *probe_;
  }
  node_seen node(const std::string& path) {
    std::optional<node_seen> seen;
    probe().get(path, [&](int rc, node_seen n) {
      if (rc != 0) n.exists = false;
      seen = std::move(n);
    });
    EXPECT_TRUE(run_until([&] { return seen.has_value(); }));
    return seen.value_or(node_seen{});
  }
  record_value record() {
    const auto n = node(record_path);
    const auto r = decode_record(n.data);
    EXPECT_TRUE(r.has_value()) << "record: '" << n.data << "'";
    return r.value_or(record_value{});
  }
  int write_by_hand(std::vector<zk_op> ops) {
    std::optional<int> result;
    probe().multi(std::move(ops), [&](int rc, std::vector<zk_op_result>) { result = rc; });
    EXPECT_TRUE(run_until([&] { return result.has_value(); }));
    return result.value_or(-1);
  }
  // The lease node gone, as after its holder's session expired.
  void lease_node_goes() {
    ASSERT_EQ(write_by_hand({{zk_op::kind::remove, lease_path, {}, -1, false}}), 0);
  }
  // node-a wins with node-b and node-c listed.
  std::uint64_t a_leads() {
    failsafe_acquire args;
    args.list = list_of(1, {{"node-b", "10.0.0.2:9465"}, {"node-c", "10.0.0.3:9465"}});
    auto won = acquire_with(*a, args);
    EXPECT_FALSE(won.error) << won.error.message();
    EXPECT_TRUE(won.value.acquired()) << won.value.why;
    return won.value.token;
  }

  baton::testing::zookeeper_server server;
  asio::io_context io;
  std::shared_ptr<int> owner_ = std::make_shared<int>(0);
  std::shared_ptr<zk_link> probe_;
  std::unique_ptr<zookeeper_store> a = make_store("node-a", "10.0.0.1:9465");
  std::unique_ptr<zookeeper_store> b = make_store("node-b", "10.0.0.2:9465");
  std::unique_ptr<zookeeper_store> c = make_store("node-c", "10.0.0.3:9465");
};

TEST_F(zookeeper_failsafe_test, a_grant_writes_the_term_and_a_release_drops_it) {
  const auto token = a_leads();
  const auto rec = record();
  ASSERT_TRUE(rec.failsafe) << node(record_path).data;
  EXPECT_EQ(rec.failsafe->token, token);
  EXPECT_EQ(rec.failsafe->seq, 1u);
  EXPECT_EQ(rec.failsafe->node_id, "node-a");
  EXPECT_EQ(rec.failsafe->address, "10.0.0.1:9465");
  EXPECT_EQ(rec.failsafe->peers,
            (std::vector<failsafe_peer>{{"node-b", "10.0.0.2:9465"}, {"node-c", "10.0.0.3:9465"}}));
  EXPECT_EQ(decode_lease(node(lease_path).data)->nonce, rec.failsafe->nonce);
  EXPECT_EQ(release(*a).value, release_answer::released);
  const auto after = record();
  EXPECT_FALSE(after.failsafe) << node(record_path).data;
  EXPECT_EQ(after.released, token);
}

TEST_F(zookeeper_failsafe_test, without_the_mode_nothing_is_written) {
  auto plain = make_store("node-p", "");
  auto won = finish<acquire_answer>("acquire", [&](auto h) { plain->async_acquire(std::move(h)); });
  ASSERT_TRUE(won.value.acquired()) << won.error.message();
  EXPECT_FALSE(record().failsafe) << node(record_path).data;
  EXPECT_EQ(node("/baton/jobs/candidates/0_node-p").data, "0 node-p");
}

TEST_F(zookeeper_failsafe_test, a_renewal_writes_its_list_only_when_its_number_is_higher) {
  a_leads();
  auto renewed = renew_with(*a, list_of(3, {{"node-b", "10.0.0.2:9465"}}));
  EXPECT_EQ(renewed.value, renew_answer::renewed) << renewed.error.message();
  EXPECT_EQ(record().failsafe->seq, 3u);
  EXPECT_EQ(record().failsafe->peers, (std::vector<failsafe_peer>{{"node-b", "10.0.0.2:9465"}}));
  // A write that lands late, numbered 2: the lease is renewed, the list stays.
  renewed = renew_with(*a, list_of(2, {}));
  EXPECT_EQ(renewed.value, renew_answer::renewed) << renewed.error.message();
  EXPECT_EQ(record().failsafe->seq, 3u);
  EXPECT_EQ(record().failsafe->peers.size(), 1u);
  // And the next one, numbered 4, after that.
  EXPECT_EQ(renew_with(*a, list_of(4, {})).value, renew_answer::renewed);
  EXPECT_EQ(record().failsafe->seq, 4u);
  EXPECT_TRUE(record().failsafe->peers.empty());
}

TEST_F(zookeeper_failsafe_test, a_held_answer_names_the_holders_own_token) {
  const auto token = a_leads();
  // Someone lifted the counter above the term's token.
  auto rec = record();
  rec.counter = token + 1000000;
  ASSERT_EQ(write_by_hand({{zk_op::kind::set, record_path, encode_record(rec), -1, false}}), 0);
  auto held = acquire_with(*b, {});
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, acquire_outcome::held);
  EXPECT_EQ(held.value.holder, "node-a");
  EXPECT_EQ(held.value.token, token) << "a confirm for this term must not look old";
}

TEST_F(zookeeper_failsafe_test, a_free_lease_is_held_until_the_term_is_cleared) {
  const auto token = a_leads();
  lease_node_goes();
  failsafe_acquire args;
  auto held = acquire_past_holdbacks(*b, args);
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, acquire_outcome::held_back);
  ASSERT_TRUE(held.value.failsafe_hold) << held.value.why;
  EXPECT_EQ(held.value.failsafe_hold->leader, "node-a");
  EXPECT_EQ(held.value.failsafe_hold->token, token);
  EXPECT_EQ(held.value.failsafe_hold->leader_address, "10.0.0.1:9465");
  ASSERT_EQ(held.value.failsafe_hold->peers.size(), 2u);
  EXPECT_EQ(held.value.failsafe_hold->peers[0].node, "node-b");
  // Cleared up to an older token: still held.
  args.cleared_token = token - 1;
  EXPECT_TRUE(acquire_with(*b, args).value.failsafe_hold);
  // Cleared: granted (once the early-loss guard, which binds a taker that
  // never saw the term's node, let it), and the record holds the new term.
  args.cleared_token = token;
  args.list = list_of(1, {{"node-c", "10.0.0.3:9465"}});
  auto won = acquire_past_holdbacks(*b, args);
  ASSERT_TRUE(won.value.acquired()) << won.error.message() << won.value.why;
  EXPECT_GT(won.value.token, token);
  const auto rec = record();
  ASSERT_TRUE(rec.failsafe);
  EXPECT_EQ(rec.failsafe->token, won.value.token);
  EXPECT_EQ(rec.failsafe->node_id, "node-b");
  EXPECT_EQ(rec.failsafe->peers, (std::vector<failsafe_peer>{{"node-c", "10.0.0.3:9465"}}));
}

TEST_F(zookeeper_failsafe_test, a_term_with_an_empty_list_holds_nobody_back_for_long) {
  const auto token = acquire_with(*a, {}).value.token;  // nobody listed
  lease_node_goes();
  auto held = acquire_past_holdbacks(*b, {});
  ASSERT_TRUE(held.value.failsafe_hold) << held.value.why;
  EXPECT_TRUE(held.value.failsafe_hold->peers.empty()) << "the taker may clear it at once (F2)";
  EXPECT_EQ(held.value.failsafe_hold->token, token);
}

TEST_F(zookeeper_failsafe_test, a_caller_that_may_not_win_only_registers) {
  failsafe_acquire args;
  args.may_win = false;
  auto r = acquire_with(*b, args);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value.outcome, acquire_outcome::held_back);
  EXPECT_FALSE(r.value.failsafe_hold);
  EXPECT_TRUE(r.value.holder.empty());
  EXPECT_NE(r.value.why.find("may not take the lease yet"), std::string::npos) << r.value.why;
  EXPECT_FALSE(node(lease_path).exists) << "nothing granted";
  auto listed = finish<std::vector<candidate_info>>(
      "candidates", [&](auto h) { a->async_candidates(std::move(h)); });
  ASSERT_EQ(listed.value.size(), 1u);
  EXPECT_EQ(listed.value[0].node, "node-b");
  EXPECT_EQ(listed.value[0].peer_address, "10.0.0.2:9465");
}

TEST_F(zookeeper_failsafe_test, a_registered_promise_holds_a_free_lease) {
  // node-c promised node-a's term 5000 for 3 s (F9); the record has no term.
  failsafe_acquire promising;
  promising.may_win = false;
  promising.promise = failsafe_promise{"node-a", 5000, 3000ms};
  acquire_with(*c, promising);
  // Its registry node is created by that acquire and the promise written
  // with the next one, on the same session.
  acquire_with(*c, promising);
  EXPECT_NE(node("/baton/jobs/candidates/0_node-c").data.find("\npromise 5000 "), std::string::npos)
      << node("/baton/jobs/candidates/0_node-c").data;
  auto held = acquire_with(*b, {});
  ASSERT_TRUE(held.value.failsafe_hold) << held.value.why << held.error.message();
  EXPECT_EQ(held.value.failsafe_hold->leader, "node-a");
  EXPECT_EQ(held.value.failsafe_hold->token, 5000u);
  ASSERT_EQ(held.value.failsafe_hold->peers.size(), 1u);
  EXPECT_EQ(held.value.failsafe_hold->peers[0], (failsafe_peer{"node-c", "10.0.0.3:9465"}));
  failsafe_acquire cleared;
  cleared.cleared_token = 5000;
  EXPECT_TRUE(acquire_with(*b, cleared).value.acquired());
  // A cool-down's mark keeps the promise and the peer address.
  c->register_cooldown(1000ms);
  io.restart();
  io.run_for(200ms);
  const auto registry = node("/baton/jobs/candidates/0_node-c").data;
  EXPECT_NE(registry.find("\npeer 10.0.0.3:9465\npromise 5000 "), std::string::npos) << registry;
  EXPECT_NE(registry.find("\ncooling 1000"), std::string::npos) << registry;
}

TEST_F(zookeeper_failsafe_test, an_ended_promise_holds_nothing_back) {
  failsafe_acquire promising;
  promising.may_win = false;
  promising.promise = failsafe_promise{"node-a", 5000, 300ms};
  acquire_with(*c, promising);
  acquire_with(*c, promising);
  io.restart();
  io.run_for(500ms);
  auto won = acquire_with(*b, {});
  EXPECT_TRUE(won.value.acquired()) << won.value.why << won.error.message();
}

TEST_F(zookeeper_failsafe_test, a_resume_takes_the_term_up_again_with_its_token) {
  const auto token = a_leads();
  lease_node_goes();
  auto resumed = resume_with(*a, token, list_of(2, {{"node-b", "10.0.0.2:9465"}}));
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  EXPECT_EQ(resumed.value, renew_answer::renewed);
  const auto lease = node(lease_path);
  ASSERT_TRUE(lease.exists);
  EXPECT_EQ(decode_lease(lease.data)->token, token);
  EXPECT_NE(lease.owner_session, 0) << "ephemeral";
  const auto rec = record();
  ASSERT_TRUE(rec.failsafe);
  EXPECT_EQ(rec.failsafe->token, token);
  EXPECT_EQ(rec.failsafe->seq, 2u);
  EXPECT_EQ(rec.failsafe->peers, (std::vector<failsafe_peer>{{"node-b", "10.0.0.2:9465"}}));
  EXPECT_EQ(renew_with(*a, list_of(3, {})).value, renew_answer::renewed);
  // A standby finds it held by that term.
  auto held = acquire_with(*b, {});
  EXPECT_EQ(held.value.outcome, acquire_outcome::held);
  EXPECT_EQ(held.value.token, token);
}

TEST_F(zookeeper_failsafe_test, a_resume_replaces_its_node_left_on_another_session) {
  const auto token = a_leads();
  const auto rec = record();
  ASSERT_TRUE(rec.failsafe);
  // The term's node as a session this store left would hold it: another
  // session's ephemeral with the term's own data.
  const auto data = node(lease_path).data;
  lease_node_goes();
  ASSERT_EQ(write_by_hand({{zk_op::kind::create, lease_path, data, -1, true}}), 0);
  const auto other = node(lease_path);
  auto resumed = resume_with(*a, token, list_of(2, {}));
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  ASSERT_EQ(resumed.value, renew_answer::renewed);
  const auto after = node(lease_path);
  ASSERT_TRUE(after.exists);
  EXPECT_NE(after.owner_session, other.owner_session) << "on the store's own session";
  EXPECT_EQ(after.data, data);
  EXPECT_EQ(renew_with(*a, list_of(3, {})).value, renew_answer::renewed);
  // Another node's term in that place is not taken over.
  lease_node_goes();
  ASSERT_EQ(write_by_hand({{zk_op::kind::create, lease_path,
                            encode_lease({token, "node-a", "another-nonce"}), -1, true}}),
            0);
  EXPECT_EQ(resume_with(*a, token, list_of(4, {})).value, renew_answer::lost);
}

TEST_F(zookeeper_failsafe_test, a_resume_on_a_new_session_after_the_server_was_away) {
  const auto token = a_leads();
  const auto before = node(lease_path);
  probe_.reset();
  // The server away longer than the session timeout: the store gives the
  // session up and opens another once the server is back, which brings the
  // old session back from its log for one more timeout, its node with it.
  server.stop(true);
  auto failed = renew_with(*a, list_of(2, {}));
  EXPECT_TRUE(failed.error.code == store_errc::unavailable ||
              failed.error.code == store_errc::timeout)
      << failed.error.message();
  io.restart();
  io.run_for(fs_ttl + 1000ms);
  server.start();
  // The term is gone from this store's session: lost, and so the resume.
  auto lost = renew_with(*a, list_of(2, {}));
  ASSERT_FALSE(lost.error) << lost.error.message();
  EXPECT_EQ(lost.value, renew_answer::lost);
  auto resumed = resume_with(*a, token, list_of(2, {{"node-c", "10.0.0.3:9465"}}));
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  ASSERT_EQ(resumed.value, renew_answer::renewed);
  const auto after = node(lease_path);
  ASSERT_TRUE(after.exists);
  EXPECT_NE(after.owner_session, before.owner_session) << "on the new session";
  EXPECT_EQ(decode_lease(after.data)->token, token);
  // Renewed past the old session's expiry, the node stays the new one's.
  for (int i = 0; i < 8; ++i) {
    io.restart();
    io.run_for(fs_ttl / 4);
    ASSERT_EQ(renew_with(*a, list_of(3 + i, {})).value, renew_answer::renewed) << i;
  }
  EXPECT_EQ(node(lease_path).owner_session, after.owner_session);
}

TEST_F(zookeeper_failsafe_test, a_resume_after_the_store_lost_its_data_keeps_the_token_rising) {
  const auto token = a_leads();
  probe_.reset();
  server.wipe_and_restart();
  // The old session is refused first; the store opens a new one.
  auto resumed = resume_with(*a, token, list_of(2, {{"node-b", "10.0.0.2:9465"}}));
  for (int i = 0; i < 10 && resumed.error; ++i) {
    resumed = resume_with(*a, token, list_of(2, {{"node-b", "10.0.0.2:9465"}}));
  }
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  ASSERT_EQ(resumed.value, renew_answer::renewed);
  const auto rec = record();
  EXPECT_GE(rec.counter, token) << "tokens never go back";
  ASSERT_TRUE(rec.failsafe);
  EXPECT_EQ(rec.failsafe->token, token);
  // The next term's token is above the resumed one.
  EXPECT_EQ(release(*a).value, release_answer::released);
  auto won = acquire_past_holdbacks(*b, {});
  ASSERT_TRUE(won.value.acquired()) << won.value.why << won.error.message();
  EXPECT_GT(won.value.token, token);
}

TEST_F(zookeeper_failsafe_test, a_resume_fails_when_another_term_exists) {
  const auto token = a_leads();
  lease_node_goes();
  // node-b cleared node-a's term and took the lease.
  failsafe_acquire cleared;
  cleared.cleared_token = token;
  ASSERT_TRUE(acquire_past_holdbacks(*b, cleared).value.acquired());
  EXPECT_EQ(resume_with(*a, token, list_of(2, {})).value, renew_answer::lost);
  // The lease free again, the record naming node-b's term: still lost.
  lease_node_goes();
  EXPECT_EQ(resume_with(*a, token, list_of(3, {})).value, renew_answer::lost);
  EXPECT_FALSE(node(lease_path).exists);
}

TEST_F(zookeeper_failsafe_test, a_resume_fails_after_a_release) {
  const auto token = a_leads();
  ASSERT_EQ(release(*a).value, release_answer::released);
  EXPECT_EQ(resume_with(*a, token, list_of(2, {})).value, renew_answer::lost);
  EXPECT_FALSE(node(lease_path).exists);
}

}  // namespace
}  // namespace baton
