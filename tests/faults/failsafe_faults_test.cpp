// lease.failsafe peers on the redis kind, three candidates, a ttl of 2 s
// (docs/safety.md, "Peer-confirmed leadership"):
//
// - Redis stopped under the leader, then started empty: with the mode, the
//   same app and token throughout, and the leader resumes its term in the
//   empty Redis; without it, today's behaviour: the app stops at the renew
//   deadline. The outage lasts BATON_FAILSAFE_OUTAGE_S seconds (20 by
//   default, to keep CI short; docs/safety.md reports a 60 s run too).
// - The leader cut from Redis (a proxy that resets its connections) while
//   the standbys reach it: the lease key expires, the standbys' acquires meet
//   a failsafe hold (F6) and none starts, the leader runs on confirmations,
//   and resumes when the link is back; also with a new candidate joining
//   meanwhile, which the leader's list does not name.
// - The leader cut from Redis and from one standby's peer port: no round
//   counts, it stops at its renew deadline, and a standby takes over after.
// - The same two cuts as partitions in a private network namespace
//   (iptables DROP: the calls time out rather than fail at once).
// - The leader's daemon killed: its term stays in the record, and a standby
//   clears it (F6) before it takes over.
//
// Every round checks the event log for overlaps.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "failsafe_checks.hpp"
#include "redirected_links.hpp"
#include "scenario.hpp"
#include "support/fault_proxy.hpp"
#include "support/free_port.hpp"

namespace baton::testing::failsafe_faults_test {
namespace {

constexpr auto ttl = 2000ms;

std::chrono::seconds outage() {
  return failsafe_outage(20s);
}

// Each candidate's peer port and the secret they share; a candidate may
// publish its port behind a proxy of its own.
struct peer_ports {
  explicit peer_ports(fault_cluster& cluster) : shared(cluster) {}

  node_options options(int index, std::string redis_url = {}) {
    node_options o;
    o.redis_url = std::move(redis_url);
    o.baton_args = shared.flags(index);
    if (proxied.count(index)) {
      o.baton_args.insert(
          o.baton_args.end(),
          {"--failsafe-address", "127.0.0.1:" + std::to_string(proxied[index]->port())});
    }
    return o;
  }

  /// Candidate `index` publishes its peer port behind a proxy of its own,
  /// which then cuts the others' requests to it (call before options()).
  fault_proxy& proxy_peer_port(int index) {
    proxied[index] = std::make_unique<fault_proxy>(shared.port(index));
    return *proxied[index];
  }
  unsigned short port(int index) { return shared.port(index); }

  failsafe_peer_ports shared;
  std::map<int, std::unique_ptr<fault_proxy>> proxied;
};

std::string record_key(const fault_cluster& c) {
  return "baton:{" + c.election() + "}:failsafe";
}

// Until the record in Redis lists both standbys of `leader`.
bool record_lists_the_standbys(fault_cluster& c, int leader, std::chrono::milliseconds timeout) {
  return testing::record_lists_the_standbys(
      leader,
      [&] {
        const auto got = c.redis().command({"GET", record_key(c)});
        return got.empty() ? std::string() : got[0];
      },
      [](const std::string& node) { return "\n" + node + " "; }, timeout);
}

TEST(failsafe_faults, redis_stopped_then_started_empty_the_leader_keeps_its_app_and_token) {
  fault_cluster c(round_name(1), ttl);
  peer_ports peers(c);
  for (int n = 1; n <= 3; ++n) c.start_node(n, peers.options(n));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why;
  const int l = fault_cluster::index_of(*leader);
  ASSERT_TRUE(record_lists_the_standbys(c, l, 10s)) << c.logs();
  const std::uint64_t token = token_value(*leader);

  const std::int64_t inject = mono_now_ns();
  c.redis().kill_and_wait();
  // Half-way: the leader runs on its peers' confirmations.
  hold_fault_until(inject + std::chrono::nanoseconds(outage()).count() / 2);
  expect_on_confirmations(c, l);
  hold_fault_until(inject + std::chrono::nanoseconds(outage()).count());
  c.redis().restart();  // empty: no persistence
  const std::int64_t back = mono_now_ns();

  // The leader resumes its term: its lease is back in the empty Redis.
  ASSERT_TRUE(c.node(l).wait_for_log("resumed term " + std::to_string(token), 10s)) << c.logs();
  // At most the log's poll later than the resume itself.
  const double resumed_ms = ms_between(back, mono_now_ns());
  expect_same_app_throughout(c, l, *leader, token, 10s);
  event_log log(c.events());
  // A second outage, shorter (two ttls): the standbys, which met the
  // leader's lease in the emptied Redis, confirm its term again.
  const std::int64_t again = mono_now_ns();
  c.redis().kill_and_wait();
  hold_fault_until(again + std::chrono::nanoseconds(2 * ttl).count());
  c.redis().restart();
  ASSERT_TRUE(wait_for(
      log,
      [&](const event_log&) {
        const auto text = c.log_of(l);
        return text.find("resumed term") != text.rfind("resumed term");
      },
      10s))
      << "the second outage was not resumed\n"
      << c.logs();
  log.refresh();
  EXPECT_EQ(log.start_count(), 1u) << "another app started\n" << c.logs();
  const auto overlaps = check_no_overlap(c);
  auto record = round_record(c,
                             "redis: stopped " + std::to_string(outage().count()) +
                                 " s, started empty, then 4 s (failsafe peers)",
                             inject, std::nullopt, overlaps);
  record.kept_working = true;
  record_fault(record);
  std::printf("failsafe: outage %lld s, the leader resumed within %.0f ms of Redis being back\n",
              static_cast<long long>(outage().count()), resumed_ms);
}

// Without one listed peer's confirmation: the leader's app stopped at its
// renew deadline (1,333 ms after its last renewal, which came before the
// cut), and whoever took over started after that, with a higher token.
void expect_stopped_then_taken_over(fault_cluster& c, const interval& leader, std::int64_t inject,
                                    const char* what) {
  event_log log(c.events());
  ASSERT_TRUE(wait_for(
      log,
      [&](const event_log& x) {
        auto i = interval_of(x, leader.pid);
        return i && i->ended;
      },
      10s))
      << "the leader's app kept running without every peer's confirmation\n"
      << c.logs();
  const auto stopped = interval_of(log, leader.pid);
  EXPECT_LT(stopped->end_ns - inject, std::chrono::nanoseconds(ttl).count())
      << "stopped later than its renew deadline\n"
      << c.logs();
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s)) << "no takeover\n" << c.logs();
  const auto next = first_started_after(log, inject);
  EXPECT_GT(next->start_ns, stopped->end_ns);
  EXPECT_GT(token_value(*next), token_value(leader));
  std::printf("%s: the leader's app stopped %.0f ms after the cut; %s started %.0f ms after that\n",
              what, ms_between(inject, stopped->end_ns), next->name.c_str(),
              ms_between(stopped->end_ns, next->start_ns));
}

TEST(failsafe_faults, without_the_mode_the_leader_stops_at_its_renew_deadline) {
  fault_cluster c(round_name(1), ttl);
  for (int n = 1; n <= 3; ++n) c.start_node(n);
  std::string why;
  auto leader = c.wait_for_single_worker(15s, &why);
  ASSERT_TRUE(leader) << why;
  exit_watch app(leader->pid);

  const std::int64_t inject = mono_now_ns();
  c.redis().kill_and_wait();
  const auto gone = app.wait(ttl + 2s);
  ASSERT_TRUE(gone) << "the app outlived its lease without the mode\n" << c.logs();
  // Stopped within the lease's validity, counted from the last renewal
  // before the outage.
  EXPECT_LE(*gone, inject + std::chrono::nanoseconds(ttl).count()) << c.logs();
  hold_fault_until(inject + std::chrono::nanoseconds(ttl + 1s).count());
  c.redis().restart();
  event_log log(c.events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s)) << c.logs();
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, "redis: stopped 3 s (failsafe off)", inject, leader->pid, overlaps));
}

// The leader's link to Redis cut for 10 s while the standbys reach it; with
// `joiner`, a fourth candidate, which no list of the leader's names, starts
// (reaching Redis directly) once the lease key has expired there: it meets
// the record's hold as the standbys do and never starts its app.
void cut_leader_round(bool joiner) {
  fault_cluster c(round_name(1), ttl);
  peer_ports peers(c);
  std::vector<std::unique_ptr<fault_proxy>> proxies;
  for (int n = 1; n <= 3; ++n) {
    proxies.push_back(std::make_unique<fault_proxy>(c.redis().port()));
    c.start_node(n, peers.options(n, proxies.back()->url()));
  }
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why;
  const int l = fault_cluster::index_of(*leader);
  ASSERT_TRUE(record_lists_the_standbys(c, l, 10s)) << c.logs();
  const std::uint64_t token = token_value(*leader);

  // Only the leader's link: the standbys reach Redis all along. The lease
  // key expires in Redis within a ttl.
  const std::int64_t inject = mono_now_ns();
  proxies[static_cast<std::size_t>(l - 1)]->reset();
  const auto partition = 10s;
  if (joiner) {
    ASSERT_TRUE(c.node(l == 1 ? 2 : 1).wait_for_log("failsafe hold", partition)) << c.logs();
    EXPECT_EQ(c.lease_pttl(), -2) << "the lease key should have expired in Redis";
    c.start_node(4, peers.options(4));
    EXPECT_TRUE(c.node(4).wait_for_log("failsafe hold", partition)) << c.log_of(4);
  }
  expect_held_on_confirmations(c, l, inject, partition);
  EXPECT_EQ(c.lease_pttl(), -2) << "the lease key should have expired in Redis";
  proxies[static_cast<std::size_t>(l - 1)]->pass();
  expect_resumed_alone(c, l, *leader, token);
  const auto overlaps = check_no_overlap(c);
  auto record =
      round_record(c,
                   joiner ? "redis: leader cut 10 s, a new candidate joins (failsafe peers)"
                          : "redis: leader cut 10 s, standbys reach it (failsafe peers)",
                   inject, std::nullopt, overlaps);
  record.kept_working = true;
  record_fault(record);
}

TEST(failsafe_faults, the_leader_cut_from_redis_alone_keeps_its_app_and_nobody_takes) {
  cut_leader_round(false);
}

TEST(failsafe_faults, the_leader_cut_from_redis_a_candidate_that_joins_never_starts) {
  cut_leader_round(true);
}

// The leader cut from Redis and from one standby's peer port (a proxy that
// swallows what it is sent), the other standby still reachable: no round
// is counted (one listed peer never answers), so the leader stops its app at
// its renew deadline, as without the mode; the standbys reach Redis, and
// whoever takes over starts only after the leader's app has stopped.
TEST(failsafe_faults, the_leader_cut_from_redis_and_one_peer_stops_at_its_deadline) {
  fault_cluster c(round_name(1), ttl);
  peer_ports peers(c);
  std::vector<std::unique_ptr<fault_proxy>> store_links;
  for (int n = 1; n <= 3; ++n) {
    peers.proxy_peer_port(n);
    store_links.push_back(std::make_unique<fault_proxy>(c.redis().port()));
    c.start_node(n, peers.options(n, store_links.back()->url()));
  }
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why;
  const int l = fault_cluster::index_of(*leader);
  const int cut_peer = l == 1 ? 2 : 1;
  ASSERT_TRUE(record_lists_the_standbys(c, l, 10s)) << c.logs();

  const std::int64_t inject = mono_now_ns();
  store_links[static_cast<std::size_t>(l - 1)]->reset();
  peers.proxied[cut_peer]->blackhole();
  expect_stopped_then_taken_over(c, *leader, inject, "cut");
  store_links[static_cast<std::size_t>(l - 1)]->pass();
  peers.proxied[cut_peer]->pass();
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, "redis: leader cut from Redis and one peer (failsafe peers)", inject,
                            leader->pid, overlaps));
}

// A partition, in a private network namespace (iptables DROP: packets
// vanish, nothing is refused, so calls time out): the leader's link to Redis
// cut while the standbys reach it, and with `one_peer_too` the leader's
// requests to one standby's peer port too. Without that peer the leader
// counts no round and stops its app at its renew deadline, and whoever takes
// over starts after that; with every peer it keeps its app and resumes its
// term when the link is back, and nobody else starts.
void partitioned_leader_round(bool one_peer_too) {
  std::optional<private_network> network;
  if (const auto why = enter_private_network(network); !why.empty()) GTEST_SKIP() << why;
  const auto& net = *network;
  fault_cluster c(round_name(1), ttl);
  peer_ports peers(c);
  for (int n = 1; n <= 3; ++n) {
    c.start_node(n, peers.options(n, redirect_redis_link(net, c.redis(), n)));
  }
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why;
  const int l = fault_cluster::index_of(*leader);
  const int cut_peer = l == 1 ? 2 : 1;
  ASSERT_TRUE(record_lists_the_standbys(c, l, 10s)) << c.logs();
  const std::uint64_t token = token_value(*leader);

  const auto store_rule = redis_link_cut(c.redis(), l, false);
  const std::vector<std::string> peer_rule = {
      "INPUT", "-p", "tcp", "--dport", std::to_string(peers.port(cut_peer)), "-j", "DROP"};
  const std::int64_t inject = mono_now_ns();
  net.must_iptables(with_verb("-A", store_rule));
  if (one_peer_too) net.must_iptables(with_verb("-A", peer_rule));
  if (one_peer_too) {
    expect_stopped_then_taken_over(c, *leader, inject, "partitioned");
  } else {
    expect_held_on_confirmations(c, l, inject, 10s);
  }
  net.must_iptables(with_verb("-D", store_rule));
  if (one_peer_too) net.must_iptables(with_verb("-D", peer_rule));
  if (!one_peer_too) expect_resumed_alone(c, l, *leader, token);
  const auto overlaps = check_no_overlap(c);
  auto record = round_record(
      c,
      one_peer_too ? "redis: leader partitioned from Redis and one peer (failsafe peers)"
                   : "redis: leader partitioned from Redis 10 s (failsafe peers)",
      inject, one_peer_too ? std::optional(leader->pid) : std::nullopt, overlaps);
  record.kept_working = !one_peer_too;
  record_fault(record);
}

TEST(failsafe_faults, a_partition_cuts_the_leader_from_redis_it_keeps_its_app) {
  partitioned_leader_round(false);
}

TEST(failsafe_faults, a_partition_cuts_the_leader_from_redis_and_one_peer_it_stops) {
  partitioned_leader_round(true);
}

TEST(failsafe_faults, the_leader_crashes_a_standby_clears_its_term_and_takes_over) {
  fault_cluster c(round_name(1), ttl);
  peer_ports peers(c);
  for (int n = 1; n <= 3; ++n) c.start_node(n, peers.options(n));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why;
  const int l = fault_cluster::index_of(*leader);
  ASSERT_TRUE(record_lists_the_standbys(c, l, 10s)) << c.logs();

  // The daemon and its keeper die; the record keeps its unreleased term.
  const std::int64_t inject = mono_now_ns();
  c.node(l).signal_group(SIGKILL);
  event_log log(c.events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 15s)) << c.logs();
  const auto next = first_started_after(log, inject);
  EXPECT_GT(token_value(*next), token_value(*leader));
  const int taker = fault_cluster::index_of(*next);
  // It met the hold and, a listed peer without a promise, cleared the term.
  EXPECT_NE(c.log_of(taker).find("failsafe hold"), std::string::npos) << c.log_of(taker);
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, "daemon SIGKILL under a failsafe leader (failsafe peers)", inject,
                            leader->pid, overlaps));
}

}  // namespace
}  // namespace baton::testing::failsafe_faults_test
