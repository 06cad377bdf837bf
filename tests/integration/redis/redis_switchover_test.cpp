// redis_store's switchover calls against a real redis-server, where the
// contract suite cannot look: what the hand-over leaves in the lease key and
// the holder record, how a reservation meets the reset fence and an early
// DEL, the target check, and the candidates' registry (its bound, its
// expiry, that a broken registry never fails a lease operation, what a
// refusal counts in it, that a restarted process starts again, and that a
// renewal lists it).
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <variant>
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

outcome<baton::release_answer> hand_over(asio::io_context& io, baton::redis_store& store,
                                         const std::string& to, milliseconds window) {
  outcome<baton::release_answer> out;
  store.async_hand_over(to, window, [&](baton::store_error e, baton::release_answer r) {
    ++out.calls;
    out.error = std::move(e);
    out.value = r;
  });
  EXPECT_TRUE(run_until(io, [&] { return out.calls > 0; })) << "hand-over never completed";
  return out;
}

outcome<std::vector<baton::candidate_info>> candidates(asio::io_context& io,
                                                       baton::redis_store& store) {
  outcome<std::vector<baton::candidate_info>> out;
  store.async_candidates([&](baton::store_error e, std::vector<baton::candidate_info> r) {
    ++out.calls;
    out.error = std::move(e);
    out.value = std::move(r);
  });
  EXPECT_TRUE(run_until(io, [&] { return out.calls > 0; })) << "candidates never completed";
  return out;
}

class redis_switchover_test : public ::testing::Test {
 protected:
  redis_switchover_test() { seed_counter(server); }

  std::vector<std::string> get(const std::string& key) const {
    return server.command({"GET", key});
  }
  long long pttl(const std::string& key) const {
    return std::stoll(server.command({"PTTL", key}).at(0));
  }

  // A registry line as the scripts write it.
  static std::string line(const std::string& node, int priority, long long since_ms,
                          long long until_ms, const std::string& nonce) {
    return node + " " + std::to_string(priority) + " " + std::to_string(since_ms) + " " +
           std::to_string(until_ms) + " " + nonce;
  }
  long long server_ms() const { return std::stoll(server.command({"TIME"}).at(0)) * 1000; }
  baton::redis_store make(const std::string& node, int priority, milliseconds ttl = default_ttl) {
    auto opts = options_for(server, node, ttl);
    opts.identity.priority = priority;
    return baton::redis_store{io, opts};
  }

  baton::testing::redis_server server;
  asio::io_context io;
  const std::string lease = baton::lease_key(election);
  const std::string holder = baton::holder_key(election);
  const std::string registry = baton::candidates_key(election);
  baton::redis_store a{io, options_for(server, "node-a")};
  baton::redis_store b{io, options_for(server, "node-b")};
};

TEST_F(redis_switchover_test, the_hand_over_leaves_a_reservation_and_no_holder_record) {
  ASSERT_TRUE(acquire(io, a).value.acquired());
  ASSERT_EQ(get(holder).size(), 1u) << "a grant writes the holder record";
  auto r = hand_over(io, a, "node-b", 3000ms);
  ASSERT_FALSE(r.error) << r.error.message();
  ASSERT_EQ(r.value, baton::release_answer::released);

  EXPECT_EQ(get(lease), std::vector<std::string>{"(reserved) node-b node-a"});
  EXPECT_GT(pttl(lease), 2000);
  EXPECT_LE(pttl(lease), 3000);
  EXPECT_TRUE(get(holder).empty()) << "a reservation expiring must not look vanished";
  // The lease is no longer a's to renew, release or hand over again.
  EXPECT_EQ(renew(io, a).value, baton::renew_answer::lost);
  EXPECT_EQ(hand_over(io, a, "node-b", 3000ms).value, baton::release_answer::not_ours);
  EXPECT_EQ(get(lease), std::vector<std::string>{"(reserved) node-b node-a"});

  auto taken = acquire(io, b);
  ASSERT_TRUE(taken.value.acquired()) << taken.error.message();
  EXPECT_EQ(get(lease), std::vector<std::string>{b.lease_value()});
  EXPECT_GT(pttl(lease), 4000) << "the target's lease lives its ttl, not the window";
}

TEST_F(redis_switchover_test, a_window_of_zero_or_no_target_is_a_plain_release) {
  ASSERT_TRUE(acquire(io, a).value.acquired());
  ASSERT_EQ(hand_over(io, a, "node-b", 0ms).value, baton::release_answer::released);
  EXPECT_TRUE(get(lease).empty());
  ASSERT_TRUE(acquire(io, a).value.acquired());
  ASSERT_EQ(hand_over(io, a, "", 5000ms).value, baton::release_answer::released);
  EXPECT_TRUE(get(lease).empty());
  EXPECT_TRUE(acquire(io, a).value.acquired());
}

TEST_F(redis_switchover_test, a_target_that_is_no_node_id_is_refused_and_nothing_changes) {
  ASSERT_TRUE(acquire(io, a).value.acquired());
  for (const std::string to : {"node b", "node-b\n", "\tnode-b"}) {
    auto r = hand_over(io, a, to, 3000ms);
    EXPECT_EQ(r.error.code, std::make_error_code(std::errc::invalid_argument)) << "[" << to << "]";
    EXPECT_NE(r.error.detail.find("hand over"), std::string::npos) << r.error.detail;
  }
  EXPECT_EQ(get(lease), std::vector<std::string>{a.lease_value()});
  EXPECT_EQ(renew(io, a).value, baton::renew_answer::renewed);
}

TEST_F(redis_switchover_test, the_fence_holds_a_reserved_lease_back_for_its_target_too) {
  ASSERT_TRUE(acquire(io, a).value.acquired());
  ASSERT_EQ(hand_over(io, a, "node-b", 5000ms).value, baton::release_answer::released);
  server.command({"SET", baton::fence_key(election), "test fence", "PX", "800"});

  auto held_back = acquire(io, b);
  ASSERT_FALSE(held_back.error) << held_back.error.message();
  EXPECT_EQ(held_back.value.outcome, baton::acquire_outcome::held_back);
  EXPECT_EQ(held_back.value.holder, "") << "a reservation is nobody's lease";
  EXPECT_GT(held_back.value.remaining, 0ms);
  EXPECT_LE(held_back.value.remaining, 800ms) << "only the fence holds the target back";
  EXPECT_EQ(acquire(io, a).value.outcome, baton::acquire_outcome::held_back);

  run_for(io, 900ms);
  auto other = acquire(io, a);
  EXPECT_EQ(other.value.outcome, baton::acquire_outcome::held);
  EXPECT_EQ(other.value.reserved_for, "node-b");
  EXPECT_TRUE(acquire(io, b).value.acquired());
}

TEST_F(redis_switchover_test, a_reservation_deleted_early_frees_the_lease_for_everyone) {
  ASSERT_TRUE(acquire(io, a).value.acquired());
  ASSERT_EQ(hand_over(io, a, "node-b", 60000ms).value, baton::release_answer::released);
  server.command({"DEL", lease});
  auto r = acquire(io, a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired()) << "held back as if a lease had vanished: " << r.value.why;
}

TEST_F(redis_switchover_test, the_registry_is_bounded_pruned_and_expires) {
  // 200 lines of live candidates and one lapsed, written by hand.
  const auto now_ms = server_ms();
  std::string text = line("gone", 0, 1, 2, "ab");
  for (int i = 0; i < 200; ++i) {
    text += "\n" + line("node-" + std::to_string(i), 0, now_ms, now_ms + 5000 + i, "ab");
  }
  server.command({"SET", registry, text});
  ASSERT_FALSE(acquire(io, a).error);

  const auto kept = get(registry).at(0);
  std::size_t lines = 1;
  for (char c : kept) lines += c == '\n' ? 1 : 0;
  EXPECT_EQ(lines, 128u);
  EXPECT_EQ(kept.find("gone "), std::string::npos);
  EXPECT_NE(kept.find("\nnode-a 0 "), std::string::npos) << "the caller's own line is kept";
  EXPECT_NE(kept.find("node-199 "), std::string::npos) << "the lines lapsing last are kept";
  EXPECT_EQ(kept.find("node-0 "), std::string::npos) << "the lines lapsing first go";
  // It expires with its last line: two ttls (5 s each) at most.
  EXPECT_GT(pttl(registry), 0);
  EXPECT_LE(pttl(registry), 10000);

  auto listed = candidates(io, a);
  ASSERT_FALSE(listed.error) << listed.error.message();
  EXPECT_EQ(listed.value.size(), 128u);
}

// Under the bound, the other lines are written back as they were read, in
// their order; one that ends further than two ttls ahead (the server's clock
// went back) is cut to two ttls.
TEST_F(redis_switchover_test, lines_are_kept_as_read_but_one_too_far_ahead_is_cut) {
  const auto now_ms = server_ms();
  const auto far = line("node-f", 1, now_ms, now_ms + 3600000, "ab");
  const auto near = line("node-n", 2, now_ms - 5, now_ms + 4000, "cd");
  server.command({"SET", registry, far + "\n" + near});
  ASSERT_FALSE(acquire(io, a).error);
  const auto kept = get(registry).at(0);
  const auto cut = kept.substr(0, kept.find('\n'));
  EXPECT_EQ(cut.rfind("node-f 1 " + std::to_string(now_ms) + " ", 0), 0u) << kept;
  std::istringstream fields(cut);
  std::string node, priority, since, nonce;
  long long until = 0;
  fields >> node >> priority >> since >> until >> nonce;
  EXPECT_EQ(nonce, "ab");
  EXPECT_LE(until, server_ms() + 1000 + 2 * default_ttl.count()) << kept;
  EXPECT_NE(kept.find("\n" + near + "\n"), std::string::npos) << kept;
  EXPECT_NE(kept.find("\nnode-a 0 "), std::string::npos) << kept;
}

TEST_F(redis_switchover_test, a_registration_keeps_its_start_and_its_priority_is_the_latest) {
  auto opts = options_for(server, "node-c", 1000ms);
  opts.identity.priority = 3;
  baton::redis_store c{io, opts};
  ASSERT_FALSE(acquire(io, c).error);
  run_for(io, 600ms);
  ASSERT_FALSE(acquire(io, c).error);
  auto listed = candidates(io, c);
  ASSERT_FALSE(listed.error) << listed.error.message();
  ASSERT_EQ(listed.value.size(), 1u);
  EXPECT_EQ(listed.value[0].node, "node-c");
  EXPECT_EQ(listed.value[0].priority, 3);
  EXPECT_GE(listed.value[0].live_for, 550ms) << "the second attempt continued the first";

  // A gap longer than two ttls starts it again.
  run_for(io, 2100ms);
  ASSERT_FALSE(acquire(io, c).error);
  listed = candidates(io, c);
  ASSERT_EQ(listed.value.size(), 1u);
  EXPECT_LT(listed.value[0].live_for, 500ms);
}

TEST_F(redis_switchover_test, a_broken_registry_never_fails_a_lease_operation) {
  // A key of another type: read as empty, and written over.
  server.command({"HSET", registry, "x", "1"});
  auto r = acquire(io, a);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
  EXPECT_EQ(server.command({"TYPE", registry}), std::vector<std::string>{"string"});
  server.command({"DEL", registry});
  server.command({"HSET", registry, "x", "1"});
  EXPECT_EQ(renew(io, a).value, baton::renew_answer::renewed);
  server.command({"DEL", registry});
  server.command({"HSET", registry, "x", "1"});
  EXPECT_EQ(acquire(io, b).value.outcome, baton::acquire_outcome::held);
  // Listing one is an error that says so, not a crash or an empty list.
  server.command({"DEL", registry});
  server.command({"HSET", registry, "x", "1"});
  auto listed = candidates(io, a);
  EXPECT_TRUE(listed.error);
  EXPECT_NE(listed.error.detail.find("candidates"), std::string::npos) << listed.error.detail;

  // Garbage of the right type is skipped, and replaced by the next write.
  server.command({"DEL", registry});
  server.command({"SET", registry, "no numbers here\n\n x y"});
  ASSERT_FALSE(acquire(io, b).error);
  listed = candidates(io, a);
  ASSERT_FALSE(listed.error) << listed.error.message();
  ASSERT_EQ(listed.value.size(), 1u);
  EXPECT_EQ(listed.value[0].node, "node-b");
}

// A refusal counts the registry's live candidates above the caller, read in
// the script it runs anyway: not the holder, not a lapsed or equal line, and
// every shape of refusal (held, reserved, fenced) carries it.
TEST_F(redis_switchover_test, a_refusal_counts_the_live_candidates_above_it) {
  auto high = make("node-a", 9);
  ASSERT_TRUE(acquire(io, high).value.acquired());
  const auto now_ms = server_ms();
  server.command({"SET", registry,
                  get(registry).at(0) + "\n" + line("node-x", 7, now_ms, now_ms + 9000, "ab") +
                      "\n" + line("node-y", 2, now_ms, now_ms + 9000, "ab") + "\n" +
                      line("node-z", 8, now_ms - 20000, now_ms - 10000, "ab") + "\n" +
                      line("node-w", 6, now_ms, now_ms + 9000, "ab")});
  auto low = make("node-b", 2);
  auto held = acquire(io, low);
  ASSERT_FALSE(held.error) << held.error.message();
  ASSERT_EQ(held.value.outcome, baton::acquire_outcome::held);
  EXPECT_EQ(held.value.outranked_by, 2) << "node-x and node-w: not the holder, nor node-y "
                                           "(equal), nor node-z (lapsed)";
  auto mid = make("node-c", 6);
  EXPECT_EQ(acquire(io, mid).value.outranked_by, 1) << "node-x only";

  // A reservation is nobody's lease: the node that handed over counts.
  ASSERT_EQ(hand_over(io, high, "node-x", 5000ms).value, baton::release_answer::released);
  auto reserved = acquire(io, low);
  ASSERT_EQ(reserved.value.reserved_for, "node-x");
  EXPECT_EQ(reserved.value.outranked_by, 4) << "node-a, node-x, node-w and node-c";

  // Held back, the same count.
  server.command({"SET", baton::fence_key(election), "test fence", "PX", "5000"});
  auto fenced = acquire(io, low);
  ASSERT_EQ(fenced.value.outcome, baton::acquire_outcome::held_back);
  EXPECT_EQ(fenced.value.outranked_by, 4);

  // A registry that cannot be read: unknown, and the refusal stands.
  server.command({"DEL", registry});
  server.command({"HSET", registry, "x", "1"});
  auto unknown = acquire(io, low);
  ASSERT_FALSE(unknown.error) << unknown.error.message();
  EXPECT_EQ(unknown.value.outcome, baton::acquire_outcome::held_back);
  EXPECT_EQ(unknown.value.outranked_by, -1);
}

// A process that restarted under the same node id, within two ttls of its
// predecessor's last registration, starts again: another nonce. A store made
// again in the same process is the same process, and keeps its start.
TEST_F(redis_switchover_test, a_restarted_process_is_live_since_its_own_start) {
  const auto now_ms = server_ms();
  // The predecessor: registered a minute ago, without a gap, still live.
  server.command({"SET", registry, line("node-c", 3, now_ms - 60000, now_ms + 1500, "0123abcd")});
  {
    auto c = make("node-c", 3);
    ASSERT_FALSE(acquire(io, c).error);
    auto listed = candidates(io, c);
    ASSERT_FALSE(listed.error) << listed.error.message();
    ASSERT_EQ(listed.value.size(), 1u);
    EXPECT_LT(listed.value[0].live_for, 1000ms) << "the predecessor's start was kept";
  }
  // Nothing of the store is left to run: wall time passes all the same.
  std::this_thread::sleep_for(600ms);
  auto again = make("node-c", 3);
  ASSERT_FALSE(acquire(io, again).error);
  auto listed = candidates(io, again);
  ASSERT_FALSE(listed.error) << listed.error.message();
  ASSERT_EQ(listed.value.size(), 1u);
  EXPECT_GE(listed.value[0].live_for, 550ms) << "the same process started again";
  const auto nonce = again.lease_value().substr(again.lease_value().rfind(':') + 1);
  EXPECT_NE(get(registry).at(0).find(" " + nonce), std::string::npos) << get(registry).at(0);

  // A renewal that finds another process's line under its node id starts
  // it again too.
  ASSERT_TRUE(acquire(io, again).value.acquired());
  server.command({"SET", registry, line("node-c", 3, now_ms - 60000, now_ms + 9000, "0123abcd")});
  ASSERT_EQ(renew(io, again).value, baton::renew_answer::renewed);
  listed = candidates(io, again);
  ASSERT_EQ(listed.value.size(), 1u);
  EXPECT_LT(listed.value[0].live_for, 1000ms);
}


// The leader's renewal lists the candidates (store_events::listed) as the
// candidates call would, in the same script: a thousand leaders on one Redis
// must not run a second script each per renew interval. A renewal that finds
// the lease gone lists nothing.
TEST_F(redis_switchover_test, a_renewal_lists_the_candidates_to_the_watcher) {
  std::vector<std::vector<baton::candidate_info>> heard;
  a.watch([&](const baton::store_event& e) {
    if (const auto* l = std::get_if<baton::store_events::listed>(&e)) heard.push_back(l->candidates);
  });
  EXPECT_TRUE(a.lists_with_renewals());
  ASSERT_TRUE(acquire(io, a).value.acquired());
  ASSERT_FALSE(acquire(io, b).value.acquired());
  ASSERT_TRUE(heard.empty()) << "an acquire lists nothing";

  auto r = renew(io, a);
  ASSERT_FALSE(r.error) << r.error.message();
  ASSERT_EQ(r.value, baton::renew_answer::renewed);
  ASSERT_EQ(heard.size(), 1u);
  auto by_call = candidates(io, a);
  ASSERT_FALSE(by_call.error) << by_call.error.message();
  auto nodes = [](const std::vector<baton::candidate_info>& list) {
    std::vector<std::string> out;
    for (const auto& c : list) out.push_back(c.node);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(nodes(heard[0]), (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(nodes(heard[0]), nodes(by_call.value));

  EXPECT_EQ(renew(io, b).value, baton::renew_answer::lost);
  server.command({"DEL", lease});
  EXPECT_EQ(renew(io, a).value, baton::renew_answer::lost);
  run_for(io, 100ms);
  EXPECT_EQ(heard.size(), 1u) << "a lost renewal lists nothing";
}

}  // namespace
