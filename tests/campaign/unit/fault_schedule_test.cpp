// The campaign's schedule is a pure function of its parameters: the same
// seed gives the same faults (replay is exact), other seeds and kinds give
// others, every class drawn is one the kind can meet, and the text form
// reads back to the same list.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "campaign/fault_schedule.hpp"

namespace baton::campaign {
namespace {

schedule_params params_of(const std::string& kind, std::uint64_t seed) {
  schedule_params p;
  p.kind = kind;
  p.seed = seed;
  p.duration_ms = 120'000;
  p.ttl_ms = 1'500;
  return p;
}

TEST(fault_schedule, the_same_seed_gives_the_same_schedule) {
  for (const auto& kind : campaign_kinds()) {
    const auto first = make_schedule(params_of(kind, 42));
    EXPECT_EQ(first, make_schedule(params_of(kind, 42))) << kind;
    EXPECT_NE(first, make_schedule(params_of(kind, 43))) << kind;
    EXPECT_FALSE(first.empty()) << kind;
  }
  EXPECT_NE(make_schedule(params_of("redis", 1)), make_schedule(params_of("etcd", 1)));
}

TEST(fault_schedule, a_known_seed_keeps_its_schedule_across_builds) {
  // Pinned: a change of the generator changes every recorded seed's replay,
  // so it has to be made on purpose (and this line updated).
  const auto s = make_schedule(params_of("redis", 42));
  ASSERT_GE(s.size(), 3u);
  EXPECT_EQ(to_line(s[0]) + " | " + to_line(s[1]) + " | " + to_line(s[2]),
            "1657 store-restart-empty store 1868 2239366014 | 3875 leave leader 4368 565103972 | "
            "6885 daemon-freeze standby 790 3363527231");
}

TEST(fault_schedule, faults_are_in_time_order_within_the_duration_and_of_the_kinds_classes) {
  for (const auto& kind : campaign_kinds()) {
    const auto allowed = classes_of(kind);
    std::set<fault_class> seen;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const auto s = make_schedule(params_of(kind, seed));
      for (std::size_t i = 0; i < s.size(); ++i) {
        EXPECT_LT(s[i].at_ms, 120'000);
        if (i > 0) {
          EXPECT_GT(s[i].at_ms, s[i - 1].at_ms);
        }
        EXPECT_NE(std::find(allowed.begin(), allowed.end(), s[i].what), allowed.end())
            << kind << ": " << to_line(s[i]);
        EXPECT_LE(s[i].hold_ms, 4 * 1'500);
        seen.insert(s[i].what);
      }
    }
    // Twenty two-minute schedules draw every class the kind has.
    EXPECT_EQ(seen.size(), allowed.size()) << kind;
  }
}

bool has_in_ensemble(const std::string& kind, fault_class c) {
  const auto all = classes_of(kind, 3);
  return std::find(all.begin(), all.end(), c) != all.end();
}

TEST(fault_schedule, each_kind_meets_only_the_store_faults_it_has) {
  const auto has = [](const std::string& kind, fault_class c) {
    const auto all = classes_of(kind);
    return std::find(all.begin(), all.end(), c) != all.end();
  };
  EXPECT_TRUE(has("redis", fault_class::store_restart_empty));
  EXPECT_FALSE(has("redis", fault_class::member_kill));
  EXPECT_TRUE(has("sentinel", fault_class::member_freeze));
  EXPECT_TRUE(has("redlock", fault_class::member_kill));
  EXPECT_FALSE(has("redlock", fault_class::store_kill));
  EXPECT_TRUE(has("postgres", fault_class::store_restore_old));
  EXPECT_TRUE(has("etcd", fault_class::store_restore_old));
  EXPECT_TRUE(has("zookeeper", fault_class::store_restart_empty));
  for (const auto& kind : campaign_kinds()) {
    EXPECT_TRUE(has(kind, fault_class::host_freeze)) << kind;
    EXPECT_TRUE(has(kind, fault_class::switchover)) << kind;
  }
  EXPECT_TRUE(classes_of("memory").empty());
  // Ensembles: their leader and followers, for zookeeper and etcd only.
  EXPECT_TRUE(has_in_ensemble("etcd", fault_class::member_freeze));
  EXPECT_FALSE(has_in_ensemble("etcd", fault_class::store_restore_old));
  EXPECT_TRUE(has_in_ensemble("zookeeper", fault_class::member_kill));
  EXPECT_TRUE(classes_of("redis", 3).empty());
  EXPECT_TRUE(classes_of("etcd", 2).empty());
}

TEST(fault_schedule, bad_parameters_are_refused_with_their_cause) {
  auto p = params_of("mongodb", 1);
  EXPECT_THROW(make_schedule(p), std::invalid_argument);
  p = params_of("redis", 1);
  p.candidates = 1;
  EXPECT_THROW(make_schedule(p), std::invalid_argument);
  p = params_of("redis", 1);
  p.ttl_ms = 0;
  EXPECT_THROW(make_schedule(p), std::invalid_argument);
  p = params_of("redis", 1);
  p.members = 3;
  try {
    make_schedule(p);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "a redis store cannot have 3 members (1; 3 or 5 for zookeeper and etcd)");
  }
}

TEST(fault_schedule, the_text_form_reads_back_to_the_same_schedule_and_parameters) {
  const auto p = params_of("sentinel", 7);
  const auto s = make_schedule(p);
  schedule_params back;
  EXPECT_EQ(parse_schedule(to_text(p, s), &back), s);
  EXPECT_EQ(back.kind, "sentinel");
  EXPECT_EQ(back.seed, 7u);
  EXPECT_EQ(back.duration_ms, 120'000);
  EXPECT_EQ(back.ttl_ms, 1'500);
  EXPECT_EQ(back.candidates, 3);
  EXPECT_EQ(back.members, 1);
}

TEST(fault_schedule, an_ensembles_replay_file_keeps_its_members) {
  auto p = params_of("zookeeper", 9);
  p.members = 3;
  const auto s = make_schedule(p);
  schedule_params back;
  EXPECT_EQ(parse_schedule(to_text(p, s), &back), s);
  EXPECT_EQ(back.members, 3) << "a replay of an ensemble's schedule runs an ensemble";
}

TEST(fault_schedule, a_bad_schedule_line_is_named) {
  try {
    parse_schedule("# kind=redis\n100 daemon-kill leader 500 3\n200 unplug leader 0 1\n");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "schedule line 3: unknown fault class 'unplug'");
  }
  EXPECT_THROW(parse_schedule("100 daemon-kill leader 500\n"), std::invalid_argument);
  EXPECT_THROW(parse_schedule("-5 sighup leader 0 1\n"), std::invalid_argument);
  EXPECT_THROW(parse_schedule("5 sighup boss 0 1\n"), std::invalid_argument);
}

}  // namespace
}  // namespace baton::campaign
