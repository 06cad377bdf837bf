// lease.failsafe peers when the store loses its quorum (docs/safety.md,
// "Peer-confirmed leadership"): a three-member etcd cluster and a
// three-server ZooKeeper ensemble, three daemons, a ttl of 2 s. Two members
// (the one that leads the store and another) are SIGKILLed for
// BATON_FAILSAFE_OUTAGE_S seconds (15 by default), past the ttl and the
// ZooKeeper session timeout; the member left cannot answer a write, nor a
// read that needs the quorum. Then both are started again on their data:
//
// - with the mode, the leader keeps the same app and token throughout, runs
//   on its two peers' confirmations, and renews or resumes its term once
//   the quorum is back (how long after is printed);
// - without it, on the same store and a new election, the app stops at the
//   renew deadline, and a term begins again only with the quorum.
//
// Every round checks the event log for overlaps.
#include <atomic>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "failsafe_checks.hpp"
#include "failsafe_records.hpp"
#include "scenario.hpp"
#include "support/servers/etcd_cluster.hpp"
#include "support/servers/zookeeper_server.hpp"

namespace baton::testing::failsafe_quorum_faults_test {
namespace {

constexpr auto quorum_ttl = 2000ms;

std::chrono::seconds quorum_outage() {
  return failsafe_outage(15s);
}

// A store of three members as the rounds need it; each kind below says how.
class three_members {
 public:
  virtual ~three_members() = default;
  virtual std::string kind() const = 0;
  /// The daemons' flags that name the kind and every member.
  virtual std::vector<std::string> store_flags() const = 0;
  virtual bool record_lists_the_standbys(fault_cluster& c, int leader) = 0;
  /// Stops the member that leads the store and one other (SIGKILL); says
  /// which.
  virtual std::string lose_quorum() = 0;
  /// Starts them again: sets `answered_ns` (CLOCK_MONOTONIC) once a quorum
  /// answers, and returns once both members do.
  virtual void regain_quorum(std::int64_t& answered_ns) = 0;
  virtual std::string log_tails() const = 0;
};

class etcd_members final : public three_members {
 public:
  std::string kind() const override { return "etcd"; }
  std::vector<std::string> store_flags() const override {
    return {"--store-kind", "etcd", "--etcd-endpoints", etcd_.endpoints()};
  }
  bool record_lists_the_standbys(fault_cluster& c, int leader) override {
    return etcd_record_lists_the_standbys(
        c, [&](const std::string& args) { return etcd_.etcdctl(args); }, leader, 10s);
  }
  std::string lose_quorum() override {
    const int raft = etcd_.wait_for_leader().value_or(0);
    stopped_ = {raft, (raft + 1) % 3};
    for (int i : stopped_) etcd_.member(i).stop();
    return "etcd members " + std::to_string(stopped_[0]) + " (raft leader) and " +
           std::to_string(stopped_[1]);
  }
  // start() waits until the member is healthy: the first one back makes a
  // quorum with the member that stayed.
  void regain_quorum(std::int64_t& answered_ns) override {
    etcd_.member(stopped_[0]).start();
    answered_ns = mono_now_ns();
    etcd_.member(stopped_[1]).start();
  }
  std::string log_tails() const override { return etcd_.log_tails(); }

 private:
  etcd_cluster etcd_;
  std::vector<int> stopped_;
};

class zookeeper_members final : public three_members {
 public:
  zookeeper_members() : members_(start_zookeeper_ensemble(3)) {}
  std::string kind() const override { return "zookeeper"; }
  std::vector<std::string> store_flags() const override {
    std::string servers;
    for (const auto& m : members_) servers += (servers.empty() ? "" : ",") + m->address();
    return {"--store-kind", "zookeeper", "--zookeeper-servers", servers};
  }
  bool record_lists_the_standbys(fault_cluster& c, int leader) override {
    return zk_record_lists_the_standbys(c, store_flags().back(), leader, 10s);
  }
  std::string lose_quorum() override {
    std::size_t leading = 0;
    for (std::size_t i = 0; i < members_.size(); ++i) {
      if (members_[i]->mode() == "leader") leading = i;
    }
    stopped_ = {leading, (leading + 1) % members_.size()};
    for (auto i : stopped_) members_[i]->stop(true);
    return "ZooKeeper servers " + std::to_string(members_[stopped_[0]]->options().server_id) +
           " (leader) and " + std::to_string(members_[stopped_[1]]->options().server_id);
  }
  // Both started at once; a server answers with a mode once a quorum formed.
  void regain_quorum(std::int64_t& answered_ns) override {
    for (auto i : stopped_) members_[i]->start(false);
    for (auto i : stopped_) {
      if (!members_[i]->wait_ready()) {
        throw std::runtime_error("a server did not come back\n" + log_tails());
      }
      if (answered_ns == 0) answered_ns = mono_now_ns();
    }
  }
  std::string log_tails() const override {
    std::string out;
    for (const auto& m : members_) {
      out += "---- server " + std::to_string(m->options().server_id) + "\n" + m->log_tail();
    }
    return out;
  }

 private:
  std::vector<std::unique_ptr<zookeeper_server>> members_;
  std::vector<std::size_t> stopped_;
};

node_options quorum_node(const three_members& store, failsafe_peer_ports* peers, int index) {
  node_options o = on_store(store.store_flags());
  if (peers) o.baton_args = peers->flags(index);
  return o;
}

// The leader's status, polled every 50 ms on a thread of its own (at most
// 30 s) while the test starts the members again: when it first leads out
// of its confirmations, renewed or resumed. The members are started by the
// test's own thread: a child is killed when the thread that started it
// ends (PR_SET_PDEATHSIG).
class leader_back_watch {
 public:
  leader_back_watch(fault_cluster& c, int l)
      : worker_([this, &c, l] {
          const auto until = std::chrono::steady_clock::now() + 30s;
          for (int i = 0; i < 600 && !stop_ && std::chrono::steady_clock::now() < until; ++i) {
            if (auto s = c.status(l, 1s); s && (*s)["is_leader"].get<bool>() &&
                                          !(*s)["failsafe"]["on_confirmations"].get<bool>()) {
              back_ns_ = mono_now_ns();
              return;
            }
            std::this_thread::sleep_for(50ms);
          }
        }) {}
  ~leader_back_watch() {
    stop_ = true;
    if (worker_.joinable()) worker_.join();
  }
  leader_back_watch(const leader_back_watch&) = delete;
  leader_back_watch& operator=(const leader_back_watch&) = delete;

  /// Waits for the watch's end: when the leader was back (0 if it was not).
  std::int64_t back_ns() {
    if (worker_.joinable()) worker_.join();
    return back_ns_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::int64_t back_ns_ = 0;
  std::thread worker_;
};

// With the mode: the quorum lost for the outage under a leader, then back.
void quorum_lost_with_the_mode(three_members& store) {
  fault_cluster c(round_name(1), quorum_ttl, false);
  failsafe_peer_ports peers(c);
  for (int n = 1; n <= 3; ++n) c.start_node(n, quorum_node(store, &peers, n));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << store.log_tails();
  const int l = fault_cluster::index_of(*leader);
  ASSERT_TRUE(store.record_lists_the_standbys(c, l)) << c.logs();
  const std::uint64_t token = token_value(*leader);

  const std::int64_t inject = mono_now_ns();
  const std::string stopped = store.lose_quorum();
  const auto outage_ns = std::chrono::nanoseconds(quorum_outage()).count();
  hold_fault_until(inject + outage_ns / 2);
  expect_on_confirmations(c, l);
  hold_fault_until(inject + outage_ns);

  // Back to the store: renewals when it kept the lease, a resume when the
  // lease ended meanwhile. Either way the leader's status leaves its
  // confirmations.
  const std::int64_t restarting = mono_now_ns();
  std::int64_t answered = 0;
  std::int64_t back = 0;
  {
    leader_back_watch watch(c, l);
    store.regain_quorum(answered);
    back = watch.back_ns();
  }
  const double answered_ms = ms_between(restarting, answered);
  const double store_again_ms = back == 0 ? -1 : ms_between(restarting, back);
  EXPECT_GE(store_again_ms, 0) << "the leader never renewed or resumed\n"
                               << c.logs() << store.log_tails();
  expect_same_app_throughout(c, l, *leader, token, 20s);
  const auto overlaps = check_no_overlap(c);
  auto record = round_record(c,
                             store.kind() + ": quorum lost " +
                                 std::to_string(quorum_outage().count()) +
                                 " s, 2 of 3 members SIGKILL (failsafe peers)",
                             inject, std::nullopt, overlaps);
  record.kept_working = true;
  record_fault(record);
  const bool resumed = c.log_of(l).find("resumed term") != std::string::npos;
  std::printf(
      "failsafe on %s, quorum lost (%s stopped) %lld s: the quorum answered %.0f ms after the "
      "restart began; the leader %s and left its confirmations %.0f ms after it began (%+.0f ms "
      "from the quorum's answer)\n",
      store.kind().c_str(), stopped.c_str(), static_cast<long long>(quorum_outage().count()),
      answered_ms, resumed ? "resumed its term" : "renewed its lease", store_again_ms,
      store_again_ms - answered_ms);
  print_failsafe_lines(c, l);
}

// Without the mode, on the same store: the app stops at the renew deadline,
// and the next term begins only once the quorum is back.
void quorum_lost_without_the_mode(three_members& store) {
  fault_cluster c(round_name(2), quorum_ttl, false);
  for (int n = 1; n <= 3; ++n) c.start_node(n, quorum_node(store, nullptr, n));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << store.log_tails();
  exit_watch app(leader->pid);

  const std::int64_t inject = mono_now_ns();
  store.lose_quorum();
  const auto gone = app.wait(quorum_ttl + 2s);
  ASSERT_TRUE(gone) << "the app outlived its lease without the mode\n" << c.logs();
  // Stopped within the lease's validity, counted from the last renewal
  // before the quorum was lost.
  EXPECT_LE(*gone, inject + std::chrono::nanoseconds(quorum_ttl).count()) << c.logs();
  hold_fault_until(inject + std::chrono::nanoseconds(quorum_ttl + 1s).count());
  const std::int64_t back = mono_now_ns();
  std::int64_t answered = 0;
  store.regain_quorum(answered);
  event_log log(c.events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 30s)) << c.logs() << store.log_tails();
  const auto next = first_started_after(log, inject);
  EXPECT_GT(next->start_ns, back) << "an app started without a quorum\n" << c.logs();
  std::printf("without failsafe on %s: the app stopped %.0f ms after the quorum was lost\n",
              store.kind().c_str(), ms_between(inject, *gone));
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, store.kind() + ": quorum lost 3 s (failsafe off)", inject,
                            leader->pid, overlaps));
}

// One store for both rounds: a cluster or an ensemble takes seconds to
// start, and every second counts in CI.
TEST(failsafe_quorum_faults, etcd_loses_its_quorum_the_failsafe_leader_keeps_its_app) {
  etcd_members etcd;
  quorum_lost_with_the_mode(etcd);
  if (HasFatalFailure()) return;
  quorum_lost_without_the_mode(etcd);
}

TEST(failsafe_quorum_faults, zookeeper_loses_its_quorum_the_failsafe_leader_keeps_its_app) {
  zookeeper_members zk;
  quorum_lost_with_the_mode(zk);
  if (HasFatalFailure()) return;
  quorum_lost_without_the_mode(zk);
}

}  // namespace
}  // namespace baton::testing::failsafe_quorum_faults_test
