// The kind-neutral daemon scenarios, written once and run on every store
// kind (value-parameterized by store.kind, instantiated in
// daemon_scenarios.cpp): real baton daemons, each supervising a worker that
// logs its work, on a store world (support/worlds/) that they find through
// the option text a user writes. What each scenario asserts is the
// daemon-level promise, the same on every kind: never two apps at once (the
// event log's overlap check), a takeover when the leader is gone, tokens
// that rise. A kind's own faults (its servers killed, frozen, failed over,
// restored) stay in its own fault tests.
//
// One world per kind and test process, made by its first scenario and kept
// for the next (each scenario is a fresh election on it). ctest runs every
// scenario in a process of its own, in the fault lanes
// (tests/faults/CMakeLists.txt); a run of one kind's scenarios by hand
// (fault_tests --gtest_filter='kinds/daemon_scenarios.*/etcd') starts its
// servers once.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "scenario.hpp"
#include "support/worlds/store_world.hpp"
#include "world_candidates.hpp"

namespace baton::testing::daemon_scenarios_test {

/// Every scenario's ttl but the priority one's: short, so a lease expires
/// quickly, and long enough for a loaded 2-core machine's late timers.
inline constexpr std::chrono::milliseconds scenario_ttl{2000};
/// Renewals go out every ttl/3: the last one the store heard before a fault
/// came at most this long before it (plus its latency).
inline constexpr auto scenario_renew_interval = scenario_ttl / 3;

class daemon_scenarios : public ::testing::TestWithParam<std::string> {
 protected:
  /// The most candidates a scenario starts (node indexes 1 to this).
  static constexpr int max_candidates = 9;

  /// The kind's world (GetParam()), made on first use in this process.
  store_world& world() {
    static std::unique_ptr<store_world> current;
    if (!current || current->kind() != GetParam()) {
      current.reset();  // one world's servers at a time
      current = make_store_world(GetParam());
    }
    return *current;
  }

  /// A fresh election for `scenario` on the world, its record made.
  std::unique_ptr<fault_cluster> election(const std::string& scenario,
                                          std::chrono::milliseconds ttl = scenario_ttl) {
    auto c = std::make_unique<fault_cluster>(scenario + "-" + GetParam(), ttl, false);
    init_world_election(world(), *c);
    return c;
  }

  /// Starts candidate `index` on the world, with `flags` after the cluster's.
  baton_process& start(fault_cluster& c, int index, const std::vector<std::string>& flags = {}) {
    node_options o = world_candidate(world(), c, index);
    o.baton_args.insert(o.baton_args.end(), flags.begin(), flags.end());
    return c.start_node(index, o);
  }

  /// The single working app, once every candidate started so far names its
  /// node as the leader (so none is left out, unable to reach the store);
  /// nullopt, and a failure that shows every log, otherwise.
  std::optional<interval> single_leader(fault_cluster& c) {
    std::string why;
    auto leader = c.wait_for_single_worker(20s, &why);
    EXPECT_TRUE(leader) << why << world().diagnostics();
    if (!leader) return leader;
    for (int i = 1; i <= max_candidates; ++i) {
      if (!c.has_node(i)) continue;
      const bool sees = wait_until(
          [&] {
            const auto s = c.status(i, 1s);
            return s && s->contains("leader") && (*s)["leader"] == leader->name;
          },
          10s, 50ms);
      EXPECT_TRUE(sees) << fault_cluster::name_of(i) << " does not see " << leader->name
                        << " lead\n"
                        << logs(c);
      if (!sees) return std::nullopt;
    }
    return leader;
  }

  /// Every daemon's log and the servers' log tails, for failure messages.
  std::string logs(const fault_cluster& c) { return c.logs() + world().diagnostics(); }

  /// The summary row of a round: "<kind>: <what>".
  fault_record record_of(fault_cluster& c, const std::string& what, std::int64_t inject_ns,
                         std::optional<pid_t> old_pid) {
    return round_record(c, GetParam() + ": " + what, inject_ns, old_pid, check_no_overlap(c));
  }
};

/// CLOCK_MONOTONIC ns of a duration.
inline std::int64_t ns_of(std::chrono::milliseconds d) {
  return std::chrono::nanoseconds(d).count();
}

/// Polls (the daemon offers no event for it) until node `index` lists every
/// node of `names` among its candidates; the leader refreshes its list with
/// every renewal. Bounded: 100 polls, 100 ms apart.
inline bool lists_candidates(fault_cluster& c, int index, const std::vector<std::string>& names) {
  for (int polls = 0; polls < 100; ++polls) {
    if (auto s = c.status(index); s && s->contains("candidates") && (*s)["candidates"].is_array()) {
      std::size_t found = 0;
      for (const auto& name : names) {
        for (const auto& x : (*s)["candidates"])
          if (x.value("node", "") == name) ++found;
      }
      if (found == names.size()) return true;
    }
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

/// What `baton <args>` said and how it exited, run as an operator runs it.
struct cli_outcome {
  std::optional<int> code;
  std::string output;
};

inline cli_outcome run_cli(const fault_cluster& c, const std::string& name,
                           std::vector<std::string> args) {
  baton_process p(std::move(args), env_list{}, c.dir() / (name + ".log"));
  cli_outcome out;
  out.code = p.wait_exit(30s);
  out.output = p.log_text();
  return out;
}

/// `baton switchover --to TO` asked of node `asked`, with --wait when `wait`.
inline cli_outcome switchover(const fault_cluster& c, int asked, const std::string& to,
                              const std::string& name, bool wait) {
  std::vector<std::string> args{"switchover", "--socket", c.socket_of(asked).string(), "--to", to};
  if (wait) args.insert(args.end(), {"--wait", "--timeout", "20s"});
  return run_cli(c, name, std::move(args));
}

}  // namespace baton::testing::daemon_scenarios_test
