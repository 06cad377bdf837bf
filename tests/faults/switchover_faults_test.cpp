// Choosing who leads, under baton daemons on each store kind, each daemon
// supervising a worker that logs its work (the event log proves that no two
// apps worked at once):
// - `baton switchover --to NODE` to a standby: the app moves to NODE, with a
//   larger token; to a node that is not a candidate: refused, nothing moves;
//   to a node frozen just before (still listed, cannot take the lease): the
//   reservation lapses after its window and another node leads;
// - priorities: a candidate of a higher priority that keeps restarting never
//   pulls leadership over; once it stays up for lease.preempt_delay, the
//   leader hands over to it, once.
// One server per scenario, a fresh election per round.
#include <signal.h>

#include <functional>
#include <memory>

#include "scenario.hpp"
#include "support/servers/etcd_server.hpp"
#include "support/servers/postgres_server.hpp"
#include "support/servers/zookeeper_server.hpp"

namespace baton::testing::switchover_faults_test {
namespace {

constexpr auto ttl = 2000ms;

// A store kind's server for one scenario, and the flags that point a
// daemon at it.
class store_world {
 public:
  virtual ~store_world() = default;
  /// The cluster runs its own redis-server (the redis kind) or none.
  virtual bool own_redis() const { return false; }
  virtual node_options options() const = 0;
  virtual std::string diagnostics() const { return {}; }
};

class redis_world final : public store_world {
 public:
  bool own_redis() const override { return true; }
  node_options options() const override { return {}; }
};

class zookeeper_world final : public store_world {
 public:
  node_options options() const override {
    return on_store({"--store-kind", "zookeeper", "--zookeeper-servers", zk_.address()});
  }
  std::string diagnostics() const override { return "zookeeper log:\n" + zk_.log_tail(); }

 private:
  zookeeper_server zk_;
};

class postgres_world final : public store_world {
 public:
  node_options options() const override {
    return on_store({"--store-kind", "postgres", "--postgres-url", pg_.conninfo()});
  }
  std::string diagnostics() const override { return "postgres log:\n" + pg_.log_tail(); }

 private:
  postgres_server pg_;
};

class etcd_world final : public store_world {
 public:
  node_options options() const override {
    return on_store({"--store-kind", "etcd", "--etcd-endpoints", etcd_.client_url()});
  }

 private:
  etcd_server etcd_;
};

std::unique_ptr<store_world> make_world(const std::string& kind) {
  if (kind == "zookeeper") return std::make_unique<zookeeper_world>();
  if (kind == "postgres") return std::make_unique<postgres_world>();
  if (kind == "etcd") return std::make_unique<etcd_world>();
  return std::make_unique<redis_world>();
}

node_options with_flags(node_options o, const std::vector<std::string>& flags) {
  o.baton_args.insert(o.baton_args.end(), flags.begin(), flags.end());
  return o;
}

// `baton <args>` as an operator runs it; its exit code and output.
struct cli_outcome {
  std::optional<int> code;
  std::string output;
};

cli_outcome run_cli(const fault_cluster& c, const std::string& name, std::vector<std::string> args,
                    std::chrono::milliseconds within = 30s) {
  baton_process p(std::move(args), env_list{}, c.dir() / (name + ".log"));
  cli_outcome out;
  out.code = p.wait_exit(within);
  out.output = p.log_text();
  return out;
}

cli_outcome switchover(const fault_cluster& c, int leader, const std::string& to,
                       const std::string& name, bool wait) {
  std::vector<std::string> args{"switchover", "--socket", c.socket_of(leader).string(), "--to", to};
  if (wait) args.insert(args.end(), {"--wait", "--timeout", "20s"});
  return run_cli(c, name, std::move(args));
}

// Waits until node `index` lists every node of `names` among its
// candidates (the leader refreshes them with every renewal).
bool lists_candidates(fault_cluster& c, int index, const std::vector<std::string>& names) {
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

class switchover_faults : public ::testing::TestWithParam<std::string> {};

// An election name for the round: the kind, the scenario, the round
// (round_name's test name holds the parameter's '/').
std::string election_of(const std::string& scenario, int round) {
  return "switchover-" + ::testing::TestWithParam<std::string>::GetParam() + "-" + scenario + "-r" +
         std::to_string(round);
}

// Three candidates; the leader is asked to hand over to a node that is not
// one (refused: nothing moves), to a standby (it leads next, with a larger
// token), then to a standby frozen just before (still listed: the lease waits
// out its reservation, then another node leads).
TEST_P(switchover_faults, to_a_standby_to_no_candidate_and_to_one_that_froze) {
  auto world = make_world(GetParam());
  for (int round = 1; round <= 2; ++round) {
    fault_cluster c(election_of("moves", round), ttl, world->own_redis());
    for (int i = 1; i <= 3; ++i) c.start_node(i, world->options());
    std::string why;
    auto leader = c.wait_for_single_worker(20s, &why);
    ASSERT_TRUE(leader) << why << c.logs() << world->diagnostics();
    const int l = fault_cluster::index_of(*leader);
    const int t = l % 3 + 1;
    const int u = t % 3 + 1;
    ASSERT_TRUE(lists_candidates(c, l, {fault_cluster::name_of(t), fault_cluster::name_of(u)}))
        << c.logs() << world->diagnostics();

    // No such candidate: refused, and the app works on.
    auto refused = switchover(c, l, "node-9", "refused", false);
    EXPECT_EQ(refused.code, 1) << refused.output;
    EXPECT_NE(refused.output.find("'node-9' is not a live candidate"), std::string::npos)
        << refused.output;
    auto standby = switchover(c, t, fault_cluster::name_of(u), "standby-asked", false);
    EXPECT_EQ(standby.code, 3) << standby.output;

    // To a standby.
    const std::int64_t asked = mono_now_ns();
    auto moved = switchover(c, l, fault_cluster::name_of(t), "moved", true);
    EXPECT_EQ(moved.code, 0) << moved.output << c.logs();
    EXPECT_NE(moved.output.find("new leader: " + fault_cluster::name_of(t)), std::string::npos)
        << moved.output;
    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, asked, 20s)) << c.logs();
    const auto next = first_started_after(log, asked);
    EXPECT_EQ(next->name, fault_cluster::name_of(t)) << c.logs();
    EXPECT_GT(token_value(*next), token_value(*leader));
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old && old->ended);
    auto r = round_record(c, "switchover to a standby (" + GetParam() + ")", asked, leader->pid,
                          check_no_overlap(c));
    record_fault(r);
    std::printf(
        "[%s] switchover: old app gone %.1f ms after the request, new app started "
        "%.1f ms after it was gone\n",
        GetParam().c_str(), ms_between(asked, old->end_ns),
        ms_between(old->end_ns, next->start_ns));

    // To a standby that froze just before: listed still, it cannot take the
    // lease; another node leads once the window (the ttl) is over.
    ASSERT_TRUE(lists_candidates(c, t, {fault_cluster::name_of(u)})) << c.logs();
    c.freeze_group(c.node(u).pgid());
    const std::int64_t frozen = mono_now_ns();
    auto lapsed = switchover(c, t, fault_cluster::name_of(u), "lapsed", false);
    EXPECT_EQ(lapsed.code, 0) << lapsed.output << c.logs();
    ASSERT_TRUE(wait_for_new_term_after(log, frozen, 20s)) << c.logs() << world->diagnostics();
    const auto after = first_started_after(log, frozen);
    EXPECT_NE(after->name, fault_cluster::name_of(u));
    const auto gone = interval_of(log, next->pid);
    ASSERT_TRUE(gone && gone->ended);
    // The reservation held the lease for its window (the ttl): allow for the
    // stop and a server's coarse clock.
    EXPECT_GE(ms_between(gone->end_ns, after->start_ns), 0.5 * ttl.count()) << c.logs();
    auto lapse = round_record(c, "switchover to a frozen standby (" + GetParam() + ")", frozen,
                              next->pid, check_no_overlap(c));
    record_fault(lapse);
    c.thaw_all();
  }
}

// Nodes 1 and 2 at priority 0 lead; a node at priority 5 restarts three
// times, each time before preempt_delay: leadership stays. Then it stays
// up: the leader hands over to it once.
TEST_P(switchover_faults, a_restarting_higher_priority_node_preempts_only_once_it_stays) {
  auto world = make_world(GetParam());
  constexpr auto preempt_delay = 3000ms;
  const std::vector<std::string> flags{"--preempt-delay", "3s"};
  fault_cluster c(election_of("preempt", 1), ttl, world->own_redis());
  c.start_node(1, with_flags(world->options(), flags));
  c.start_node(2, with_flags(world->options(), flags));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << c.logs() << world->diagnostics();

  // One node id for every start of the high-priority node: a restart, as a
  // crash loop would be.
  auto high = with_flags(world->options(),
                         {"--preempt-delay", "3s", "--priority", "5", "--node-id", "high"});
  for (int flap = 0; flap < 3; ++flap) {
    auto& node = c.start_node(3 + flap, high);
    // Up for well under preempt_delay, then gone for good.
    std::this_thread::sleep_for(preempt_delay / 2);
    ASSERT_TRUE(node.signal_group(SIGKILL));
  }
  const std::int64_t steady = mono_now_ns();
  c.start_node(6, high);
  event_log log(c.events());
  ASSERT_TRUE(wait_for_new_term_after(log, steady, 30s)) << c.logs() << world->diagnostics();
  const auto next = first_started_after(log, steady);
  EXPECT_EQ(next->name, fault_cluster::name_of(6)) << c.logs();
  EXPECT_GE(ms_between(steady, next->start_ns), preempt_delay.count() * 0.9) << c.logs();
  EXPECT_NE(c.log_of(fault_cluster::index_of(*leader)).find("preempted: high (priority 5"),
            std::string::npos)
      << c.logs();
  // Before node 6: one term only, the first leader's.
  std::size_t terms_before = 0;
  for (const auto& i : log.intervals())
    if (i.start_ns < steady) ++terms_before;
  EXPECT_EQ(terms_before, 1u) << "a restarting node pulled leadership over\n" << c.logs();
  auto r = round_record(c, "preemption by a restarting node (" + GetParam() + ")", steady,
                        leader->pid, check_no_overlap(c));
  record_fault(r);
}

// Priorities in crash takeovers: a leader at priority 0 and standbys at 1,
// 5 and 3 (no preemption: preempt_delay is far off). The leader's daemon and
// app are killed: the priority-5 standby takes over, as the others, told by
// the store that it outranks them, try a step or two later. Killed in turn,
// it is followed by the priority-3 one. The ttl is long enough (8 s, a step
// of 200 ms) for the order to survive a loaded machine's late timers.
// One kind whose leases expire on the server's clock and one whose expire
// with a session: the standbys' order comes from the store's answers either
// way, and the test is long (two takeovers of an 8 s ttl).
class crash_order_faults : public switchover_faults {};

TEST_P(crash_order_faults, priorities_decide_crash_takeovers_among_three_standbys) {
  auto world = make_world(GetParam());
  constexpr auto long_ttl = 8000ms;
  fault_cluster c(election_of("crash-order", 1), long_ttl, world->own_redis());
  const std::vector<std::string> no_preemption{"--preempt-delay", "10m"};
  c.start_node(1, with_flags(world->options(), no_preemption));
  std::string why;
  auto leader = c.wait_for_single_worker(30s, &why);
  ASSERT_TRUE(leader) << why << c.logs() << world->diagnostics();
  ASSERT_EQ(fault_cluster::index_of(*leader), 1);
  const int priority_of[] = {0, 0, 1, 5, 3};
  for (int i = 2; i <= 4; ++i) {
    c.start_node(i, with_flags(world->options(), {"--preempt-delay", "10m", "--priority",
                                                  std::to_string(priority_of[i])}));
  }
  ASSERT_TRUE(lists_candidates(c, 1, {"node-2", "node-3", "node-4"})) << c.logs();
  // Every standby's last answer must have seen the others registered: one
  // more attempt each (at most a ttl apart).
  std::this_thread::sleep_for(long_ttl);

  event_log log(c.events());
  for (const int expected : {3, 4}) {
    const auto current = c.wait_for_single_worker(30s, &why);
    ASSERT_TRUE(current) << why << c.logs();
    const int l = fault_cluster::index_of(*current);
    const std::int64_t killed = mono_now_ns();
    ASSERT_TRUE(c.node(l).signal_group(SIGKILL));
    ASSERT_TRUE(wait_for_new_term_after(log, killed, 40s)) << c.logs() << world->diagnostics();
    const auto next = first_started_after(log, killed);
    EXPECT_EQ(next->name, fault_cluster::name_of(expected))
        << "not the highest live priority took over\n"
        << c.logs();
    EXPECT_GT(token_value(*next), token_value(*current));
    auto r = round_record(c, "crash takeover by priority (" + GetParam() + ")", killed,
                          current->pid, check_no_overlap(c));
    record_fault(r);
    // The next round's standbys learn the holder and who outranks them.
    std::this_thread::sleep_for(long_ttl / 2);
  }
}

INSTANTIATE_TEST_SUITE_P(kinds, switchover_faults,
                         ::testing::Values("redis", "postgres", "zookeeper", "etcd"),
                         [](const ::testing::TestParamInfo<std::string>& kind) {
                           return kind.param;
                         });
INSTANTIATE_TEST_SUITE_P(kinds, crash_order_faults, ::testing::Values("redis", "zookeeper"),
                         [](const ::testing::TestParamInfo<std::string>& kind) {
                           return kind.param;
                         });

}  // namespace
}  // namespace baton::testing::switchover_faults_test
