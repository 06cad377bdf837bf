// `baton once` on every store kind's world (support/worlds/): two hosts'
// timers firing together run the job once, the other tick exits 75 naming
// the holder and its token, and the job's status is the exit code. The
// timing faults (a crash, SIGTERM, --wait) are once_faults_test.cpp's, on
// Redis; what this adds is that the verb means the same on every kind, its
// store found through the option text a user writes (a file for one host,
// BATON_* variables for the other).
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fault_cluster.hpp"
#include "scenario.hpp"
#include "support/worlds/store_world.hpp"
#include "world_candidates.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

class once_scenarios : public ::testing::TestWithParam<std::string> {};

// `baton once` as candidate `index` of `c` on `world`, running a test_worker
// that exits 3 after a while.
std::unique_ptr<baton_process> once_tick(const store_world& world, const fault_cluster& c,
                                         int index) {
  const node_options o = world_candidate(world, c, index);
  std::vector<std::string> args{"once",
                                "--election",
                                c.election(),
                                "--node-id",
                                fault_cluster::name_of(index),
                                "--ttl",
                                std::to_string(c.ttl().count()) + "ms",
                                "--log-level",
                                "debug"};
  args.insert(args.end(), o.store_args.begin(), o.store_args.end());
  args.insert(args.end(),
              {"--", test_worker_binary().string(), "--log", c.events().string(), "--name",
               fault_cluster::name_of(index), "--exit-after-ms", "1000", "--exit-code", "3"});
  return std::make_unique<baton_process>(args, o.env,
                                         c.dir() / ("once-" + std::to_string(index) + ".log"));
}

TEST_P(once_scenarios, two_timers_firing_together_run_the_job_once) {
  auto world = make_store_world(GetParam());
  fault_cluster c("once-together-" + GetParam(), 2000ms, false);
  init_world_election(*world, c);
  std::vector<std::unique_ptr<baton_process>> ticks;
  ticks.push_back(once_tick(*world, c, 1));
  ticks.push_back(once_tick(*world, c, 2));
  std::vector<int> codes;
  std::string logs;
  for (auto& t : ticks) {
    const auto code = t->wait_exit(30s);
    logs += "--- " + t->log_path().string() + "\n" + t->log_text();
    codes.push_back(code.value_or(-1));
  }
  const auto log = c.log();
  ASSERT_EQ(log.start_count(), 1u) << logs << world->diagnostics();
  const auto& ran = log.intervals().front();
  const int winner = fault_cluster::index_of(ran) - 1;
  ASSERT_TRUE(winner == 0 || winner == 1) << ran.name;
  EXPECT_EQ(codes[winner], 3) << logs;
  EXPECT_EQ(codes[1 - winner], 75) << logs;
  EXPECT_TRUE(ran.ended);
  const std::string held = ticks[1 - winner]->log_text();
  const bool named = held.find("once: not running the command: the lease is held by " + ran.name) !=
                     std::string::npos;
  // PostgreSQL's acquire skips a row another acquire has locked (SKIP
  // LOCKED): a tick that met the winner's grant in flight hears "held"
  // without a name.
  const bool unnamed =
      GetParam() == "postgres" &&
      held.find("once: not running the command: another node holds the lease") != std::string::npos;
  EXPECT_TRUE(named || unnamed) << logs;
  const auto at = held.find("(token ");
  if (!ran.token.empty() && at != std::string::npos) {
    const auto said = std::strtoull(held.c_str() + at + 7, nullptr, 10);
    const auto won = std::strtoull(ran.token.c_str(), nullptr, 10);
    EXPECT_EQ(said, won) << logs;
  }
}

INSTANTIATE_TEST_SUITE_P(kinds, once_scenarios, ::testing::ValuesIn(store_world_kinds()),
                         [](const ::testing::TestParamInfo<std::string>& kind) {
                           return kind.param;
                         });

}  // namespace
}  // namespace baton::testing
