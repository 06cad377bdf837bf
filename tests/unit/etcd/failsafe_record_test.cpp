// lease.failsafe peers' record as etcd keeps it (failsafe_record.hpp): its
// form read back, a grant's token from its offset and revision, the list
// number's digits ordered as etcd compares bytes, the hold a free lease
// answers; and the registration's third line with the peer port and
// promise (candidate_registry.hpp), judged by the reader's revisions.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "etcd/candidate_registry.hpp"
#include "etcd/failsafe_record.hpp"

namespace baton::etcd_detail {
namespace {

using namespace std::chrono_literals;

key_value record_kv(const std::string& value, std::int64_t mod_revision = 40) {
  return key_value{"baton/e/failsafe", value, 10, mod_revision, 1, 0};
}

TEST(failsafe_record, reads_back_what_a_renewal_writes) {
  const auto value = failsafe_record_value(3, "117", "node-a:n1", "10.0.0.1:9465",
                                           {{"node-b", "10.0.0.2:9465"}, {"node-c", ""}});
  EXPECT_EQ(value,
            "00000000000000000003 117 node-a:n1 10.0.0.1:9465\nnode-b 10.0.0.2:9465\nnode-c -");
  const auto r = read_failsafe_record(record_kv(value));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->seq, 3u);
  EXPECT_EQ(r->token, 117u);
  EXPECT_EQ(r->value, "node-a:n1");
  EXPECT_EQ(r->address, "10.0.0.1:9465");
  ASSERT_EQ(r->peers.size(), 2u);
  EXPECT_EQ(r->peers[1], (failsafe_peer{"node-c", ""}));
}

TEST(failsafe_record, a_grants_token_is_its_offset_plus_the_records_revision) {
  const auto r =
      read_failsafe_record(record_kv(failsafe_record_value(1, "+100", "node-a:n1", "", {}), 42));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->token, 142u);
  EXPECT_EQ(r->address, "");
  EXPECT_TRUE(r->peers.empty());
}

TEST(failsafe_record, a_value_not_of_its_form_is_refused) {
  EXPECT_FALSE(read_failsafe_record(record_kv("")));
  EXPECT_FALSE(read_failsafe_record(record_kv("hello")));
  EXPECT_FALSE(read_failsafe_record(record_kv("00000000000000000001 x node-a:n1 -")));
  EXPECT_FALSE(read_failsafe_record(record_kv("00000000000000000001 0 node-a:n1 -")));
  EXPECT_FALSE(read_failsafe_record(record_kv("00000000000000000001 5 node-a:n1 -\nbroken")));
}

TEST(failsafe_record, list_numbers_order_as_etcd_compares_bytes) {
  // The renewal's comparison: the record's value LESS the new number's digits.
  const auto record = failsafe_record_value(9, "5", "a:n", "-", {});
  EXPECT_LT(record, failsafe_seq_text(10));
  EXPECT_GT(record, failsafe_seq_text(9)) << "the same number is not above the record's";
  EXPECT_GT(record, failsafe_seq_text(8));
  const auto c = failsafe_seq_below("k", 10);
  EXPECT_EQ(c.target, "VALUE");
  EXPECT_EQ(c.result, "LESS");
}

TEST(failsafe_record, a_free_lease_is_held_by_another_unreleased_term_above_the_cleared) {
  failsafe_record r{2, 50, "node-a:n1", "10.0.0.1:9465", {{"node-b", "10.0.0.2:9465"}}};
  auto hold = failsafe_hold_of(r, {}, "node-b:n2", "node-b", 0);
  ASSERT_TRUE(hold);
  EXPECT_EQ(hold->leader, "node-a");
  EXPECT_EQ(hold->token, 50u);
  EXPECT_EQ(hold->leader_address, "10.0.0.1:9465");
  EXPECT_EQ(hold->peers.size(), 1u);
  EXPECT_FALSE(failsafe_hold_of(r, {}, "node-b:n2", "node-b", 50)) << "cleared";
  EXPECT_FALSE(failsafe_hold_of(r, {}, "node-a:n1", "node-a", 0)) << "its own term";
}

TEST(failsafe_record, a_registered_promise_holds_unless_cleared_or_to_the_caller) {
  const std::vector<registered_promise> promises = {{"node-c", "10.0.0.3:9465", 70, "node-a"},
                                                    {"node-d", "", 60, "node-a"}};
  auto hold = failsafe_hold_of(std::nullopt, promises, "node-b:n2", "node-b", 0);
  ASSERT_TRUE(hold);
  EXPECT_EQ(hold->token, 70u);
  EXPECT_EQ(hold->leader, "node-a");
  EXPECT_EQ(hold->peers.size(), 2u);
  hold = failsafe_hold_of(std::nullopt, promises, "node-b:n2", "node-b", 60);
  ASSERT_TRUE(hold);
  EXPECT_EQ(hold->peers.size(), 1u);
  EXPECT_FALSE(failsafe_hold_of(std::nullopt, promises, "node-b:n2", "node-b", 70));
  EXPECT_FALSE(failsafe_hold_of(std::nullopt, promises, "node-a:n1", "node-a", 0))
      << "promises to the caller's own term";
}

TEST(failsafe_registration, the_third_line_carries_the_peer_port_and_promise) {
  registration r{0, 0ms, 5};
  r.failsafe = registration_failsafe{"10.0.0.2:9465", 70, "node-a", 1500ms};
  const auto value = registration_value(r);
  EXPECT_EQ(value, "0 0 5\n\nfailsafe 10.0.0.2:9465 70 node-a 1500");
  const auto back = parse_registration(value);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->card, "");
  ASSERT_TRUE(back->failsafe);
  EXPECT_EQ(*back->failsafe, *r.failsafe);
  r.card = "standing=eligible";
  r.failsafe = registration_failsafe{"10.0.0.2:9465", 0, "", 0ms};
  const auto plain = parse_registration(registration_value(r));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->card, "standing=eligible");
  EXPECT_EQ(plain->failsafe->promise_token, 0u);
}

TEST(failsafe_registration, a_promise_counts_down_from_its_put_by_the_readers_revisions) {
  revision_clock clock(4000ms);
  const auto t0 = mono_clock::now();
  clock.observe(10, t0);
  registration r{0, 0ms, 0};
  r.failsafe = registration_failsafe{"10.0.0.3:9465", 70, "node-a", 1000ms};
  const std::vector<key_value> kvs = {{"c/node-c", registration_value(r), 10, 10, 1, 0}};
  auto judged = judge_candidates(kvs, "c/", clock, t0 + 500ms, 4000ms);
  ASSERT_EQ(judged.live.size(), 1u);
  EXPECT_EQ(judged.live[0].peer_address, "10.0.0.3:9465");
  ASSERT_EQ(judged.promises.size(), 1u);
  EXPECT_EQ(judged.promises[0].token, 70u);
  judged = judge_candidates(kvs, "c/", clock, t0 + 1500ms, 4000ms);
  EXPECT_TRUE(judged.promises.empty()) << "over by the reader's own clock";
}

}  // namespace
}  // namespace baton::etcd_detail
