// The candidates' registrations as etcd holds them: their values, the
// revisions a store saw and when, the runs without a gap, and which
// registrations a reader lists or deletes; times are given, never read.
#include "etcd/candidate_registry.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton::etcd_detail {
namespace {

using namespace std::chrono_literals;

const time_point t0{};
constexpr milliseconds lifetime{4000};  // two ttls of 2 s
const std::string prefix = "baton/e/candidates/";

key_value reg(const std::string& node, const std::string& value, std::int64_t mod) {
  return {prefix + node, value, mod, mod, 1, 0};
}

TEST(etcd_candidate_registry, a_registration_value_round_trips_and_junk_is_refused) {
  const auto v = registration_value({-3, 1500ms, 42});
  EXPECT_EQ(v, "-3 1500 42");
  const auto r = parse_registration(v);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->priority, -3);
  EXPECT_EQ(r->live, 1500ms);
  EXPECT_EQ(r->lapsed_below, 42);
  EXPECT_EQ(r->cooling, 0ms) << "a value from before cool-downs has none";
  EXPECT_EQ(r->marks, 0);
  const auto cooling = registration_value({-3, 1500ms, 42, 20000ms, 57});
  EXPECT_EQ(cooling, "-3 1500 42 20000 57");
  const auto c = parse_registration(cooling);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->cooling, 20000ms);
  EXPECT_EQ(c->marks, 57);
  EXPECT_EQ(c->lapsed_below, 42);
  for (const char* bad : {"", "7", "7 1", "7 1 x", "7 -1 0", "7 1 -2", "x 1 2", "7  1 2", "1 2 3 ",
                          "1 2 3 4", "1 2 3 4 x", "1 2 3 0 5", "1 2 3 4 0", "1 2 3 4 5 6",
                          "1 2 3 -4 5"})
    EXPECT_FALSE(parse_registration(bad).has_value()) << bad;
}

TEST(etcd_candidate_registry, a_cooldown_marks_only_the_registration_that_stands) {
  registration_run run(lifetime);
  EXPECT_FALSE(cooling_mark(run, t0, 0, 0, 20s)) << "nothing put yet";
  run.put(t0 + 1s, 10);
  run.put(t0 + 3s, 20);
  const auto mark = cooling_mark(run, t0 + 3500ms, 4, 7, 20s);
  ASSERT_TRUE(mark);
  EXPECT_EQ(mark->over, 20) << "put only over the last registration";
  EXPECT_EQ(mark->value, "4 2000 7 20000 20") << "its live time as it was put";
  EXPECT_FALSE(cooling_mark(run, t0 + 3500ms, 4, 7, 0ms)) << "no cool-down";
  EXPECT_FALSE(cooling_mark(run, t0 + 7001ms, 4, 7, 20s)) << "lapsed by now";
  registration_run unknown(lifetime);
  unknown.put(t0);
  EXPECT_FALSE(cooling_mark(unknown, t0 + 1s, 0, 0, 20s)) << "its revision unknown";
  run.lost();
  EXPECT_FALSE(cooling_mark(run, t0 + 3500ms, 4, 7, 20s)) << "found gone or overwritten";
}

TEST(etcd_candidate_registry, the_clock_says_which_revisions_were_seen_by_when) {
  revision_clock c(lifetime);
  EXPECT_EQ(c.seen_by(t0 + 10s), 0) << "nothing seen yet";
  c.observe(10, t0 + 1s);
  c.observe(20, t0 + 2s);
  c.observe(30, t0 + 3s);
  EXPECT_EQ(c.seen_by(t0 + 500ms), 0);
  EXPECT_EQ(c.seen_by(t0 + 1s), 10);
  EXPECT_EQ(c.seen_by(t0 + 2500ms), 20);
  EXPECT_EQ(c.seen_by(t0 + 9s), 30);
  EXPECT_EQ(c.first_at_or_above(15), t0 + 2s);
  EXPECT_EQ(c.first_at_or_above(30), t0 + 3s);
  EXPECT_FALSE(c.first_at_or_above(31).has_value());
  c.observe(25, t0 + 4s);
  EXPECT_EQ(c.seen_by(t0 + 9s), 30) << "a lower revision is no news";
  c.clear();
  EXPECT_EQ(c.seen_by(t0 + 9s), 0);
}

TEST(etcd_candidate_registry, the_clock_keeps_a_bounded_history_that_still_reaches_its_span) {
  revision_clock c(lifetime);
  // An answer every 10 ms for a minute.
  for (int i = 0; i < 6000; ++i) c.observe(i + 1, t0 + i * 10ms);
  const auto now = t0 + 59990ms;
  EXPECT_LE(c.size(), 20u);
  // Merging only makes revisions look later: what it says was seen by
  // now - span was, and not much earlier than that.
  const auto by = c.seen_by(now - lifetime);
  EXPECT_GT(by, 0);
  EXPECT_LE(by, (59990 - 4000) / 10 + 1);
  EXPECT_GE(by, (59990 - 4000 - 4000 / 16 - 20) / 10 + 1);
}

TEST(etcd_candidate_registry, a_run_counts_from_its_first_registration_until_a_gap) {
  registration_run run(lifetime);
  EXPECT_EQ(run.live_at(t0 + 1s), 0ms) << "never registered";
  run.put(t0 + 1s);
  EXPECT_EQ(run.live_at(t0 + 3s), 2000ms);
  run.put(t0 + 3s);
  run.put(t0 + 6s);
  EXPECT_EQ(run.live_at(t0 + 9s), 8000ms);
  EXPECT_EQ(run.live_at(t0 + 10001ms), 0ms) << "lapsed: a new run";
  run.put(t0 + 10001ms);
  EXPECT_EQ(run.live_at(t0 + 11001ms), 1000ms);
}

TEST(etcd_candidate_registry, a_registration_is_put_again_only_when_due) {
  registration_run run(lifetime);  // two ttls of 2 s: a put every second at most
  EXPECT_EQ(run.refresh(), 1000ms);
  EXPECT_TRUE(run.due(t0)) << "a new store (a new process) always puts first";
  run.put(t0, 10);
  run.found(key_value{prefix + "a", "0 0 0", 10, 10, 1, 0}, 10);
  EXPECT_FALSE(run.due(t0 + 999ms));
  EXPECT_TRUE(run.due(t0 + 1000ms));
  run.put(t0 + 1000ms, 20);
  EXPECT_FALSE(run.due(t0 + 1500ms));
  // An answer that ran before the put says nothing of it.
  run.found(key_value{prefix + "a", "0 0 0", 10, 10, 1, 0}, 15);
  EXPECT_FALSE(run.due(t0 + 1500ms));
  // Gone (an operator's delete, a reader that judged it lapsed), or written
  // by another process of the same node id: put at the next call.
  run.found(std::nullopt, 21);
  EXPECT_TRUE(run.due(t0 + 1500ms));
  run.put(t0 + 1500ms, 30);
  EXPECT_FALSE(run.due(t0 + 1600ms));
  run.found(key_value{prefix + "a", "0 0 0", 10, 31, 2, 0}, 31);
  EXPECT_TRUE(run.due(t0 + 1600ms));
  run.put(t0 + 1600ms, 40);
  run.lost();  // the data went back
  EXPECT_TRUE(run.due(t0 + 1700ms));
  // Putting less often starts no new run: the last put is never two ttls old.
  EXPECT_EQ(run.live_at(t0 + 2600ms), 2600ms);
}

TEST(etcd_candidate_registry, a_new_run_starts_at_zero_whatever_an_earlier_one_registered) {
  // A restarted process is a new store: its first put says live 0, so a
  // reader's live_for starts again, however short the gap.
  registration_run first(lifetime);
  first.put(t0, 10);
  first.put(t0 + 3s, 20);
  EXPECT_EQ(first.live_at(t0 + 3500ms), 3500ms);
  registration_run restarted(lifetime);
  EXPECT_TRUE(restarted.due(t0 + 3600ms));
  EXPECT_EQ(restarted.live_at(t0 + 3600ms), 0ms);
  restarted.put(t0 + 3600ms, 30);
  EXPECT_EQ(restarted.live_at(t0 + 4600ms), 1000ms);
}

TEST(etcd_candidate_registry, outranking_counts_higher_priorities_but_self_and_holder) {
  const std::vector<candidate_info> live = {
      {"a", 9, 0ms}, {"b", 5, 0ms}, {"c", 1, 0ms}, {"d", 1, 0ms}, {"e", 7, 0ms}};
  EXPECT_EQ(count_outranking(live, "d", "a", 1), 2) << "b and e; c is equal, a holds";
  EXPECT_EQ(count_outranking(live, "b", "a", 5), 1) << "e";
  EXPECT_EQ(count_outranking(live, "e", "", 7), 1) << "a, holding nothing";
  EXPECT_EQ(count_outranking(live, "a", "b", 9), 0);
  EXPECT_EQ(count_outranking({}, "a", "b", 0), 0);
}

TEST(etcd_candidate_registry, a_reader_lists_registrations_above_every_lapse_it_knows_of) {
  revision_clock c(lifetime);
  c.observe(10, t0 + 1s);
  c.observe(50, t0 + 5s);
  c.observe(60, t0 + 6s);
  c.observe(90, t0 + 9s);
  const auto now = t0 + 9s;  // its own judgment: at or below 50 (seen by 5 s) lapsed
  const std::vector<key_value> kvs = {
      reg("old", "1 0 0", 40),                       // lapsed by this reader's clock
      reg("edge", "2 0 0", 50),                      // at the revision seen by now - 4 s: lapsed
      reg("young", "3 700 0", 55),                   // put after 50 was seen: live
      reg("newest", "4 100 0", 85),                  // live
      reg("junk", "nonsense", 20),                   // neither listed nor deleted
      {"baton/e/candidates/", "1 0 0", 5, 5, 1, 0},  // no node: ignored
  };
  const auto j = judge_candidates(kvs, prefix, c, now, lifetime);
  std::vector<std::string> live;
  for (const auto& x : j.live) live.push_back(x.node);
  EXPECT_EQ(live, (std::vector<std::string>{"young", "newest"}));
  ASSERT_EQ(j.lapsed.size(), 2u);
  EXPECT_EQ(j.lapsed[0].key, prefix + "old");
  EXPECT_EQ(j.lapsed[1].key, prefix + "edge");
  EXPECT_EQ(j.live[0].priority, 3);
  // live_ms at the put, plus the least time known to have passed since:
  // revision 55 was first seen at or above by 6 s.
  EXPECT_EQ(j.live[0].live_for, 700ms + 3000ms);
  EXPECT_EQ(j.live[1].live_for, 100ms) << "85: first seen at or above now";
}

TEST(etcd_candidate_registry, a_reader_without_history_believes_the_freshest_registrant) {
  revision_clock fresh(lifetime);
  fresh.observe(100, t0 + 1s);
  const std::vector<key_value> kvs = {
      reg("dead", "0 0 0", 30), reg("leader", "0 9000 45", 99),  // it says: at or below 45 lapsed
      reg("standby", "0 2000 20", 60),
      reg("liar", "0 0 500", 70),  // a claim at or above its own revision is ignored
  };
  const auto j = judge_candidates(kvs, prefix, fresh, t0 + 1s, lifetime);
  ASSERT_EQ(j.lapsed.size(), 1u);
  EXPECT_EQ(j.lapsed[0].key, prefix + "dead");
  EXPECT_EQ(j.live.size(), 3u);
}

// A cool-down's mark is judged as the registration it marks: it lapses with
// it and tells that one's last attempt; its cool-down counts from the mark's
// own put. A value without one (a version before them) cools nothing.
TEST(etcd_candidate_registry, a_reader_judges_a_cooldown_mark_as_the_registration_it_marks) {
  revision_clock c(lifetime);
  c.observe(40, t0 + 1s);
  c.observe(50, t0 + 5s);
  c.observe(60, t0 + 6s);
  c.observe(70, t0 + 8s);
  const auto now = t0 + 9s;  // at or below 50 lapsed (seen by 5 s)
  const std::vector<key_value> kvs = {
      reg("plain", "0 100 0", 65),                  // last put seen at 8 s
      reg("cooling", "0 500 0 20000 55", 65),       // marks 55 (seen at 6 s); mark seen at 8 s
      reg("marked_lapsed", "0 0 0 20000 45", 65),   // marks 45: lapsed with it
      reg("claims_later", "0 0 0 20000 99", 65),    // a mark's revision must be below its own
  };
  const auto j = judge_candidates(kvs, prefix, c, now, lifetime);
  ASSERT_EQ(j.lapsed.size(), 1u);
  EXPECT_EQ(j.lapsed[0].key, prefix + "marked_lapsed");
  EXPECT_EQ(j.lapsed[0].mod_revision, 65) << "deleted only if the mark is unchanged";
  ASSERT_EQ(j.live.size(), 3u);
  EXPECT_EQ(j.live[0].node, "plain");
  EXPECT_EQ(j.live[0].last_attempt_ago, 1000ms);
  EXPECT_EQ(j.live[0].cooling_down_for, 0ms);
  EXPECT_EQ(j.live[1].node, "cooling");
  EXPECT_EQ(j.live[1].last_attempt_ago, 3000ms) << "from the registration it marks";
  EXPECT_EQ(j.live[1].live_for, 3500ms);
  EXPECT_EQ(j.live[1].cooling_down_for, 19000ms) << "from the mark's own put";
  EXPECT_EQ(j.live[2].node, "claims_later");
  EXPECT_EQ(j.live[2].last_attempt_ago, 1000ms);
  EXPECT_EQ(j.live[2].cooling_down_for, 0ms);

  // A cool-down that has run out is none.
  const auto later = judge_candidates({reg("cooling", "0 500 0 500 55", 65)}, prefix, c, now,
                                      lifetime);
  ASSERT_EQ(later.live.size(), 1u);
  EXPECT_EQ(later.live[0].cooling_down_for, 0ms);
}

}  // namespace
}  // namespace baton::etcd_detail
