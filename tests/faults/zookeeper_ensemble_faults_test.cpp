// Faults against the ZooKeeper store on a 3-server ensemble on loopback:
// its leader killed, its quorum lost longer than the ttl, under candidates
// that act as the election machine does (zookeeper_fault_candidates.hpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "support/servers/zookeeper_server.hpp"
#include "zookeeper_fault_candidates.hpp"

namespace baton::zookeeper_faults_test {
namespace {

class zookeeper_ensemble_faults : public candidates_on_one_loop {
 protected:
  void SetUp() override { members = testing::start_zookeeper_ensemble(3); }
  void TearDown() override {
    if (HasFailure()) {
      for (auto& m : members)
        std::fprintf(stderr, "member %d:\n%s\n", m->options().server_id, m->log_tail().c_str());
    }
    all.clear();
  }
  std::string servers() const override {
    std::string out;
    for (const auto& m : members) out += (out.empty() ? "" : ",") + m->address();
    return out;
  }
  testing::zookeeper_server* ensemble_leader() {
    for (auto& m : members)
      if (m->mode() == "leader") return m.get();
    return nullptr;
  }

  std::vector<std::unique_ptr<testing::zookeeper_server>> members;
};

TEST_F(zookeeper_ensemble_faults, the_ensembles_leader_killed) {
  add("node-a");
  add("node-b");
  ASSERT_TRUE(run_until([&] { return anyone_leads(); }, 10s));
  for (int round = 0; round < 2; ++round) {
    run_for(1s);
    auto* zk_leader = ensemble_leader();
    ASSERT_NE(zk_leader, nullptr);
    auto* before = leader();
    const auto killed_at = mono_clock::now();
    zk_leader->stop(true);
    // A new ensemble leader: the two others form a quorum.
    ASSERT_TRUE(run_until([&] { return ensemble_leader() != nullptr; }, 20s));
    report("ensemble leader killed: a new one after",
           std::chrono::duration_cast<milliseconds>(mono_clock::now() - killed_at));
    run_for(ttl);
    ASSERT_TRUE(run_until([&] { return anyone_leads(); }, 20s));
    std::printf("[ figure ] ensemble leader killed: baton's leader %s\n",
                leader() == before ? "kept leading" : "changed");
    zk_leader->start(false);
    ASSERT_TRUE(zk_leader->wait_ready());
  }
  expect_no_overlap();
}

TEST_F(zookeeper_ensemble_faults, quorum_lost_longer_than_the_ttl) {
  add("node-a");
  add("node-b");
  ASSERT_TRUE(run_until([&] { return anyone_leads(); }, 10s));
  run_for(1s);
  const auto lost_at = mono_clock::now();
  members[0]->stop(true);
  members[1]->stop(true);
  ASSERT_TRUE(run_until([&] { return !anyone_leads(); }, 10s)) << "led on without a quorum";
  report("quorum lost: the leader stopped after",
         std::chrono::duration_cast<milliseconds>(mono_clock::now() - lost_at));
  run_for(ttl * 2);
  EXPECT_FALSE(anyone_leads());
  const auto back_at = mono_clock::now();
  members[0]->start(false);
  members[1]->start(false);
  ASSERT_TRUE(run_until([&] { return anyone_leads(); }, 40s))
      << "nobody led after the quorum came back";
  report("quorum back: a leader after",
         std::chrono::duration_cast<milliseconds>(mono_clock::now() - back_at));
  expect_no_overlap();
}

}  // namespace
}  // namespace baton::zookeeper_faults_test
