// lease.failsafe peers on ZooKeeper, without a server (src/zookeeper/
// failsafe_nodes.hpp and the record's term in lease_nodes.hpp): the term and
// its list in the record both ways; the peer address and promise a registry
// node carries, the promise judged on the server's clock; the acquire's
// failsafe hold (F6) and register-only answer (F7); the registry's promises
// that hold a free lease (F9); and the resume's decision (F8) as a table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "zookeeper/failsafe_nodes.hpp"
#include "zookeeper/lease_nodes.hpp"

namespace baton::zookeeper_detail {
namespace {

using namespace std::chrono_literals;

const time_point fs_t0 = time_point{} + 5000s;

failsafe_term fs_term(std::uint64_t token, std::string node = "node-a", std::string nonce = "na") {
  return {token,           1,
          std::move(node), std::move(nonce),
          "10.0.0.1:9465", {{"node-b", "10.0.0.2:9465"}, {"node-c", ""}}};
}

node_seen fs_record_node(record_value r, std::int32_t version = 4) {
  node_seen n;
  n.exists = true;
  n.data = encode_record(r);
  n.version = version;
  n.czxid = 10;
  n.mtime_ms = 1764100000000;
  return n;
}

node_seen fs_lease_node(std::uint64_t token, std::string node, std::string nonce,
                        std::int64_t owner, std::int32_t version = 2) {
  node_seen n;
  n.exists = true;
  n.data = encode_lease({token, std::move(node), std::move(nonce)});
  n.version = version;
  n.czxid = 20;
  n.owner_session = owner;
  return n;
}

// node-b's store, acquiring with the mode; it saw the record long ago.
acquire_facts fs_taker(std::uint64_t cleared = 0, bool may_win = true) {
  acquire_facts f;
  f.node_id = "node-b";
  f.nonce = "nb";
  f.session_id = 222;
  f.ttl = 2000ms;
  f.now = fs_t0;
  f.seen_record_czxid = 10;
  f.seen_record_version = 4;
  f.seen_record_at = fs_t0 - 10s;
  f.failsafe = failsafe_grant{may_win, cleared, "10.0.0.2:9465", {1, {{"node-c", "x:1"}}}};
  return f;
}

record_value fs_unreleased(std::uint64_t token) {
  record_value r;
  r.counter = token;
  r.released = token - 1;
  r.failsafe = fs_term(token);
  return r;
}

TEST(zookeeper_failsafe_record, the_term_and_its_list_round_trip) {
  auto r = fs_unreleased(70);
  r.failsafe->node_id = "node a:1";  // a node id may hold spaces and colons
  const auto data = encode_record(r);
  EXPECT_NE(data.find("term 70 1 10.0.0.1:9465 node a:1:na\npeer 10.0.0.2:9465 node-b\npeer - "
                      "node-c\n"),
            std::string::npos)
      << data;
  const auto back = decode_record(data);
  ASSERT_TRUE(back && back->failsafe);
  EXPECT_EQ(*back->failsafe, *r.failsafe);
  // Without a term, none comes back; a release's record has none.
  EXPECT_FALSE(decode_record(encode_record(released_record(70)))->failsafe);
}

TEST(zookeeper_failsafe_record, refuses_a_term_baton_never_writes) {
  for (const std::string bad :
       {"counter 1\nterm 0 1 - n:x\n", "counter 1\nterm 5 1 -\n", "counter 1\nterm x 1 - n:x\n",
        "counter 1\nterm 5 1 - nonce\n", "counter 1\nterm 5 1 - n:\n", "counter 1\npeer -\n"}) {
    EXPECT_FALSE(decode_record(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(zookeeper_failsafe_registry, a_promise_and_peer_address_ride_on_the_registry_node) {
  candidate_value v{0, "node-c", "card-text"};
  v.peer_address = "10.0.0.3:9465";
  v.promise = registered_promise{5000, "node a", 3000ms};
  const auto data = encode_candidate(v);
  EXPECT_EQ(data, "0 node-c\ncard card-text\npeer 10.0.0.3:9465\npromise 5000 3000 node a");
  EXPECT_EQ(decode_candidate(data)->node_id, "node-c");
  EXPECT_EQ(candidate_card_of(data), "card-text");
  EXPECT_EQ(candidate_peer_of(data), "10.0.0.3:9465");
  // A cool-down's mark comes after them and keeps them.
  const auto cooling = encode_cooling_candidate(v, 1000ms);
  EXPECT_EQ(candidate_peer_of(cooling), "10.0.0.3:9465");
  EXPECT_EQ(cooling_left(cooling, 100'000, 100'400), 600ms);
  // Judged from the node's write on the server's clock.
  const auto p = promise_left(cooling, 100'000, 101'000);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->token, 5000u);
  EXPECT_EQ(p->leader, "node a");
  EXPECT_EQ(p->remaining, 2000ms);
  EXPECT_FALSE(promise_left(data, 100'000, 103'000)) << "ended";
  EXPECT_EQ(promise_left(data, 100'000, 0)->remaining, 3000ms) << "server time unknown: whole";
  EXPECT_FALSE(promise_left("0 node-c\npeer x:1", 1, 1));
  EXPECT_EQ(candidate_peer_of("0 node-c"), "");
}

TEST(zookeeper_failsafe_acquire, another_unreleased_term_is_a_failsafe_hold_until_cleared) {
  const auto record = fs_record_node(fs_unreleased(70));
  auto step = decide_acquire(record, {}, fs_taker(69), "m-1");
  const auto* held = std::get_if<acquire_steps::failsafe_held>(&step);
  ASSERT_NE(held, nullptr) << step.index();
  EXPECT_EQ(held->hold.leader, "node-a");
  EXPECT_EQ(held->hold.token, 70u);
  EXPECT_EQ(held->hold.leader_address, "10.0.0.1:9465");
  EXPECT_EQ(held->hold.peers.size(), 2u);
  // Cleared: a take that writes the new term and its list.
  step = decide_acquire(record, {}, fs_taker(70), "m-1");
  const auto* take = std::get_if<acquire_steps::take>(&step);
  ASSERT_NE(take, nullptr) << step.index();
  ASSERT_TRUE(take->record.failsafe);
  EXPECT_EQ(take->record.failsafe->token, take->lease.token);
  EXPECT_EQ(take->record.failsafe->node_id, "node-b");
  EXPECT_EQ(take->record.failsafe->nonce, "nb");
  EXPECT_EQ(take->record.failsafe->seq, 1u);
  EXPECT_EQ(take->record.failsafe->peers, (std::vector<failsafe_peer>{{"node-c", "x:1"}}));
  // A plain acquire neither meets the hold nor writes a term.
  auto plain = fs_taker();
  plain.failsafe.reset();
  step = decide_acquire(record, {}, plain, "m-1");
  ASSERT_TRUE(std::holds_alternative<acquire_steps::take>(step)) << step.index();
  EXPECT_FALSE(std::get<acquire_steps::take>(step).record.failsafe);
}

TEST(zookeeper_failsafe_acquire, the_hold_comes_before_the_early_loss_guard) {
  auto taker = fs_taker();
  taker.seen_record_at = fs_t0 - 10ms;  // it just saw the record: the guard would hold a ttl
  const auto record = fs_record_node(fs_unreleased(70));
  EXPECT_TRUE(std::holds_alternative<acquire_steps::failsafe_held>(
      decide_acquire(record, {}, taker, "m-1")));
  // Cleared, the guard holds the caller back still.
  taker.failsafe->cleared_token = 70;
  EXPECT_TRUE(
      std::holds_alternative<acquire_steps::held_back>(decide_acquire(record, {}, taker, "m-1")));
}

TEST(zookeeper_failsafe_acquire, its_own_or_a_released_term_holds_nothing) {
  auto own = fs_unreleased(70);
  own.failsafe->node_id = "node-b";
  own.failsafe->nonce = "nb";
  EXPECT_TRUE(std::holds_alternative<acquire_steps::take>(
      decide_acquire(fs_record_node(own), {}, fs_taker(), "m-1")));
  auto released = fs_unreleased(70);
  released.released = 70;
  EXPECT_TRUE(std::holds_alternative<acquire_steps::take>(
      decide_acquire(fs_record_node(released), {}, fs_taker(), "m-1")));
}

TEST(zookeeper_failsafe_acquire, a_hold_written_keeps_the_term) {
  auto taker = fs_taker();
  taker.pending_reset = "the ZooKeeper session expired";
  taker.pending_reset_at = fs_t0 - 5ms;
  const auto step = decide_acquire(fs_record_node(fs_unreleased(70)), {}, taker, "m-1");
  const auto* w = std::get_if<acquire_steps::write_hold>(&step);
  ASSERT_NE(w, nullptr) << step.index();
  EXPECT_EQ(w->record.hold, "m-1");
  ASSERT_TRUE(w->record.failsafe);
  EXPECT_EQ(w->record.failsafe->token, 70u);
}

TEST(zookeeper_failsafe_acquire, a_caller_that_may_not_win_does_not_retake) {
  auto taker = fs_taker(0, false);
  const auto step = decide_acquire(fs_record_node(released_record(70)),
                                   fs_lease_node(70, "node-b", "nb", 222), taker, "m-1");
  EXPECT_TRUE(std::holds_alternative<acquire_steps::abstain>(step)) << step.index();
  const auto a = abstained_answer(70);
  EXPECT_EQ(a.outcome, acquire_outcome::held_back);
  EXPECT_TRUE(a.holder.empty());
  EXPECT_NE(a.why.find("may not take the lease yet"), std::string::npos);
}

TEST(zookeeper_failsafe_promises, the_highest_live_promise_above_the_cleared_token_holds) {
  const auto reg = [](std::string node, std::uint64_t token, std::string leader, milliseconds left,
                      std::int64_t mtime) {
    candidate_value v{0, node};
    v.peer_address = node + ":9465";
    v.promise = registered_promise{token, std::move(leader), left};
    return registration_seen{"/c/0_" + node, node, encode_candidate(v), 1, mtime};
  };
  const std::vector<registration_seen> others{
      reg("node-c", 5000, "node-a", 3000ms, 10'000),
      reg("node-d", 6000, "node-e", 3000ms, 10'000),
      reg("node-f", 9000, "node-g", 1000ms, 5'000),   // ended at 6'000
      reg("node-h", 9500, "node-b", 3000ms, 10'000),  // a promise to the caller itself
      {"/c/0_node-i", "node-i", "0 node-i\npeer node-i:9465", 1, 10'000},
  };
  auto hold = promise_hold(others, "node-b", 0, 11'000);
  ASSERT_TRUE(hold);
  EXPECT_EQ(hold->leader, "node-e");
  EXPECT_EQ(hold->token, 6000u);
  EXPECT_EQ(hold->peers,
            (std::vector<failsafe_peer>{{"node-c", "node-c:9465"}, {"node-d", "node-d:9465"}}));
  hold = promise_hold(others, "node-b", 5000, 11'000);
  ASSERT_TRUE(hold);
  EXPECT_EQ(hold->peers, (std::vector<failsafe_peer>{{"node-d", "node-d:9465"}}));
  EXPECT_FALSE(promise_hold(others, "node-b", 6000, 11'000));
  EXPECT_FALSE(promise_hold(others, "node-b", 0, 14'000)) << "all ended";
}

resume_facts fs_resumer(std::uint64_t token = 70) {
  return {token, "node-a", "na", 111, "10.0.0.1:9465", {5, {{"node-b", "10.0.0.2:9465"}}}};
}

TEST(zookeeper_failsafe_resume, as_a_table) {
  using namespace resume_steps;
  auto counted_on = released_record(60);  // no term; an older term released
  auto re_created = record_value{};       // after a loss: a hold, no term
  re_created.hold = "other-1";
  auto others = fs_unreleased(80);
  others.failsafe->node_id = "node-b";
  auto later = released_record(90);
  auto released = fs_unreleased(70);
  released.released = 70;
  auto newer_list = fs_unreleased(70);
  newer_list.failsafe->seq = 9;
  struct row {
    const char* what;
    node_seen record;
    node_seen lease;
    const char* step;  // "lost", "bad", "create", "set", "replace"
  };
  const row rows[] = {
      {"its term, its node gone", fs_record_node(fs_unreleased(70)), {}, "create"},
      {"its term, its node on this session", fs_record_node(fs_unreleased(70)),
       fs_lease_node(70, "node-a", "na", 111), "set"},
      {"its term, its node on a session it left", fs_record_node(fs_unreleased(70)),
       fs_lease_node(70, "node-a", "na", 999), "replace"},
      {"another store's node", fs_record_node(fs_unreleased(70)),
       fs_lease_node(70, "node-a", "other", 999), "lost"},
      {"another term's node", fs_record_node(fs_unreleased(70)),
       fs_lease_node(71, "node-a", "na", 111), "lost"},
      {"no record: the ensemble lost its data", {}, {}, "create"},
      {"a record without a term, counted below", fs_record_node(counted_on), {}, "create"},
      {"a record re-created after a loss", fs_record_node(re_created), {}, "create"},
      {"another store's term", fs_record_node(others), {}, "lost"},
      {"a later term, released", fs_record_node(later), {}, "lost"},
      {"its own term released", fs_record_node(released), {}, "lost"},
      {"a record baton never wrote",
       [] {
         node_seen n;
         n.exists = true;
         n.data = "junk";
         return n;
       }(),
       {},
       "bad"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.what);
    const auto step = decide_resume(r.record, r.lease, fs_resumer());
    const std::string want = r.step;
    if (want == "lost") {
      EXPECT_TRUE(std::holds_alternative<lost>(step)) << step.index();
      continue;
    }
    if (want == "bad") {
      EXPECT_TRUE(std::holds_alternative<bad_data>(step)) << step.index();
      continue;
    }
    const auto* w = std::get_if<write>(&step);
    ASSERT_NE(w, nullptr) << step.index();
    const auto lease = want == "set"       ? lease_write::set
                       : want == "replace" ? lease_write::replace
                                           : lease_write::create;
    EXPECT_EQ(w->lease, lease);
    EXPECT_EQ(w->record_exists, r.record.exists);
    EXPECT_EQ(w->value.token, 70u);
    EXPECT_EQ(w->value.nonce, "na");
    EXPECT_GE(w->record.counter, 70u) << "tokens never go back";
    ASSERT_TRUE(w->record.failsafe);
    EXPECT_EQ(w->record.failsafe->token, 70u);
    EXPECT_EQ(w->record.failsafe->seq, 5u);
  }
  // A hold-back stays for those who would start; a list written with a
  // higher number stays too.
  auto w = std::get<write>(decide_resume(fs_record_node(re_created), {}, fs_resumer()));
  EXPECT_EQ(w.record.hold, "other-1");
  w = std::get<write>(decide_resume(fs_record_node(newer_list), {}, fs_resumer()));
  EXPECT_EQ(w.record.failsafe->seq, 9u);
  EXPECT_EQ(w.record.failsafe->peers, newer_list.failsafe->peers);
}

}  // namespace
}  // namespace baton::zookeeper_detail
