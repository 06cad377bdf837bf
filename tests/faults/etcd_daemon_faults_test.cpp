// Faults under baton daemons on the etcd store (store.kind etcd), a cluster
// of three etcd members on loopback (50 ms heartbeats, 500 ms election
// timeout): the leader daemon killed or frozen past its ttl, the member that
// leads raft killed or frozen, the quorum lost for longer than the ttl, and
// an operator's delete of the lease key. Every round is a fresh election on
// the scenario's cluster, checked by the workers' event log for overlaps.
#include <signal.h>

#include <cstdio>

#include "scenario.hpp"
#include "support/servers/etcd_cluster.hpp"

namespace baton::testing {
namespace {

constexpr auto ttl = 2000ms;
// The lease renews every ttl/3: the last keepalive etcd heard before a fault
// came at most this long before it (plus its latency).
constexpr auto renew_interval = ttl / 3;
// Rounds of the member and quorum faults, which take longest.
constexpr int etcd_rounds = 2;

node_options on_etcd(const etcd_cluster& etcd) {
  // The cluster's Redis flag is given but unused: the store kind decides.
  node_options o = via_redis_url("redis://127.0.0.1:1");
  o.baton_args = {"--store-kind", "etcd", "--etcd-endpoints", etcd.endpoints()};
  return o;
}

std::optional<interval> single_leader(fault_cluster& c, const etcd_cluster& etcd) {
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  EXPECT_TRUE(leader) << why << "\n" << etcd.log_tails();
  return leader;
}

std::string lease_key(const fault_cluster& c) {
  return "baton/" + c.election() + "/lease";
}

std::int64_t ns(std::chrono::milliseconds d) {
  return std::chrono::nanoseconds(d).count();
}

// The old app's last work came before the new one's first; a token that rose.
void expect_clean_handover(fault_cluster& c, const etcd_cluster& etcd, const interval& old_leader,
                           std::int64_t inject) {
  event_log log(c.events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s)) << "no new term\n"
                                                         << c.logs() << etcd.log_tails();
  const auto next = first_started_after(log, inject);
  const auto old = interval_of(log, old_leader.pid);
  ASSERT_TRUE(old);
  EXPECT_LT(old->end_ns, next->start_ns) << c.logs();
  EXPECT_GT(token_value(*next), token_value(old_leader)) << "the token did not rise\n" << c.logs();
}

// A host crash of the leader: its daemon's group SIGKILLed (the app dies
// with it). The standby takes over when etcd expires the lease: no sooner
// than one ttl after the last keepalive etcd heard.
TEST(etcd_daemon_faults, leader_daemon_sigkill_takeover_after_expiry) {
  etcd_cluster etcd;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_etcd(etcd));
    c.start_node(2, on_etcd(etcd));
    auto leader = single_leader(c, etcd);
    ASSERT_TRUE(leader);
    const int l = fault_cluster::index_of(*leader);

    const std::int64_t inject = mono_now_ns();
    ASSERT_TRUE(c.node(l).signal_group(SIGKILL));
    expect_clean_handover(c, etcd, *leader, inject);
    const auto next = first_started_after(c.log(), inject);
    ASSERT_TRUE(next);
    EXPECT_GE(next->start_ns, inject + ns(ttl - renew_interval - 100ms))
        << "a standby started before the dead leader's etcd lease could expire\n"
        << c.logs();
    std::printf("daemon SIGKILL round %d: next term %.0f ms after the kill, token %llu -> %s\n",
                round, ms_between(inject, next->start_ns),
                static_cast<unsigned long long>(token_value(*leader)), next->token.c_str());

    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "etcd: leader's daemon group SIGKILL (host crash)", inject,
                              leader->pid, overlaps));
  }
}

// A wedged daemon (SIGSTOP of the daemon alone, its app left running past
// the ttl): the keeper stops the app at the lease deadline, which comes
// before etcd can expire the lease; the standby starts only after that.
TEST(etcd_daemon_faults, leader_daemon_sigstop_past_ttl_app_stopped_by_keeper) {
  etcd_cluster etcd;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_etcd(etcd));
    c.start_node(2, on_etcd(etcd));
    auto leader = single_leader(c, etcd);
    ASSERT_TRUE(leader);
    const int l = fault_cluster::index_of(*leader);
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    c.freeze_process(c.node(l).pid());
    const auto gone = app.wait(ttl + 3s);
    ASSERT_TRUE(gone) << "the wedged daemon's app was never stopped\n" << c.logs();
    EXPECT_LE(*gone, inject + ns(ttl)) << "the app worked past its lease deadline\n" << c.logs();
    EXPECT_NE(c.log_of(l).find("lease deadline passed"), std::string::npos) << c.log_of(l);
    expect_clean_handover(c, etcd, *leader, inject);
    c.thaw_all();

    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "etcd: leader's daemon SIGSTOP > ttl, app left running", inject,
                              leader->pid, overlaps));
  }
}

// The member that leads raft dies (SIGKILL) or freezes (SIGSTOP, 3 s) under
// a baton leader: the other two elect a leader within an election timeout,
// and baton's calls move on to them. The leader keeps its term or, at worst,
// hands over without overlap.
void member_fault_round(etcd_cluster& etcd, int round, bool freeze) {
  fault_cluster c(round_name(round), ttl, false);
  c.start_node(1, on_etcd(etcd));
  c.start_node(2, on_etcd(etcd));
  auto leader = single_leader(c, etcd);
  ASSERT_TRUE(leader);
  exit_watch app(leader->pid);
  const auto raft_leader = etcd.wait_for_leader();
  ASSERT_TRUE(raft_leader) << etcd.log_tails();
  etcd_server& member = etcd.member(*raft_leader);

  const std::int64_t inject = mono_now_ns();
  if (freeze) {
    member.freeze();
    hold_fault_until(inject + ns(3s));
    member.thaw();
  } else {
    member.stop();
  }
  const bool kept = !app.wait(2 * ttl);
  if (!kept) expect_clean_handover(c, etcd, *leader, inject);
  const auto next = first_started_after(c.log(), inject);
  std::printf(
      "etcd leader member %s round %d: baton's leader %s%s\n", freeze ? "SIGSTOP 3 s" : "SIGKILL",
      round, kept ? "kept its term" : "handed over",
      next ? (", next term after " + std::to_string(ms_between(inject, next->start_ns)) + " ms")
                 .c_str()
           : "");
  if (!freeze) member.start();

  const auto overlaps = check_no_overlap(c);
  auto record = round_record(
      c,
      freeze ? "etcd: the raft leader member SIGSTOP 3 s" : "etcd: the raft leader member SIGKILL",
      inject, leader->pid, overlaps);
  record.kept_working = kept;
  record_fault(record);
}

TEST(etcd_daemon_faults, raft_leader_member_killed_baton_leads_on) {
  etcd_cluster etcd;
  for (int round = 1; round <= etcd_rounds; ++round) member_fault_round(etcd, round, false);
}

TEST(etcd_daemon_faults, raft_leader_member_frozen_baton_leads_on) {
  etcd_cluster etcd;
  for (int round = 1; round <= etcd_rounds; ++round) member_fault_round(etcd, round, true);
}

// Two of three members frozen for two ttls: no quorum, so neither a
// keepalive nor a linearizable read succeeds. The leader stops its app at
// its renew deadline (before one ttl), and nobody leads until the quorum is
// back.
TEST(etcd_daemon_faults, quorum_lost_past_ttl_leader_stops_nobody_leads_until_back) {
  etcd_cluster etcd;
  for (int round = 1; round <= etcd_rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_etcd(etcd));
    c.start_node(2, on_etcd(etcd));
    auto leader = single_leader(c, etcd);
    ASSERT_TRUE(leader);
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    etcd.member(round % 3).freeze();
    etcd.member((round + 1) % 3).freeze();
    const auto gone = app.wait(ttl + 1s);
    hold_fault_until(inject + ns(2 * ttl + 500ms));
    const std::int64_t back = mono_now_ns();
    etcd.member(round % 3).thaw();
    etcd.member((round + 1) % 3).thaw();
    ASSERT_TRUE(gone) << "the app outlived the quorum\n" << c.logs();
    EXPECT_LE(*gone, inject + ns(ttl)) << c.logs();

    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s))
        << "no leader after the quorum came back\n"
        << c.logs() << etcd.log_tails();
    const auto next = first_started_after(log, inject);
    EXPECT_GT(next->start_ns, back) << "someone led without a quorum\n" << c.logs();
    std::printf(
        "quorum lost round %d: app stopped %.0f ms after the freeze; quorum back at %.0f "
        "ms, next term at %.0f ms\n",
        round, ms_between(inject, *gone), ms_between(inject, back),
        ms_between(inject, next->start_ns));

    const auto overlaps = check_no_overlap(c);
    auto record = round_record(c, "etcd: quorum lost (2 of 3 members SIGSTOP) 2 x ttl + 0.5 s",
                               inject, leader->pid, overlaps);
    record.gone_after_end_ms = ms_between(back, next->start_ns);
    record_fault(record);
  }
}

// An operator deletes the lease key under a leader (`etcdctl del`): the etcd
// lease lives on, so the leader learns it at its next renewal (the read
// after the keepalive) and stops its app; no standby may start before that.
TEST(etcd_daemon_faults, operators_delete_of_the_lease_key_no_overlap) {
  etcd_cluster etcd;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_etcd(etcd));
    c.start_node(2, on_etcd(etcd));
    auto leader = single_leader(c, etcd);
    ASSERT_TRUE(leader);
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    etcd.etcdctl("del " + lease_key(c));
    const auto gone = app.wait(ttl + 1s);
    ASSERT_TRUE(gone) << "the leader's app outlived its deleted key\n" << c.logs();
    expect_clean_handover(c, etcd, *leader, inject);
    const auto next = first_started_after(c.log(), inject);
    std::printf("operator's del round %d: old app gone %.0f ms after, next term %.0f ms after\n",
                round, ms_between(inject, *gone), next ? ms_between(inject, next->start_ns) : -1.0);

    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "etcd: an operator's `etcdctl del` of the lease key", inject,
                              leader->pid, overlaps));
  }
}

}  // namespace
}  // namespace baton::testing
