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

TEST(zookeeper_four_letter_answers, conf_line_gives_the_figures_or_why_not) {
  auto line = conf_line("conf is not executed because it is not in the whitelist.\n");
  EXPECT_EQ(line.verdict, check_verdict::note);
  EXPECT_NE(line.text.find("add conf to the whitelist"), std::string::npos);
  line =
      conf_line("clientPort=6390\ntickTime=200\nminSessionTimeout=400\nmaxSessionTimeout=4000\n");
  EXPECT_EQ(line.text, "tickTime 200 ms, sessions granted within [400, 4000 ms]");
  line = conf_line(member_conf);
  EXPECT_EQ(
      line.text,
      "tickTime 2000 ms, initLimit 10, syncLimit 5, sessions granted within [4000, 40000 ms]");
}

// One window for the ensemble, however many servers answered: a setting is
// one hazard, not one per server. The widest window counts.
TEST(zookeeper_four_letter_answers, the_stale_follower_window_is_weighed_once_per_ensemble) {
  const lease_timing t{10000ms, 0ms, 0ms};
  const auto member = parse_conf(member_conf);
  auto narrow = member;
  narrow.sync_limit = 1;
  // Two servers listed: the session cannot leave the follower.
  auto line = stale_follower_line({narrow, member}, t, 2);
  EXPECT_EQ(line.verdict, check_verdict::hazard) << line.text;
  EXPECT_EQ(line.topic, "stale reads");
  EXPECT_NE(line.text.find("= 10000 ms"), std::string::npos) << line.text;
  // Three: the leader's session leaves a follower that answers no write.
  line = stale_follower_line({member, member, std::nullopt}, t, 3);
  EXPECT_NE(line.verdict, check_verdict::hazard) << line.text;
  EXPECT_NE(line.text.find("leaves it as it leaves a stalled server"), std::string::npos)
      << line.text;
  line = stale_follower_line({parse_conf("tickTime=200\n")}, t, 1);
  EXPECT_NE(line.text.find("standalone"), std::string::npos) << line.text;
  line = stale_follower_line({std::nullopt, std::nullopt, std::nullopt}, t, 3);
  EXPECT_EQ(line.verdict, check_verdict::note);
  EXPECT_NE(line.text.find("not weighed"), std::string::npos) << line.text;
}

// How long one server may stall: with three servers or more, any length if
// the move (command_timeout) and the renewal's retry (renew_interval / 4)
// fit the renewals' room; with fewer, the room itself.
TEST(zookeeper_four_letter_answers, says_how_long_one_server_may_stall) {
  auto line = stall_line({10000ms, 0ms, 0ms}, 1000ms, 3);
  EXPECT_EQ(line.verdict, check_verdict::ok) << line.text;
  EXPECT_NE(line.text.find("for any length"), std::string::npos) << line.text;
  EXPECT_NE(line.text.find("1833 ms of the 3333 ms"), std::string::npos) << line.text;
  line = stall_line({3000ms, 0ms, 0ms}, 1000ms, 5);
  EXPECT_EQ(line.verdict, check_verdict::hazard) << line.text;
  EXPECT_NE(line.text.find("lower zookeeper.command_timeout below 750 ms"), std::string::npos)
      << line.text;
  line = stall_line({10000ms, 0ms, 0ms}, 1000ms, 1);
  EXPECT_EQ(line.verdict, check_verdict::note) << line.text;
  EXPECT_NE(line.text.find("for less than 3333 ms"), std::string::npos) << line.text;
}

// The rule every kind follows: no authentication is a note; a password sent
// in plaintext is a hazard (digest always is: the C client has no TLS).
TEST(zookeeper_four_letter_answers, auth_is_a_note_without_a_password_and_a_hazard_with_one) {
  auto line = auth_line("");
  EXPECT_EQ(line.verdict, check_verdict::note);
  EXPECT_NE(line.text.find("any client"), std::string::npos) << line.text;
  line = auth_line("baton");
  EXPECT_EQ(line.verdict, check_verdict::hazard);
  EXPECT_NE(line.text.find("plaintext"), std::string::npos) << line.text;
}

TEST(zookeeper_four_letter_answers, tells_a_server_that_does_not_serve_yet) {
  EXPECT_TRUE(not_serving("This ZooKeeper instance is not currently serving requests\n"));
  EXPECT_FALSE(not_serving("Zookeeper version: 3.8.0\nMode: leader\n"));
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
