// Faults of an etcd cluster under baton daemons on the etcd store (store.kind
// etcd), a cluster of three etcd members on loopback (50 ms heartbeats, 500
// ms election timeout): the member that leads raft killed or frozen, the
// quorum lost for longer than the ttl, and (in a private network namespace)
// the member the leader talks to cut off from the other two; on one member,
// an older snapshot restored under a leader. Every round is a fresh election
// on the scenario's cluster (the restores: three under one election),
// checked by the workers' event log for overlaps. The leader's daemon killed
// or frozen past its ttl, and an operator's delete of the lease key, are
// scenarios of every store kind (crash_scenarios_test.cpp,
// lease_loss_scenarios_test.cpp).
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <set>
#include <thread>

#include "scenario.hpp"
#include "support/private_network.hpp"
#include "support/servers/etcd_cluster.hpp"

namespace baton::testing::etcd_daemon_faults_test {
namespace {

constexpr auto ttl = 2000ms;
// Rounds of the member and quorum faults, which take longest.
constexpr int etcd_rounds = 2;

node_options on_endpoints(const std::string& endpoints) {
  // The cluster's Redis flag is given but unused: the store kind decides.
  node_options o = via_redis_url("redis://127.0.0.1:1");
  o.baton_args = {"--store-kind", "etcd", "--etcd-endpoints", endpoints};
  return o;
}

node_options on_etcd(const etcd_cluster& etcd) {
  return on_endpoints(etcd.endpoints());
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
  // Thawed, the old raft leader may revoke the lease the holder kept alive
  // at the new one (etcd-io/etcd#15247): the standby then waits out the
  // holder's lease deadline (etcd_store's take()).
  if (!kept) expect_clean_handover(c, etcd, *leader, inject);
  const auto next = first_started_after(c.log(), inject);
  const int standby = fault_cluster::index_of(*leader) == 1 ? 2 : 1;
  const bool waited_out = c.log_of(standby).find("may have revoked it early") != std::string::npos;
  std::printf(
      "etcd leader member %s round %d: baton's leader %s%s%s\n", freeze ? "SIGSTOP 3 s" : "SIGKILL",
      round, kept ? "kept its term" : "handed over",
      next ? (", next term after " + std::to_string(ms_between(inject, next->start_ns)) + " ms")
                 .c_str()
           : "",
      waited_out ? " (the standby waited out the holder's lease after a raft leader change)" : "");
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

// The member the leader's daemon talks to cut off from the other two (a
// private network namespace with iptables; every member runs as a uid of its
// own so that the rules can pick its traffic out: all of it comes from
// 127.0.0.1). The leader's daemon has that member alone as its endpoint, the
// standby the other two. The cut-off member still answers on its client
// port, but a keepalive it must forward to the raft leader, or a
// linearizable read (which needs the quorum's word, even on a raft leader
// cut off that has not stepped down yet and still renews leases itself),
// fails: the leader's app stops at its renew deadline. The majority expires
// the lease (a new raft leader first extends every lease by its ttl), and
// only then does the standby start. Odd rounds cut off the member leading
// raft, even rounds a follower.
TEST(etcd_daemon_partition_faults, the_leaders_member_cut_off_from_the_other_two) {
  constexpr int partition_rounds = 4;
  std::optional<private_network> network;
  if (const auto why = enter_private_network(network); !why.empty()) GTEST_SKIP() << why;
  const auto& net = *network;
  etcd_cluster etcd(3, 62001);
  for (int round = 1; round <= partition_rounds; ++round) {
    const auto raft_leader = etcd.wait_for_leader();
    ASSERT_TRUE(raft_leader) << etcd.log_tails();
    const bool cut_leader = round % 2 == 1;
    const int cut = cut_leader ? *raft_leader : (*raft_leader + 1) % etcd.size();
    std::string majority;
    for (int i = 0; i < etcd.size(); ++i) {
      if (i != cut) majority += (majority.empty() ? "" : ",") + etcd.member(i).client_url();
    }
    etcd_server& member = etcd.member(cut);

    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_endpoints(member.client_url()));
    auto leader = single_leader(c, etcd);
    ASSERT_TRUE(leader);
    c.start_node(2, on_endpoints(majority));
    // The standby is up and sees the term.
    ASSERT_TRUE(wait_until(
        [&] {
          auto st = c.status(2, 1s);
          return st && (*st)["leader"] == fault_cluster::name_of(1);
        },
        15s, 50ms))
        << c.logs();
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    const std::string uid = std::to_string(member.run_as());
    const std::string client = std::to_string(member.client_port());
    // A connection the member sends on, but for its answers to clients and
    // its gateway's calls to its own client port, is marked; every packet
    // of a marked connection is dropped, both ways (so the connections it
    // dialed to its peers carry nothing back either). And nothing reaches
    // its peer port. The mark is the round's: connections marked in an
    // earlier round outlive its rules, and some carry the majority's
    // traffic now.
    const std::string mark = std::to_string(round);
    net.must_iptables({"-A", "OUTPUT", "-p", "tcp", "-m", "owner", "--uid-owner", uid, "!",
                       "--sport", client, "!", "--dport", client, "-j", "CONNMARK", "--set-mark",
                       mark});
    net.must_iptables({"-A", "OUTPUT", "-m", "connmark", "--mark", mark, "-j", "DROP"});
    net.must_iptables(
        {"-A", "OUTPUT", "-p", "tcp", "--dport", std::to_string(member.peer_port()), "-j", "DROP"});

    const auto gone = app.wait(ttl + 2s);
    ASSERT_TRUE(gone) << "the app outlived its renewals\n" << c.logs();
    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s)) << "the standby never took over\n"
                                                           << c.logs() << etcd.log_tails();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    const auto next = first_started_after(log, inject);
    EXPECT_EQ(next->name, fault_cluster::name_of(2));
    EXPECT_LE(old->end_ns, inject + ns(ttl)) << c.logs();
    EXPECT_GT(next->start_ns, *gone) << c.logs();
    EXPECT_GT(token_value(*next), token_value(*leader)) << c.logs();
    std::printf(
        "partition round %d (%s cut off): app gone %.0f ms, next app %.0f ms after the cut, "
        "token %llu -> %s\n",
        round, cut_leader ? "the raft leader" : "a follower", ms_between(inject, *gone),
        ms_between(inject, next->start_ns), static_cast<unsigned long long>(token_value(*leader)),
        next->token.c_str());

    net.must_iptables({"-F", "OUTPUT"});
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c,
                              cut_leader ? "etcd: the leader's member (leading raft) cut off"
                                         : "etcd: the leader's member (a follower) cut off",
                              inject, leader->pid, overlaps));
    ASSERT_TRUE(member.wait_healthy()) << etcd.log_tails();
  }
}

// An older snapshot restored under a running leader (etcdctl snapshot
// restore of a one-member cluster, started again on the same ports: the
// revision goes back, the cluster id stays). The daemons find the revision
// gone back: one fences the election (a record offset at least the highest
// token it saw, a fence on a lease of one ttl), the leader's term is over
// and its app stops, and the next term, after the fence, has a token above
// every token a worker saw before. Three restores of the same snapshot,
// taken during the first term, under the same two daemons; before each, an
// operator's delete moves the election on to a term after the snapshot's.
// (A restore of a snapshot that holds the running term itself, with nothing
// of the election written since, takes nothing back: that term goes on.)
TEST(etcd_daemon_restore_faults, snapshot_restores_under_a_leader_never_repeat_a_token) {
  etcd_server etcd;
  fault_cluster c(round_name(1), ttl, false);
  c.start_node(1, on_endpoints(etcd.client_url()));
  c.start_node(2, on_endpoints(etcd.client_url()));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << etcd.log_tail();
  etcd.save_snapshot("old");
  for (int round = 1; round <= rounds; ++round) {
    // A term after the snapshot's, so that the workers see tokens above its
    // revision: an operator's delete ends the one running (as tested above).
    const std::int64_t deleted = mono_now_ns();
    etcd.etcdctl("del " + lease_key(c));
    {
      event_log log(c.events());
      ASSERT_TRUE(wait_for_new_term_after(log, deleted, 20s)) << c.logs();
      leader = first_started_after(log, deleted);
    }
    const std::int64_t inject = mono_now_ns();
    etcd.restore_snapshot("old");
    const double back_ms = ms_between(inject, mono_now_ns());
    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, inject, 30s)) << "no new term after the restore\n"
                                                           << c.logs() << etcd.log_tail();
    const auto next = first_started_after(log, inject);
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    EXPECT_LT(old->end_ns, next->start_ns) << c.logs();
    for (const auto& earlier : log.intervals()) {
      if (earlier.start_ns < next->start_ns) {
        EXPECT_GT(token_value(*next), token_value(earlier))
            << "a token at or below one a worker saw before the restore\n"
            << c.logs();
      }
    }
    std::printf(
        "snapshot restore round %d: the member back after %.0f ms; old app gone %.0f ms, next "
        "app %.0f ms after the restore began, token %llu -> %s\n",
        round, back_ms, ms_between(inject, old->end_ns), ms_between(inject, next->start_ns),
        static_cast<unsigned long long>(token_value(*leader)), next->token.c_str());

    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "etcd: an older snapshot restored under a leader", inject,
                              leader->pid, overlaps));
    leader = next;
  }
  // No token seen twice, over every term of the election.
  std::set<std::uint64_t> tokens;
  const auto all = c.log().intervals();
  for (const auto& i : all) tokens.insert(token_value(i));
  EXPECT_EQ(tokens.size(), all.size()) << c.logs();
}

// The leader's daemon group SIGKILLed (a host crash), on one member, with a
// 3 s ttl (an etcd lease of 3 s: the shortest a standby follows to its end,
// expiry_proof.hpp): the standby's time-to-live answers prove the lease
// expired, it revokes it rather than wait for etcd's 500 ms expiry check, and
// takes the next term. Its speed is the benchmark's (bench/run.py, crash);
// here: never a start before the dead leader's lease could end, a token that
// rose, no overlap, and the revoke path taken. etcd's own check comes first
// when it happens to fall within the ~20 ms between the expiry and the
// standby's revoke (about 1 crash in 25 at a random phase): so at least one
// of the rounds must have taken the revoke path. The record is made first,
// so that no fence's expiry (on etcd's check) sets the holder's phase.
TEST(etcd_daemon_tail_faults, a_crashed_leaders_expired_lease_is_revoked_by_the_standby) {
  constexpr auto tail_ttl = 3000ms;
  constexpr auto tail_renew_interval = 1000ms;  // the ttl's third, baton's default
  constexpr int tail_rounds = 3;
  etcd_server etcd;
  int revoked_rounds = 0;
  for (int round = 1; round <= tail_rounds; ++round) {
    fault_cluster c(round_name(round), tail_ttl, false);
    etcd.etcdctl("put baton/" + c.election() + "/record 0");
    c.start_node(1, on_endpoints(etcd.client_url()));
    c.start_node(2, on_endpoints(etcd.client_url()));
    std::string why;
    const auto leader = c.wait_for_single_worker(20s, &why);
    ASSERT_TRUE(leader) << why << "\n" << etcd.log_tail();
    const int l = fault_cluster::index_of(*leader);
    const int standby = l == 1 ? 2 : 1;
    // Past a renewal or two, at a phase that varies with the round.
    std::this_thread::sleep_for(std::chrono::milliseconds(1000 + 300 * round));
    const std::int64_t inject = mono_now_ns();
    ASSERT_TRUE(c.node(l).signal_group(SIGKILL));
    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s)) << "no takeover\n" << c.logs();
    const auto next = first_started_after(log, inject);
    EXPECT_EQ(fault_cluster::index_of(*next), standby);
    EXPECT_GT(token_value(*next), token_value(*leader)) << c.logs();
    EXPECT_GE(next->start_ns, inject + ns(tail_ttl - tail_renew_interval - 100ms))
        << "a standby started before the dead leader's last renewal could end\n"
        << c.logs();
    const bool revoked = c.log_of(standby).find("revoked the etcd lease of") != std::string::npos;
    if (revoked) ++revoked_rounds;
    std::printf("etcd crash round %d: next app %.0f ms after the kill, the expired lease %s\n",
                round, ms_between(inject, next->start_ns),
                revoked ? "revoked by the standby" : "ended by etcd's own check first");
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "etcd: the leader's daemon group SIGKILL, lease revoked", inject,
                              leader->pid, overlaps));
  }
  EXPECT_GE(revoked_rounds, 1) << "no standby revoked an expired lease in " << tail_rounds
                               << " crashes: they all waited for etcd's expiry check";
}

}  // namespace
}  // namespace baton::testing::etcd_daemon_faults_test
