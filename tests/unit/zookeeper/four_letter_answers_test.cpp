// What check-store reads from `srvr` and `conf`, and the stale-follower
// window weighed against the lease timing (src/zookeeper/four_letter_answers.hpp).
#include "zookeeper/four_letter_answers.hpp"

#include <gtest/gtest.h>

#include <string>

namespace baton::zookeeper_detail {
namespace {

using namespace std::chrono_literals;

// As ZooKeeper 3.8 answers for a member of an ensemble.
constexpr const char* member_conf =
    "clientPort=2181\nsecureClientPort=-1\ndataDir=/var/lib/zookeeper/version-2\n"
    "tickTime=2000\nmaxClientCnxns=60\nminSessionTimeout=4000\nmaxSessionTimeout=40000\n"
    "clientPortListenBacklog=-1\nserverId=1\ninitLimit=10\nsyncLimit=5\nelectionAlg=3\n"
    "electionPort=3888\nquorumPort=2888\npeerType=0\n";

TEST(zookeeper_four_letter_answers, reads_conf) {
  const auto c = parse_conf(member_conf);
  EXPECT_EQ(c.tick_ms, 2000);
  EXPECT_EQ(c.init_limit, 10);
  EXPECT_EQ(c.sync_limit, 5);
  EXPECT_EQ(c.min_session_ms, 4000);
  EXPECT_EQ(c.max_session_ms, 40000);
  // Standalone: no followers' limits.
  const auto alone = parse_conf("clientPort=6390\ntickTime=200\nminSessionTimeout=400\n");
  EXPECT_EQ(alone.tick_ms, 200);
  EXPECT_FALSE(alone.sync_limit);
  EXPECT_FALSE(parse_conf("tickTime=2x\n").tick_ms);
}

// The window against the room a leader's renewals have (renew_deadline -
// renew_interval, a third of the ttl by default): within it ok, beyond it a
// hazard naming the syncLimit that fits and the ttl that would.
TEST(zookeeper_four_letter_answers, weighs_the_stale_follower_window_against_the_renewals) {
  const struct {
    std::int64_t tick_ms;
    std::int64_t sync_limit;
    lease_timing timing;
    check_verdict verdict;
    const char* says;
  } rows[] = {
      // Debian's zoo.cfg (2000 ms x 5) under the default ttl of 10 s: 10 s
      // against 3.33 s of room.
      {2000,
       5,
       {10000ms, 0ms, 0ms},
       check_verdict::hazard,
       "(set syncLimit <= 1 at tickTime 2000 ms, or lease.ttl >= 30000 ms"},
      {2000, 5, {10000ms, 0ms, 0ms}, check_verdict::hazard, "up to a whole ttl late"},
      {2000, 1, {10000ms, 0ms, 0ms}, check_verdict::ok, "within the 3333 ms"},
      {200, 5, {3000ms, 0ms, 0ms}, check_verdict::ok, "= 1000 ms"},
      {200, 5, {2000ms, 0ms, 0ms}, check_verdict::hazard, "syncLimit <= 3 at tickTime 200 ms"},
      // Renewal timing set by hand counts as set.
      {200, 5, {2000ms, 200ms, 1500ms}, check_verdict::ok, "within the 1300 ms"},
      // No syncLimit fits at this tick: only the ttl is named.
      {5000, 2, {10000ms, 0ms, 0ms}, check_verdict::hazard, "(set lease.ttl >= 30000 ms"},
  };
  for (const auto& r : rows) {
    const auto line = weigh_stale_follower_window(r.tick_ms, r.sync_limit, r.timing);
    EXPECT_EQ(line.verdict, r.verdict) << line.text;
    EXPECT_EQ(line.topic, "stale reads");
    EXPECT_NE(line.text.find(r.says), std::string::npos) << line.text;
  }
}

TEST(zookeeper_four_letter_answers, conf_lines_say_what_could_not_be_weighed) {
  const lease_timing t{3000ms, 0ms, 0ms};
  auto lines = conf_lines("conf is not executed because it is not in the whitelist.\n", t);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].verdict, check_verdict::note);
  EXPECT_NE(lines[0].text.find("add conf to the whitelist"), std::string::npos);

  lines = conf_lines(
      "clientPort=6390\ntickTime=200\nminSessionTimeout=400\nmaxSessionTimeout=4000\n", t);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text, "tickTime 200 ms, sessions granted within [400, 4000 ms]");
  EXPECT_EQ(lines[1].verdict, check_verdict::note);
  EXPECT_NE(lines[1].text.find("standalone"), std::string::npos);

  lines = conf_lines(member_conf, t);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(
      lines[0].text,
      "tickTime 2000 ms, initLimit 10, syncLimit 5, sessions granted within [4000, 40000 ms]");
  EXPECT_EQ(lines[1].verdict, check_verdict::hazard);
}

TEST(zookeeper_four_letter_answers, srvr_gives_version_and_mode_or_a_hazard) {
  auto lines =
      srvr_lines("Zookeeper version: 3.8.0-abc, built on 2024-12-29 17:54 UTC\nMode: follower\n",
                 "10.0.0.1:2181", 1ms);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1].text, "ZooKeeper 3.8.0-abc");
  EXPECT_EQ(lines[2].text, "follower");
  lines = srvr_lines("srvr is not executed because it is not in the whitelist.\n", "h:1", 1ms);
  EXPECT_EQ(lines[0].verdict, check_verdict::hazard);
}

}  // namespace
}  // namespace baton::zookeeper_detail
