// Drained and never-leading candidates as the leader judges them: never a
// switchover's, a drain's or a preemption's target, whatever --force says;
// a card this version cannot read is none either. Also what the status
// shows of each candidate's card, where the leader's service is, and the
// drain file's life.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "daemon/drain_control.hpp"
#include "daemon/switchover.hpp"
#include "daemon/switchover_vetting.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

constexpr time_point standing_now{100s};

candidate_info carded(std::string node, int priority, std::string card) {
  candidate_info c{std::move(node), priority, 60s, 1s, 0ms};
  c.card = std::move(card);
  return c;
}

candidate_snapshot listed(std::vector<candidate_info> list) {
  candidate_snapshot s;
  s.update(std::move(list), standing_now - 1s);
  return s;
}

switchover_verdict vet_to(const std::string& to, const candidate_snapshot& known, bool force) {
  switchover_question q;
  q.to = to;
  q.self = "node-a";
  q.now = standing_now;
  q.list_max_age = 7s;
  q.attempt_gap = 15s;
  q.preempt_delay = 30s;
  q.force = force;
  return vet_switchover(q, known);
}

TEST(candidate_standing, drained_never_and_unreadable_targets_are_refused_even_forced) {
  const auto known = listed({carded("node-a", 0, "standing=eligible"),
                             carded("node-b", 0, "standing=drained;advertise=b:1"),
                             carded("node-c", 0, "standing=never"),
                             carded("node-d", 0, "standing=asleep"), carded("node-e", 0, "")});
  for (const bool force : {false, true}) {
    const auto b = vet_to("node-b", known, force);
    EXPECT_EQ(b.decision, switchover_decision::refuse);
    EXPECT_EQ(b.why, "'node-b' is drained: it takes no lease until `baton undrain` on it");
    const auto c = vet_to("node-c", known, force);
    EXPECT_EQ(c.decision, switchover_decision::refuse);
    EXPECT_EQ(c.why, "'node-c' is configured never to lead (never_lead): it takes no lease");
    const auto d = vet_to("node-d", known, force);
    EXPECT_EQ(d.decision, switchover_decision::refuse);
    EXPECT_NE(d.why.find("'node-d''s registration cannot be read (card standing 'asleep'"),
              std::string::npos)
        << d.why;
  }
  EXPECT_EQ(vet_to("node-e", known, false).decision, switchover_decision::accept)
      << "a registration of a version before cards is an eligible candidate";
}

TEST(candidate_standing, a_drained_candidate_of_a_higher_priority_outranks_nobody) {
  const auto known =
      listed({carded("node-a", 0, ""), carded("node-b", 1, ""),
              carded("node-c", 9, "standing=drained"), carded("node-d", 9, "standing=never")});
  const auto v = vet_to("node-b", known, false);
  EXPECT_EQ(v.decision, switchover_decision::accept) << v.why;
}

TEST(candidate_standing, preemption_never_targets_a_candidate_that_may_not_lead) {
  const auto known =
      listed({carded("node-a", 0, ""), carded("node-c", 9, "standing=never"),
              carded("node-d", 8, "standing=drained"), carded("node-e", 7, "standing=???")});
  EXPECT_FALSE(preemption_target(known, "node-a", 0, 30s, 1h, 30s, standing_now));
  auto more = known.list;
  more.push_back(carded("node-f", 1, "standing=eligible"));
  const auto target = preemption_target(listed(more), "node-a", 0, 30s, 1h, 30s, standing_now);
  ASSERT_TRUE(target);
  EXPECT_EQ(target->node, "node-f");
}

TEST(candidate_standing, the_status_lists_each_candidates_standing_and_address) {
  const auto known = listed({carded("node-a", 0, "standing=eligible;advertise=a:1"),
                             carded("node-b", 0, "standing=drained"), carded("node-c", 0, ""),
                             carded("node-d", 0, "standing=bad")});
  const auto report = candidates_report(known, "node-a");
  ASSERT_EQ(report.size(), 4u);
  EXPECT_EQ(report[0]["standing"], "eligible");
  EXPECT_EQ(report[0]["advertise"], "a:1");
  EXPECT_EQ(report[1]["standing"], "drained");
  EXPECT_TRUE(report[1]["advertise"].is_null());
  EXPECT_EQ(report[2]["standing"], "eligible") << "a card of an older version";
  EXPECT_TRUE(report[3]["standing"].is_null());
  EXPECT_EQ(report[3]["card_error"], "card standing 'bad' is none of eligible, drained, never");
  EXPECT_FALSE(report[0].contains("card_error"));
}

TEST(candidate_standing, the_leaders_address_is_its_own_or_what_its_registration_says) {
  const auto known = listed({carded("node-b", 0, "standing=eligible;advertise=http://b:8080/")});
  EXPECT_EQ(leader_advertise("node-b", "node-a", "a:1", known), "http://b:8080/");
  EXPECT_EQ(leader_advertise("node-a", "node-a", "a:1", known), "a:1");
  EXPECT_EQ(leader_advertise("node-c", "node-a", "a:1", known), "") << "not listed yet";
  EXPECT_EQ(leader_advertise("", "node-a", "a:1", known), "") << "no leader known";
}

TEST(drain_file, lives_beside_the_socket_unless_named) {
  config cfg;
  EXPECT_EQ(drain_file_of(cfg), "") << "no socket, no drain";
  cfg.socket.path = "/run/baton/jobs.sock";
  EXPECT_EQ(drain_file_of(cfg), "/run/baton/jobs.sock.drained");
  cfg.drain_file = "/var/lib/baton/drained";
  EXPECT_EQ(drain_file_of(cfg), "/var/lib/baton/drained");
}

TEST(drain_file, written_read_and_removed_with_errors_that_name_the_file) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("baton-drain-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto path = (dir / "node.drained").string();
  EXPECT_FALSE(drain_file_exists(path));
  write_drain_file(path);
  EXPECT_TRUE(drain_file_exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".new")) << "the temporary file is renamed";
  write_drain_file(path);  // again: still drained
  EXPECT_TRUE(drain_file_exists(path));
  remove_drain_file(path);
  EXPECT_FALSE(drain_file_exists(path));
  remove_drain_file(path);  // gone already: no error
  const auto missing = (dir / "no-such-dir" / "node.drained").string();
  try {
    write_drain_file(missing);
    ADD_FAILURE() << "wrote into a directory that does not exist";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write the drain file " + missing + ": No such file or directory");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace baton
