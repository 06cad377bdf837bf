// The election's keys read into acquire decisions, the remaining times, the
// token floor that finds a restore, and watch events into store events: the
// pure steps of etcd_store, as tables.
#include "etcd/election_keys.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace baton::etcd_detail {
namespace {

const election_keys keys("baton/", "e");

key_value kv(const std::string& key, const std::string& value, std::int64_t mod,
             std::int64_t version = 1, std::int64_t lease = 0) {
  return {key, value, mod - version + 1, mod, version, lease};
}

TEST(etcd_election_keys, the_keys_live_under_one_prefix) {
  EXPECT_EQ(keys.dir, "baton/e/");
  EXPECT_EQ(keys.end, "baton/e0");
  EXPECT_EQ(keys.lease, "baton/e/lease");
  EXPECT_EQ(keys.fence, "baton/e/fence");
  EXPECT_EQ(keys.record, "baton/e/record");
  EXPECT_EQ(keys.released, "baton/e/released");
  EXPECT_EQ(keys.reserved, "baton/e/reserved");
  EXPECT_EQ(keys.candidate("n1"), "baton/e/candidates/n1");
  // Another election whose name starts alike is outside the range.
  const election_keys other("baton/", "e2");
  EXPECT_FALSE(other.lease >= keys.dir && other.lease < keys.end);
}

// Reads and the watch cover the state's range alone: every state key is in
// it, no registration is (registrations cost a watcher nothing).
TEST(etcd_election_keys, the_state_range_holds_every_state_key_and_no_registration) {
  const auto in_state = [](const std::string& k) { return k >= keys.state && k < keys.end; };
  for (const auto* k :
       {&keys.lease, &keys.holder, &keys.fence, &keys.record, &keys.released, &keys.reserved}) {
    EXPECT_TRUE(in_state(*k)) << *k;
  }
  for (const char* node : {"a", "zzz", "~", "\xff\xff"}) {
    const auto c = keys.candidate(node);
    EXPECT_FALSE(in_state(c)) << c;
    EXPECT_TRUE(c >= keys.candidates && c < keys.state) << c;
    EXPECT_TRUE(c >= keys.dir && c < keys.end) << c;
  }
}

TEST(etcd_election_keys, a_reservation_names_its_target_the_node_that_handed_over_and_the_lease) {
  const auto v = reservation_value({"n2", "n1", 77});
  EXPECT_EQ(v, "n2\nn1\n77");
  const auto r = reservation_of(v);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->to, "n2");
  EXPECT_EQ(r->from, "n1");
  EXPECT_EQ(r->lease, 77);
  const auto unknown = reservation_of("n2\n\nx");
  ASSERT_TRUE(unknown) << "the target alone is enough";
  EXPECT_EQ(unknown->from, "");
  EXPECT_EQ(unknown->lease, 0);
  for (const char* bad : {"", "n2", "n2\nn1", "\nn1\n7"})
    EXPECT_FALSE(reservation_of(bad).has_value()) << bad;
}

TEST(etcd_election_keys, a_reservations_time_left_is_etcds_not_capped_by_the_ttl) {
  EXPECT_EQ(reservation_left(30), milliseconds(30000));
  EXPECT_EQ(reservation_left(0), milliseconds(500)) << "etcd's expiry check";
  EXPECT_EQ(reservation_left(-1), milliseconds(0)) << "gone: over";
}

TEST(etcd_election_keys, lease_values_name_their_holder) {
  EXPECT_EQ(lease_value("n1", "ab12"), "n1:ab12");
  EXPECT_EQ(holder_of("n1:ab12"), "n1");
  EXPECT_EQ(holder_of("host:8080:ab12"), "host:8080") << "a node id may hold ':'";
  EXPECT_EQ(holder_of("bare"), "bare");
}

TEST(etcd_election_keys, a_terms_value_carries_the_raft_term_it_began_in) {
  EXPECT_EQ(stamped_value("n1:ab12", 7), "n1:ab12@7");
  EXPECT_EQ(stamped_value("n1:ab12", 0), "n1:ab12") << "an unknown term is left out";
  EXPECT_EQ(identity_of("n1:ab12@7"), "n1:ab12");
  EXPECT_EQ(holder_of("n1:ab12@7"), "n1");
  EXPECT_EQ(stamped_term_of("n1:ab12@7"), 7);
  EXPECT_EQ(holder_of("host:8080:ab12@3"), "host:8080");
  // Values without a term: an older baton's, by hand, or an '@' that is
  // part of the node id.
  for (const char* plain : {"n1:ab12", "user@host:ab12", "n1:ab12@", "n1:ab12@x7", "n1@7:ab12"}) {
    EXPECT_EQ(identity_of(plain), plain) << plain;
    EXPECT_FALSE(stamped_term_of(plain).has_value()) << plain;
  }
  EXPECT_FALSE(stamped_term_of("n1:ab12@0").has_value());
}

TEST(etcd_election_keys, a_lease_gone_after_a_raft_leader_change_may_have_ended_early) {
  struct row {
    const char* name;
    const char* value;
    std::int64_t term_now;
    bool early;
  };
  const std::vector<row> rows = {
      {"the term it began in: expired or released", "n2:x@5", 5, false},
      {"an answer from a member behind in term", "n2:x@5", 4, false},
      {"a later raft term: a former leader may have revoked it", "n2:x@5", 6, true},
      {"no term in the value (an older baton)", "n2:x", 5, true},
      {"no term in the answer", "n2:x@5", 0, true},
  };
  for (const auto& r : rows)
    EXPECT_EQ(may_have_ended_early(r.value, r.term_now), r.early) << r.name;
}

TEST(etcd_election_keys, record_offsets) {
  EXPECT_EQ(parse_offset("0"), 0);
  EXPECT_EQ(parse_offset("1234"), 1234);
  for (const char* bad : {"", "-1", "12x", " 1", "x"})
    EXPECT_FALSE(parse_offset(bad).has_value()) << bad;
}

TEST(etcd_election_keys, a_read_sorts_the_keys_and_ignores_others) {
  const auto v = read_view(
      {"c", 9},
      {kv("baton/e/fence", "n2:x", 8), kv("baton/e/lease", "n1:y", 7), kv("baton/e/record", "0", 2),
       kv("baton/e/other", "?", 3), kv("baton/e/holder", "n1:y", 7),
       kv("baton/e/reserved", "n2\nn1\n5", 8), kv("baton/e/candidates/n3", "0 0 0", 4)},
      keys);
  EXPECT_EQ(v.hdr.revision, 9);
  ASSERT_TRUE(v.lease && v.holder && v.fence && v.record && v.reserved);
  EXPECT_EQ(v.reserved->value, "n2\nn1\n5");
  EXPECT_EQ(v.holder->value, "n1:y");
  EXPECT_EQ(v.lease->value, "n1:y");
  EXPECT_EQ(v.fence->mod_revision, 8);
  EXPECT_EQ(v.record->value, "0");
}

TEST(etcd_election_keys, what_an_acquire_does_after_its_read) {
  const auto mine = kv("baton/e/lease", "me:1", 5);
  const auto theirs = kv("baton/e/lease", "n2:1", 5);
  const auto fence = kv("baton/e/fence", "n2:1", 6);
  const auto for_me = kv("baton/e/reserved", "me\nn2\n4", 6);
  const auto for_n3 = kv("baton/e/reserved", "n3\nn2\n4", 6);
  const auto damaged = kv("baton/e/reserved", "n3", 6);
  struct row {
    const char* name;
    std::optional<key_value> lease;
    std::optional<key_value> fence;
    bool must_fence;
    acquire_step expected;
    std::optional<key_value> reserved = std::nullopt;
  };
  const std::vector<row> rows = {
      {"free", std::nullopt, std::nullopt, false, acquire_step::take},
      {"ours", mine, std::nullopt, false, acquire_step::take},
      {"ours, with its raft term", kv("baton/e/lease", "me:1@4", 5), std::nullopt, false,
       acquire_step::take},
      {"theirs", theirs, std::nullopt, false, acquire_step::held},
      {"fenced", std::nullopt, fence, false, acquire_step::held_back},
      {"fenced and theirs", theirs, fence, false, acquire_step::held_back},
      {"fenced and ours", mine, fence, false, acquire_step::held_back},
      {"a reset found, free", std::nullopt, std::nullopt, true, acquire_step::fence},
      {"a reset found, theirs", theirs, std::nullopt, true, acquire_step::fence},
      {"a reset found, fenced", std::nullopt, fence, true, acquire_step::fence},
      {"reserved for me", std::nullopt, std::nullopt, false, acquire_step::take, for_me},
      {"reserved for another", std::nullopt, std::nullopt, false, acquire_step::reserved, for_n3},
      {"a damaged reservation", std::nullopt, std::nullopt, false, acquire_step::take, damaged},
      {"reserved for another, and theirs", theirs, std::nullopt, false, acquire_step::held, for_n3},
      {"reserved for another, and ours", mine, std::nullopt, false, acquire_step::take, for_n3},
      {"reserved for another, fenced", std::nullopt, fence, false, acquire_step::held_back, for_n3},
      {"reserved for me, fenced", std::nullopt, fence, false, acquire_step::held_back, for_me},
      {"reserved for another, a reset found", std::nullopt, std::nullopt, true, acquire_step::fence,
       for_n3},
  };
  for (const auto& r : rows) {
    election_view v;
    v.lease = r.lease;
    v.fence = r.fence;
    v.reserved = r.reserved;
    EXPECT_EQ(decide_acquire(v, r.must_fence, "me:1", "me"), r.expected) << r.name;
  }
}

TEST(etcd_election_keys, remaining_time_from_etcds_whole_seconds) {
  using ms = milliseconds;
  struct row {
    std::int64_t seconds;
    ms ttl;
    ms expected;
  };
  const std::vector<row> rows = {
      {2, ms(3000), ms(2000)}, {3, ms(3000), ms(3000)},
      {2, ms(1500), ms(1500)},  // never above the ttl
      {0, ms(3000), ms(500)},  {0, ms(200), ms(200)},
      {-1, ms(3000), ms(-1)},  // gone
  };
  for (const auto& r : rows) {
    EXPECT_EQ(remaining_of(r.seconds, r.ttl), r.expected)
        << r.seconds << " s, ttl " << r.ttl.count();
  }
}

TEST(etcd_election_keys, lease_seconds_round_the_ttl_up) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> rows = {
      {1, 1}, {999, 1}, {1000, 1}, {1001, 2}, {1500, 2}, {2000, 2}, {10000, 10}, {10001, 11}};
  for (const auto& [ms, s] : rows) EXPECT_EQ(lease_seconds(milliseconds(ms)), s) << ms;
}

TEST(etcd_token_floor, revisions_moving_on_find_nothing) {
  token_floor f;
  EXPECT_FALSE(f.observe_header({"c1", 3}));
  EXPECT_FALSE(f.observe_record(kv("baton/e/record", "0", 2)));
  EXPECT_FALSE(f.observe_header({"c1", 3}));
  EXPECT_FALSE(f.observe_header({"c1", 9}));
  EXPECT_EQ(f.token_of(9), 9);
  EXPECT_EQ(f.highest_token(), 9);
}

// A first start reads the missing record twice (the acquire's read and the
// watch's): one finding, so the daemon warns once. It is news again once a
// record was there in between, read or written by this store's fence.
TEST(etcd_token_floor, a_missing_record_is_found_once_until_a_record_is_back) {
  token_floor f;
  ASSERT_TRUE(f.observe_record(std::nullopt));
  EXPECT_FALSE(f.observe_record(std::nullopt)) << "the same missing record, read again";
  f.fenced(5, 7);
  const auto after_fence = f.observe_record(std::nullopt);
  ASSERT_TRUE(after_fence) << "deleted after this store's fence wrote it";
  EXPECT_TRUE(after_fence->record_missing);
  EXPECT_FALSE(f.observe_record(std::nullopt));
  EXPECT_FALSE(f.observe_record(kv("baton/e/record", "5", 7)));
  EXPECT_TRUE(f.observe_record(std::nullopt)) << "deleted after it was read";
  // A record that holds no offset: found once too, and again when it is
  // missing instead.
  ASSERT_TRUE(f.observe_record(kv("baton/e/record", "x", 9)));
  EXPECT_FALSE(f.observe_record(kv("baton/e/record", "x", 9)));
  EXPECT_TRUE(f.observe_record(std::nullopt));
}

TEST(etcd_token_floor, a_revision_gone_back_must_fence_and_later_tokens_pass_every_earlier_one) {
  token_floor f;
  f.observe_header({"c1", 2});
  f.observe_record(kv("baton/e/record", "0", 2));
  f.observe_header({"c1", 8});  // the last leader's token: 8
  const auto found = f.observe_header({"c1", 3});
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->must_fence);
  EXPECT_FALSE(found->record_missing);
  EXPECT_NE(found->why.find("went back from 8 to 3"), std::string::npos) << found->why;
  // Found once: the next answer from the restored cluster is news no more.
  EXPECT_FALSE(f.observe_header({"c1", 3}));

  const auto offset = f.fence_offset(0);
  EXPECT_GE(offset, 8);
  f.fenced(offset, 4);
  EXPECT_GT(f.token_of(5), 8) << "a token after the restore at or below one before it";
  EXPECT_FALSE(f.observe_header({"c1", 5}));
}

// A watch's messages come on a stream of their own: one may say a revision
// below the calls' answers (the watch was created before a put that a call
// answered first), and a call may answer below a message that came first.
// Neither is a reset; another cluster is.
TEST(etcd_token_floor, a_watch_message_behind_the_calls_finds_nothing) {
  token_floor f;
  f.observe_header({"c1", 23});
  f.observe_record(kv("baton/e/record", "0", 2));
  f.observe_header({"c1", 24});                       // a standby's put, answered
  EXPECT_FALSE(f.observe_stream_header({"c1", 23}));  // the watch's `created`
  EXPECT_FALSE(f.observe_header({"c1", 24}));
  EXPECT_FALSE(f.observe_stream_header({"c1", 30}));
  EXPECT_EQ(f.highest_token(), 30);
  EXPECT_FALSE(f.observe_header({"c1", 25})) << "a call sent before the event at 30 arrived";
  EXPECT_TRUE(f.observe_header({"c1", 24 - 1})) << "a call's answer below a call's is a reset";
  const auto other = f.observe_stream_header({"c2", 40});
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->must_fence);
}

// A standby that learned of the last term from its watch alone: its own
// calls never said a revision as high as that term's. A txn it sends after
// the event was seen, answered at a revision below the event's, is data gone
// back (a restore of an older snapshot): a take there would issue a token
// below the last term's. Sent before the event, the same answer is no news.
TEST(etcd_token_floor, a_txn_answered_below_a_revision_the_watch_said_before_it_was_sent_must_fence) {
  token_floor f;
  f.observe_header({"c1", 10});
  f.observe_record(kv("baton/e/record", "8", 2));
  EXPECT_FALSE(f.observe_stream_header({"c1", 14}));  // the new leader's take, watched
  EXPECT_EQ(f.revision_seen(), 14);
  EXPECT_EQ(f.highest_token(), 22);
  EXPECT_FALSE(f.observe_linearizable_header({"c1", 12}, 11)) << "sent before the event came";
  const auto found = f.observe_linearizable_header({"c1", 12}, f.revision_seen());
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->must_fence);
  EXPECT_NE(found->why.find("went back from 14 (seen before this call was sent) to 12"),
            std::string::npos)
      << found->why;
  // Found once: the restored data's next answers are news no more.
  EXPECT_EQ(f.revision_seen(), 12);
  EXPECT_FALSE(f.observe_linearizable_header({"c1", 12}, f.revision_seen()));
  EXPECT_FALSE(f.observe_linearizable_header({"c1", 13}, f.revision_seen()));
  const auto offset = f.fence_offset(8);
  f.fenced(offset, 14);
  EXPECT_GT(f.token_of(15), 22) << "a token after the restore at or below the watched term's";
}

// A watch cancelled for compaction answers with a header that has no
// revision ({"cluster_id": ..., "raft_term": ...}): no restore.
TEST(etcd_token_floor, a_header_without_a_revision_finds_nothing) {
  token_floor f;
  f.observe_header({"c1", 8});
  EXPECT_FALSE(f.observe_header({"c1", 0}));
  EXPECT_FALSE(f.observe_header({"c1", 8}));
  EXPECT_EQ(f.highest_token(), 8);
}

TEST(etcd_token_floor, another_cluster_must_fence) {
  token_floor f;
  f.observe_header({"c1", 20});
  const auto found = f.observe_header({"c2", 30});
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->must_fence);
  EXPECT_NE(found->why.find("cluster changed"), std::string::npos);
}

TEST(etcd_token_floor, the_record_missing_lowered_or_raised) {
  {
    token_floor f;
    const auto found = f.observe_record(std::nullopt);
    ASSERT_TRUE(found);
    EXPECT_TRUE(found->must_fence);
    EXPECT_TRUE(found->record_missing);
  }
  {
    token_floor f;
    f.observe_record(kv("baton/e/record", "100", 2));
    const auto lowered = f.observe_record(kv("baton/e/record", "40", 2));
    ASSERT_TRUE(lowered);
    EXPECT_TRUE(lowered->must_fence) << "an older record is data gone back";
  }
  {
    token_floor f;
    f.observe_header({"c1", 6});
    f.observe_record(kv("baton/e/record", "0", 2));
    const auto raised = f.observe_record(kv("baton/e/record", "12", 7));
    ASSERT_TRUE(raised);
    EXPECT_FALSE(raised->must_fence) << "another candidate fenced already";
    EXPECT_NE(raised->why.find("another candidate"), std::string::npos);
    EXPECT_EQ(f.offset(), 12);
  }
  {
    token_floor f;
    const auto junk = f.observe_record(kv("baton/e/record", "twelve", 2));
    ASSERT_TRUE(junk);
    EXPECT_TRUE(junk->must_fence);
  }
}

TEST(etcd_token_floor, a_fence_never_lowers_the_offset) {
  token_floor f;
  f.observe_header({"c1", 5});
  EXPECT_EQ(f.fence_offset(std::nullopt), 5);
  EXPECT_EQ(f.fence_offset(100), 100);
}

TEST(etcd_watch_events, events_on_the_election_keys_as_store_events) {
  using k = seen_event::kind;
  const std::string own = "me:1";
  struct row {
    const char* name;
    watch_event e;
    k expected;
    std::string holder;
  };
  auto del = [](const std::string& key, std::optional<key_value> prev) {
    watch_event e;
    e.deleted = true;
    e.kv = {key, "", 0, 9, 0, 0};
    e.prev = std::move(prev);
    return e;
  };
  auto put = [](const key_value& v) {
    watch_event e;
    e.kv = v;
    return e;
  };
  const std::vector<row> rows = {
      {"a new term", put(kv("baton/e/lease", "n2:x", 9, 1, 7)), k::acquired, "n2"},
      {"our own new term", put(kv("baton/e/lease", "me:1", 9, 1, 7)), k::acquired, "me"},
      {"a re-acquire (not a new term)", put(kv("baton/e/lease", "n2:x", 9, 2, 7)), k::none, ""},
      {"another's release or expiry", del("baton/e/lease", kv("baton/e/lease", "n2:x", 8)),
       k::released, ""},
      {"a delete without its value", del("baton/e/lease", std::nullopt), k::released, ""},
      {"our own release", del("baton/e/lease", kv("baton/e/lease", own, 8)), k::none, ""},
      {"our own release, with its raft term",
       del("baton/e/lease", kv("baton/e/lease", own + "@3", 8)), k::none, ""},
      {"a new term with its raft term", put(kv("baton/e/lease", "n2:x@3", 9, 1, 7)), k::acquired,
       "n2"},
      {"a fence put", put(kv("baton/e/fence", "n2:x", 9, 1, 7)), k::none, ""},
      {"a fence gone: the hold-back is over", del("baton/e/fence", std::nullopt), k::released, ""},
      {"the record raised", put(kv("baton/e/record", "40", 9, 2)), k::record, ""},
      {"a release marked", put(kv("baton/e/released", "77", 9, 2)), k::release_marked, ""},
      {"a release mark that names no lease", put(kv("baton/e/released", "x", 9)), k::none, ""},
      {"a hand-over's reservation", put(kv("baton/e/reserved", "n3\nn2\n77", 9)), k::reserved, ""},
      {"a damaged reservation", put(kv("baton/e/reserved", "n3", 9)), k::none, ""},
      {"a reservation over (expired, or taken)", del("baton/e/reserved", std::nullopt),
       k::unreserved, ""},
  };
  for (const auto& r : rows) {
    const auto s = classify_event(r.e, keys, own);
    EXPECT_EQ(s.what, r.expected) << r.name;
    EXPECT_EQ(s.holder, r.holder) << r.name;
    if (r.expected == k::acquired) EXPECT_EQ(s.mod_revision, 9) << r.name;
    if (r.expected == k::release_marked || r.expected == k::reserved) {
      EXPECT_EQ(s.lease, 77) << r.name;
    }
    if (r.expected == k::unreserved) EXPECT_EQ(s.mod_revision, 9) << r.name;
  }
}

}  // namespace
}  // namespace baton::etcd_detail
