// The pure steps of the ZooKeeper store (src/zookeeper/lease_nodes.hpp):
// the nodes' data both ways, including what baton never writes; the token
// lifted to the server's clock; the session timeout check; the step an
// acquire takes after its two reads, as a table; and a switchover's parts:
// the reservation in the record, the registry's names and data, the
// server's clock as the store learns it.
#include "zookeeper/lease_nodes.hpp"

#include <gtest/gtest.h>
#include <zookeeper/zookeeper.h>

#include <string>
#include <utility>
#include <vector>

namespace baton::zookeeper_detail {
namespace {

using namespace std::chrono_literals;

TEST(zookeeper_lease_value, round_trips_and_takes_the_nonce_after_the_last_colon) {
  const lease_value v{1795478993544884u, "node:a", "0123abcd"};
  const auto data = encode_lease(v);
  EXPECT_EQ(data, "1795478993544884 node:a:0123abcd");
  const auto back = decode_lease(data);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->token, v.token);
  EXPECT_EQ(back->node_id, "node:a");
  EXPECT_EQ(back->nonce, "0123abcd");
}

TEST(zookeeper_lease_value, refuses_what_baton_never_writes) {
  for (const std::string bad : {"", "7", "7 ", "x node:n", "0 node:n", "7 node", "7 :n", "7 node:",
                                "-1 node:n", "7 node:n m", "99999999999999999999 node:n"}) {
    EXPECT_FALSE(decode_lease(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(zookeeper_record_value, round_trips_and_ignores_keys_of_later_versions) {
  const record_value v{42, 41, "abc-3", "the ZooKeeper session expired"};
  const auto back = decode_record(encode_record(v) + "later something\n");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->counter, 42u);
  EXPECT_EQ(back->released, 41u);
  EXPECT_EQ(back->hold, "abc-3");
  EXPECT_EQ(back->why, "the ZooKeeper session expired");
  const auto empty = decode_record(encode_record({}));
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->counter, 0u);
  EXPECT_EQ(empty->hold, "");
}

TEST(zookeeper_record_value, refuses_what_baton_never_writes) {
  for (const std::string bad : {"", "counter\n", "counter x\n", "hold a\n", "counter 1", "junk",
                                "counter 1\nreleased x\n"}) {
    EXPECT_FALSE(decode_record(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(zookeeper_tokens, rise_above_the_counter_and_the_server_clock_in_microseconds) {
  struct row {
    std::uint64_t counter;
    std::int64_t mtime_ms;
    std::uint64_t expected;
  };
  const std::vector<row> rows = {
      {0, 0, 1},                                            // a record without a clock
      {0, 1764100000000, 1764100000000001},                 // a new record: the clock
      {1764100000000500, 1764100000000, 1764100000000501},  // terms within the same ms
      {5, -1, 6},                                           // a nonsense clock is ignored
      // A wiped ensemble starts its counter again; its clock has moved on.
      {0, 1764100005000, 1764100005000001},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(next_token(r.counter, r.mtime_ms), r.expected) << r.counter << " " << r.mtime_ms;
  }
}

TEST(zookeeper_record_value, a_term_its_holder_ended_is_marked_released) {
  const auto r = released_record(1764100000000001u);
  EXPECT_EQ(r.counter, 1764100000000001u);
  EXPECT_EQ(r.released, r.counter);
  EXPECT_EQ(r.hold, "");
}

TEST(zookeeper_session_timeout, must_be_at_least_the_ttl) {
  EXPECT_FALSE(session_timeout_problem(2000ms, 2000ms).has_value());
  EXPECT_FALSE(session_timeout_problem(4000ms, 2000ms).has_value());
  const auto problem = session_timeout_problem(1600ms, 2000ms);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("1600 ms"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("maxSessionTimeout"), std::string::npos) << *problem;
}

// The server clamps the asked timeout into [minSessionTimeout,
// maxSessionTimeout]: granted below the ttl (asked at least the ttl) means
// its maximum cut it, granted above means its minimum raised it. The hint
// names that bound, never the other.
TEST(zookeeper_session_timeout, each_hint_names_the_bound_that_set_it) {
  const auto shorter = session_timeout_problem(4000ms, 5000ms);
  ASSERT_TRUE(shorter);
  EXPECT_NE(shorter->find("maxSessionTimeout"), std::string::npos) << *shorter;
  EXPECT_EQ(shorter->find("minSessionTimeout"), std::string::npos) << *shorter;

  EXPECT_FALSE(session_timeout_too_long(4000ms, 2000ms, 2000ms));
  const auto raised = session_timeout_too_long(10000ms, 3000ms, 3000ms);
  ASSERT_TRUE(raised);
  EXPECT_NE(raised->find("10000 ms"), std::string::npos) << *raised;
  EXPECT_NE(raised->find("minSessionTimeout"), std::string::npos) << *raised;
  EXPECT_EQ(raised->find("maxSessionTimeout"), std::string::npos) << *raised;
  // Asked for that long: the option asked is what to lower.
  const auto asked = session_timeout_too_long(10000ms, 10000ms, 3000ms);
  ASSERT_TRUE(asked);
  EXPECT_NE(asked->find("zookeeper.session_timeout"), std::string::npos) << *asked;
}

TEST(zookeeper_paths, are_built_under_the_prefix_and_checked) {
  const auto p = make_paths("/baton", "orders");
  EXPECT_EQ(p.election, "/baton/orders");
  EXPECT_EQ(p.lease, "/baton/orders/lease");
  EXPECT_EQ(p.record, "/baton/orders/record");
  EXPECT_FALSE(path_prefix_problem("/baton").has_value());
  EXPECT_FALSE(path_prefix_problem("/apps/baton").has_value());
  for (const std::string bad :
       {"", "baton", "/", "/baton/", "/a//b", "/a/./b", "/a/..", "/zookeeper"}) {
    EXPECT_TRUE(path_prefix_problem(bad).has_value()) << "'" << bad << "'";
  }
  EXPECT_FALSE(election_name_problem("orders-1").has_value());
  for (const std::string bad : std::vector<std::string>{"", "a/b", ".", "..", "a\nb"}) {
    EXPECT_TRUE(election_name_problem(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(zookeeper_writes, a_failed_check_is_a_race_anything_else_a_failure) {
  EXPECT_EQ(classify_write(ZOK), write_outcome::done);
  EXPECT_EQ(classify_write(ZNODEEXISTS), write_outcome::raced);
  EXPECT_EQ(classify_write(ZBADVERSION), write_outcome::raced);
  EXPECT_EQ(classify_write(ZNONODE), write_outcome::raced);
  EXPECT_EQ(classify_write(ZCONNECTIONLOSS), write_outcome::failed);
  EXPECT_EQ(classify_write(ZNOAUTH), write_outcome::failed);
  EXPECT_EQ(classify_write(ZSESSIONEXPIRED), write_outcome::failed);
}

// --- decide_acquire, as a table ---------------------------------------------------

const time_point t0 = time_point{} + 1000s;

// A record whose last term (counter) was released, unless said otherwise.
node_seen record_node(std::uint64_t counter, std::string hold = "", std::int32_t version = 3,
                      bool released = true) {
  node_seen n;
  n.exists = true;
  n.data = encode_record({counter, released ? counter : counter - 1, std::move(hold), ""});
  n.version = version;
  n.czxid = 10;
  n.mtime_ms = 1764100000000;
  return n;
}

node_seen lease_node(std::string node_id, std::string nonce, std::int64_t owner,
                     std::int32_t version = 0, std::int64_t czxid = 20) {
  node_seen n;
  n.exists = true;
  n.data = encode_lease({77, std::move(node_id), std::move(nonce)});
  n.version = version;
  n.czxid = czxid;
  n.owner_session = owner;
  return n;
}

acquire_facts me() {
  acquire_facts f;
  f.node_id = "node-a";
  f.nonce = "mine";
  f.session_id = 111;
  f.ttl = 2000ms;
  f.now = t0;
  return f;
}

const char* step_name(const acquire_step& s) {
  static const char* names[] = {"create_record", "write_hold", "held_back",     "held",
                                "take",          "retake",     "bad_data",      "failsafe_held",
                                "abstain"};
  return names[s.index()];
}

TEST(zookeeper_decide_acquire, steps_as_a_table) {
  struct row {
    const char* what;
    node_seen record;
    node_seen lease;
    acquire_facts facts;
    const char* step;
    milliseconds remaining{-1};  // for held and held_back
    bool early_loss = false;     // held_back with a why
  };
  auto pending = me();
  pending.pending_reset = "the ZooKeeper session expired";
  pending.pending_reset_at = t0 - 10ms;
  auto saw_hold_long_ago = me();
  saw_hold_long_ago.seen_hold = "other-1";
  saw_hold_long_ago.seen_hold_at = t0 - 2500ms;
  auto saw_hold_recently = me();
  saw_hold_recently.seen_hold = "other-1";
  saw_hold_recently.seen_hold_at = t0 - 500ms;
  auto pending_after_old_hold = pending;
  pending_after_old_hold.seen_hold = "other-1";
  pending_after_old_hold.seen_hold_at = t0 - 500ms;  // seen before the reset was found
  pending_after_old_hold.pending_reset_at = t0 - 100ms;
  auto saw_version = me();
  saw_version.seen_lease_czxid = 20;
  saw_version.seen_lease_version = 4;
  saw_version.seen_lease_at = t0 - 1500ms;
  auto saw_version_long_ago = saw_version;
  saw_version_long_ago.seen_lease_at = t0 - 2900ms;
  const node_seen none;
  auto saw_renewal_recently = me();
  saw_renewal_recently.seen_lease_czxid = 20;
  saw_renewal_recently.seen_lease_version = 9;
  saw_renewal_recently.seen_lease_at = t0 - 300ms;
  saw_renewal_recently.seen_lease_token = 5;  // the record's term
  auto saw_renewal_long_ago = saw_renewal_recently;
  saw_renewal_long_ago.seen_lease_at = t0 - 2100ms;
  // The record's term began (and its node went) before this store's first
  // look, 400 ms ago; the node it saw was an older term's.
  auto never_saw_the_term = saw_renewal_long_ago;
  never_saw_the_term.seen_lease_token = 4;
  never_saw_the_term.seen_record_at = t0 - 400ms;
  auto never_saw_the_term_long_ago = never_saw_the_term;
  never_saw_the_term_long_ago.seen_record_at = t0 - 2000ms;
  auto never_saw_a_node = me();
  never_saw_a_node.seen_record_at = t0;

  const std::vector<row> rows = {
      {"no record: create it, held back", none, none, me(), "create_record"},
      {"a free lease is taken", record_node(5), none, me(), "take"},
      {"another's lease is held", record_node(5), lease_node("node-b", "theirs", 222), me(), "held",
       2000ms},
      {"our own data from another session is not ours", record_node(5),
       lease_node("node-a", "mine", 999), me(), "held", 2000ms},
      {"our node on our session is ours (a lost create reply)", record_node(5),
       lease_node("node-a", "mine", 111), me(), "retake"},
      {"a version seen before counts down", record_node(5), lease_node("node-b", "theirs", 222, 4),
       saw_version, "held", 500ms},
      {"a new version starts a full ttl", record_node(5), lease_node("node-b", "theirs", 222, 5),
       saw_version, "held", 2000ms},
      {"a version unchanged for a ttl: a tenth of it, which the watch cuts short", record_node(5),
       lease_node("node-b", "theirs", 222, 4), saw_version_long_ago, "held", 200ms},
      {"a hold seen for the first time: one ttl", record_node(5, "other-1"), none, me(),
       "held_back", 2000ms},
      {"a hold seen 500 ms ago: the rest", record_node(5, "other-1"), none, saw_hold_recently,
       "held_back", 1500ms},
      {"a hold over for this store: take", record_node(5, "other-1"), none, saw_hold_long_ago,
       "take"},
      {"a pending reset writes its hold", record_node(5), none, pending, "write_hold"},
      {"a pending reset adopts a hold first seen now", record_node(5, "other-1"), none, pending,
       "held_back", 2000ms},
      {"a pending reset is not covered by a hold seen before it", record_node(5, "other-1"), none,
       pending_after_old_hold, "write_hold"},
      {"a pending reset does not hold back a live holder", record_node(5),
       lease_node("node-b", "theirs", 222), pending, "held", 2000ms},
      {"a node gone unreleased soon after a renewal: held back (early loss)",
       record_node(5, "", 3, false), none, saw_renewal_recently, "held_back", 1700ms, true},
      {"a node gone unreleased a ttl after its last renewal: an expired session, take",
       record_node(5, "", 3, false), none, saw_renewal_long_ago, "take"},
      {"a term whose node this store never saw, gone unreleased: held back one ttl from its first "
       "look (an operator's delete right after a take)",
       record_node(5, "", 3, false), none, never_saw_a_node, "held_back", 2000ms, true},
      {"the same, first looked at 400 ms ago, after an older term's node: the rest",
       record_node(5, "", 3, false), none, never_saw_the_term, "held_back", 1600ms, true},
      {"the same, first looked at a ttl ago: take", record_node(5, "", 3, false), none,
       never_saw_the_term_long_ago, "take"},
      {"a released term: take at once", record_node(5), none, saw_renewal_recently, "take"},
      {"a record of another program",
       [] {
         auto n = record_node(5);
         n.data = "hello";
         return n;
       }(),
       none, me(), "bad_data"},
      {"a lease node of another program", record_node(5),
       [] {
         auto n = lease_node("x", "y", 1);
         n.data = "hello";
         return n;
       }(),
       me(), "bad_data"},
  };
  for (const auto& r : rows) {
    const auto step = decide_acquire(r.record, r.lease, r.facts, "mine-1");
    EXPECT_STREQ(step_name(step), r.step) << r.what;
    if (const auto* h = std::get_if<acquire_steps::held>(&step)) {
      EXPECT_EQ(h->remaining, r.remaining) << r.what;
      EXPECT_EQ(h->token, 77u) << r.what;
    }
    if (const auto* b = std::get_if<acquire_steps::held_back>(&step)) {
      EXPECT_EQ(b->remaining, r.remaining) << r.what;
      EXPECT_EQ(!b->why.empty(), r.early_loss) << r.what << ": " << b->why;
    }
  }
}

TEST(zookeeper_decide_acquire, take_lifts_the_token_and_clears_the_hold) {
  auto saw = me();
  saw.seen_hold = "other-1";
  saw.seen_hold_at = t0 - 3000ms;
  const auto step = decide_acquire(record_node(5, "other-1", 8), {}, saw, "mine-1");
  const auto* take = std::get_if<acquire_steps::take>(&step);
  ASSERT_NE(take, nullptr) << step_name(step);
  EXPECT_EQ(take->record_version, 8);
  EXPECT_EQ(take->record.counter, 1764100000000001u);
  EXPECT_EQ(take->record.hold, "");
  EXPECT_EQ(take->record.released, 5u) << "the last term's release is kept";
  EXPECT_EQ(take->lease.token, take->record.counter);
  EXPECT_EQ(take->lease.node_id, "node-a");
  EXPECT_EQ(take->lease.nonce, "mine");
}

TEST(zookeeper_decide_acquire, a_missing_record_is_created_with_this_stores_hold) {
  const auto step = decide_acquire({}, {}, me(), "mine-4");
  const auto* create = std::get_if<acquire_steps::create_record>(&step);
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->record.hold, "mine-4");
  EXPECT_NE(create->record.why, "");
}

TEST(zookeeper_decide_acquire, retake_checks_both_versions) {
  const auto step =
      decide_acquire(record_node(9, "", 12), lease_node("node-a", "mine", 111, 6), me(), "mine-1");
  const auto* retake = std::get_if<acquire_steps::retake>(&step);
  ASSERT_NE(retake, nullptr) << step_name(step);
  EXPECT_EQ(retake->record_version, 12);
  EXPECT_EQ(retake->lease_version, 6);
  EXPECT_GT(retake->lease.token, 9u);
}

// --- switchover: the reservation and the registry ----------------------------------

TEST(zookeeper_record_value, a_reservation_round_trips_and_a_record_without_one_reads_as_before) {
  const auto r = handed_over_record(42, "node-b", "node-a", 5000ms);
  EXPECT_EQ(r.counter, 42u);
  EXPECT_EQ(r.released, 42u) << "a hand-over ends the term as a release does";
  const auto data = encode_record(r);
  EXPECT_EQ(data,
            "counter 42\nreleased 42\nhold \nwhy \nreserved node-b\nby node-a\nwindow 5000\n");
  const auto back = decode_record(data);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->reserved_for, "node-b");
  EXPECT_EQ(back->reserved_by, "node-a");
  EXPECT_EQ(back->reserved_window, 5000ms);
  EXPECT_EQ(encode_record(released_record(42)), "counter 42\nreleased 42\nhold \nwhy \n");
  EXPECT_EQ(handed_over_record(1, "b", "a", -5ms).reserved_window, 0ms);
  const auto longest = handed_over_record(1, "b", "a", milliseconds::max());
  EXPECT_TRUE(decode_record(encode_record(longest)).has_value())
      << "a window too long to read back: " << longest.reserved_window.count();
  for (const std::string bad : {"counter 1\nwindow x\n", "counter 1\nwindow -1\n"}) {
    EXPECT_FALSE(decode_record(bad).has_value()) << "'" << bad << "'";
  }
  EXPECT_FALSE(reservation_node_problem("node-b@east.1").has_value());
  EXPECT_TRUE(reservation_node_problem("").has_value());
  EXPECT_TRUE(reservation_node_problem("node\nb").has_value());
}

TEST(zookeeper_registry, any_node_id_is_one_node_name_after_its_priority) {
  const auto p = make_paths("/baton", "orders");
  EXPECT_EQ(p.candidates, "/baton/orders/candidates");
  EXPECT_EQ(candidate_path(p, "node-a@east.1_x", 0), "/baton/orders/candidates/0_node-a@east.1_x");
  EXPECT_EQ(candidate_path(p, "a/b c%", 12), "/baton/orders/candidates/12_a%2Fb%20c%25");
  EXPECT_EQ(candidate_path(p, ".", -3), "/baton/orders/candidates/-3_%2E");
  EXPECT_EQ(candidate_path(p, "..", 1), "/baton/orders/candidates/1_%2E%2E");
  EXPECT_EQ(candidate_path(p, "...", 1), "/baton/orders/candidates/1_...");
}

TEST(zookeeper_registry, a_name_says_its_node_id_and_priority) {
  for (const auto& [node, priority] :
       std::vector<std::pair<std::string, int>>{{"node-a", 0},
                                                {"a_b_c", -7},
                                                {"a/b c%\x01", 2147483647},
                                                {".", 1},
                                                {"..", -1},
                                                {"%2E", 5},
                                                {std::string("n\0ul", 5), 3}}) {
    const auto name = candidate_name(node, priority);
    const auto back = decode_candidate_name(name);
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_EQ(back->node_id, node) << name;
    EXPECT_EQ(back->priority, priority) << name;
  }
  // Not a name baton gives: no priority, a bad number, no node id, an
  // escape cut short or in lower case, a byte that would be escaped, an
  // escape of a byte that would not be, a node id of "." unescaped.
  for (const std::string bad :
       {"", "node-a", "_node-a", "x_node-a", "+1_node-a", "1_", "99999999999_n", "1_a%2", "1_a%2f",
        "1_a b", "1_%41", "1_.", "01_node-a"}) {
    EXPECT_FALSE(decode_candidate_name(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(zookeeper_registry, outranked_by_counts_the_higher_priorities_but_self_and_holder) {
  const std::vector<candidate_value> registry = {{9, "node-a"}, {5, "node-b"}, {1, "node-c"},
                                                 {1, "node-d"}, {7, "node-e"}, {3, "node-e"}};
  // node-e twice (a restart with another priority): once.
  EXPECT_EQ(count_outranking(registry, "node-d", 1, "node-a"), 2);
  EXPECT_EQ(count_outranking(registry, "node-d", 1, ""), 3);
  EXPECT_EQ(count_outranking(registry, "node-b", 5, "node-a"), 1);
  EXPECT_EQ(count_outranking(registry, "node-b", 5, "node-e"), 1);
  EXPECT_EQ(count_outranking(registry, "node-a", 9, "node-b"), 0);
  // Equal priorities never outrank.
  EXPECT_EQ(count_outranking(registry, "node-c", 1, "node-a"), 2);
  EXPECT_EQ(count_outranking(registry, "node-x", 0, "node-x"), 5);
  EXPECT_EQ(count_outranking({}, "node-a", 0, ""), 0);
}

// A cool-down rides on the registry node's data, counted from the node's
// mtime in the server's clock; the candidate itself reads as before.
TEST(zookeeper_registry, a_cool_down_is_counted_from_the_nodes_mtime) {
  const auto data = encode_cooling_candidate({3, "node-a"}, milliseconds(10'000));
  EXPECT_EQ(data, "3 node-a\ncooling 10000");
  const auto back = decode_candidate(data);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->priority, 3);
  EXPECT_EQ(back->node_id, "node-a");
  EXPECT_EQ(cooling_left(data, 50'000, 50'000), milliseconds(10'000));
  EXPECT_EQ(cooling_left(data, 50'000, 53'500), milliseconds(6'500));
  EXPECT_EQ(cooling_left(data, 50'000, 60'000), milliseconds(0));
  EXPECT_EQ(cooling_left(data, 50'000, 70'000), milliseconds(0));
  EXPECT_EQ(cooling_left(data, 50'000, 49'000), milliseconds(10'000)) << "never more than it said";
  EXPECT_EQ(cooling_left(data, 50'000, 0), milliseconds(10'000)) << "unknown time: still cooling";
  EXPECT_EQ(cooling_left(encode_candidate({3, "node-a"}), 50'000, 50'000), milliseconds(0));
  for (const std::string bad : {"3 a\ncooling ", "3 a\ncooling x", "3 a\ncooling -5", "3 a\ncooling 5x"}) {
    EXPECT_EQ(cooling_left(bad, 1, 1), milliseconds(0)) << bad;
  }
}

TEST(zookeeper_registry, a_registration_round_trips_and_refuses_what_baton_never_writes) {
  const auto data = encode_candidate({-2, "node c"});
  EXPECT_EQ(data, "-2 node c");
  const auto back = decode_candidate(data);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->priority, -2);
  EXPECT_EQ(back->node_id, "node c");
  for (const std::string bad : {"", "7", "7 ", " node", "x node", "99999999999 node", "+1 n"}) {
    EXPECT_FALSE(decode_candidate(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(zookeeper_server_clock, runs_on_from_the_last_sample) {
  server_clock c;
  EXPECT_FALSE(c.known());
  EXPECT_EQ(c.now_ms(t0), 0);
  c.learn(0, t0);
  EXPECT_FALSE(c.known()) << "a stat without a time teaches nothing";
  c.learn(1764100000000, t0);
  EXPECT_EQ(c.now_ms(t0 + 1500ms), 1764100001500);
  c.learn(1764100009000, t0 + 2000ms);
  EXPECT_EQ(c.now_ms(t0 + 2500ms), 1764100009500);
  EXPECT_EQ(registered_for(1764100000000, 1764100002500), 2500ms);
  EXPECT_EQ(registered_for(1764100003000, 1764100002500), 0ms) << "never negative";
  EXPECT_EQ(registered_for(1764100000000, 0), -1ms);
  EXPECT_EQ(registered_for(0, 1764100002500), -1ms);
}

// A record as a hand-over to `to` left it, written at the server's
// 1764100000000 (version 4).
node_seen reserved_record(std::string to, milliseconds window = 5000ms) {
  auto n = record_node(5);
  n.data = encode_record(handed_over_record(5, std::move(to), "node-x", window));
  n.version = 4;
  return n;
}

TEST(zookeeper_decide_acquire, a_reservation_as_a_table) {
  struct row {
    const char* what;
    node_seen record;
    acquire_facts facts;
    const char* step;
    milliseconds remaining{-1};  // held or held back
  };
  auto target = me();
  target.node_id = "node-b";
  auto saw_it = me();
  saw_it.seen_record_czxid = 10;
  saw_it.seen_record_version = 4;
  saw_it.seen_record_at = t0 - 1200ms;
  auto saw_it_long_ago = saw_it;
  saw_it_long_ago.seen_record_at = t0 - 5000ms;
  auto server_early = me();  // the server's clock 800 ms after the hand-over
  server_early.server_now_ms = 1764100000800;
  auto server_late = me();  // ... and 5 s after it
  server_late.server_now_ms = 1764100005000;
  auto server_behind = saw_it;  // a server clock that says more than this store saw
  server_behind.server_now_ms = 1764099999000;
  auto held_back_too = saw_it;
  held_back_too.seen_hold = "other-1";
  held_back_too.seen_hold_at = t0 - 500ms;
  auto pending = me();
  pending.pending_reset = "the ZooKeeper session expired";
  pending.pending_reset_at = t0 - 10ms;
  const auto with_hold = [] {
    auto n = reserved_record("node-b");
    auto r = *decode_record(n.data);
    r.hold = "other-1";
    n.data = encode_record(r);
    return n;
  }();

  const std::vector<row> rows = {
      {"another's reservation first seen now: the whole window", reserved_record("node-b"), me(),
       "held", 5000ms},
      {"another's reservation seen 1200 ms ago: the rest", reserved_record("node-b"), saw_it,
       "held", 3800ms},
      {"another's reservation seen a window ago: over, take", reserved_record("node-b"),
       saw_it_long_ago, "take"},
      {"the server's clock counts from the hand-over", reserved_record("node-b"), server_early,
       "held", 4200ms},
      {"the server's clock says the window is over: take", reserved_record("node-b"), server_late,
       "take"},
      {"never longer than the window from this store's first sight", reserved_record("node-b"),
       server_behind, "held", 3800ms},
      {"the reserved node takes it", reserved_record("node-b"), target, "take"},
      {"a window of 0: free for all", reserved_record("node-b", 0ms), me(), "take"},
      {"a hold-back binds the reserved node too", with_hold,
       [&] {
         auto f = held_back_too;
         f.node_id = "node-b";
         return f;
       }(),
       "held_back", 1500ms},
      {"a hold-back comes before the reservation", with_hold, held_back_too, "held_back", 1500ms},
      {"a pending reset writes its hold", reserved_record("node-b"), pending, "write_hold"},
  };
  for (const auto& r : rows) {
    const auto step = decide_acquire(r.record, {}, r.facts, "mine-1");
    EXPECT_STREQ(step_name(step), r.step) << r.what;
    if (const auto* h = std::get_if<acquire_steps::held>(&step)) {
      EXPECT_EQ(h->remaining, r.remaining) << r.what;
      EXPECT_EQ(h->reserved_for, "node-b") << r.what;
      EXPECT_EQ(h->holder, "node-x") << r.what << ": the node that handed over";
      EXPECT_EQ(h->token, 5u) << r.what;
    }
    if (const auto* b = std::get_if<acquire_steps::held_back>(&step)) {
      EXPECT_EQ(b->remaining, r.remaining) << r.what;
    }
    if (const auto* t = std::get_if<acquire_steps::take>(&step)) {
      EXPECT_EQ(t->record.reserved_for, "") << r.what << ": the take ends the reservation";
      EXPECT_EQ(t->record_version, 4) << r.what;
    }
    if (const auto* w = std::get_if<acquire_steps::write_hold>(&step)) {
      EXPECT_EQ(w->record.reserved_for, "") << r.what << ": a reset ends the reservation";
    }
  }
}

TEST(zookeeper_decide_acquire, a_held_lease_says_no_reservation) {
  const auto step = decide_acquire(record_node(5), lease_node("node-b", "theirs", 222), me(), "m");
  const auto* h = std::get_if<acquire_steps::held>(&step);
  ASSERT_NE(h, nullptr) << step_name(step);
  EXPECT_EQ(h->reserved_for, "");
}

}  // namespace
}  // namespace baton::zookeeper_detail
