// Faults of the sentinel store (1 master + 1 replica + 3 sentinels, started
// per round by tests/support/servers/redis_sentinel_group.hpp) while a leader works:
// the master killed (replica acknowledgement off and all), a failover right
// after a grant that never reached the replica, a graceful failover
// (SENTINEL FAILOVER), every sentinel unreachable at start, a sentinel that
// names a replica as the master, and with replica_ack all the only replica
// dead (no leader, no token spent). The partition that leaves the old master
// alive is in sentinel_partition_faults_test.cpp. The event log proves that
// no two apps worked at once; the records give the time to the next start.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenario.hpp"
#include "support/servers/redis_sentinel_group.hpp"
#include "support/test_pki.hpp"

namespace baton::testing::sentinel_faults_test {
namespace {

constexpr auto ttl = 2000ms;

// A group whose sentinels call the master down after 1 s, with the
// election's counter seeded on the master (a fresh store would otherwise
// hold the first start back for a ttl).
class group {
 public:
  explicit group(const std::string& election, int sentinels = 3)
      : group(election, options(sentinels)) {}
  group(const std::string& election, redis_sentinel_group_options o)
      : election_(election), g_(std::move(o)) {
    g_.command(g_.initial_master_port(),
               {"SET", "baton:{" + election_ + "}:token", "1", "NX"});
  }

  static redis_sentinel_group_options options(int sentinels) {
    redis_sentinel_group_options o;
    o.sentinels = sentinels;
    o.quorum = sentinels >= 2 ? 2 : 1;
    o.down_after = 1000ms;
    return o;
  }

  redis_sentinel_group& operator*() { return g_; }
  redis_sentinel_group* operator->() { return &g_; }

  std::string sentinel_urls(const std::vector<std::string>& before = {}) const {
    std::string out;
    for (const auto& u : before) out += (out.empty() ? "" : ",") + u;
    for (const auto& u : g_.sentinel_urls()) out += (out.empty() ? "" : ",") + u;
    return out;
  }

  // A candidate of the sentinel kind; `ack` is redis.replica_ack.
  node_options node(const std::string& ack = "off", const std::vector<std::string>& extra_sentinels = {}) const {
    node_options o;
    o.redis_url = "redis://127.0.0.1:" + std::to_string(g_.initial_master_port());  // unused
    o.baton_args = {"--store-kind",           "sentinel",
                    "--sentinel-addresses",   sentinel_urls(extra_sentinels),
                    "--sentinel-master-name", g_.master_name(),
                    "--redis-replica-ack",    ack};
    return o;
  }

  // The lease key's value on the current master ("" = none or no answer).
  std::string lease_value() {
    try {
      const auto reply = g_.command(g_.master_port(), {"GET", "baton:{" + election_ + "}:lease"});
      return reply.empty() ? "" : reply.front();
    } catch (const std::exception&) {
      return {};
    }
  }

 private:
  std::string election_;
  redis_sentinel_group g_;
};

// What a candidate logs when redis.replica_ack all refuses a grant because
// the master lacks its replica.
const std::string no_replica_line = "0 of the 1 replicas redis.replica_ack all requires";

// The tokens in every "standing by: X leads with token N" line of `logs`.
std::vector<std::string> announced_tokens(const std::string& logs) {
  std::vector<std::string> out;
  const std::string marker = " leads with token ";
  for (auto at = logs.find(marker); at != std::string::npos; at = logs.find(marker, at + 1)) {
    const auto begin = at + marker.size();
    out.push_back(logs.substr(begin, logs.find_first_not_of("0123456789", begin) - begin));
  }
  return out;
}

// Waits until the master on `port` lists no replica.
void wait_until_no_replica(group& g, unsigned short port) {
  ASSERT_TRUE(wait_until(
      [&] {
        const auto info = g->command(port, {"INFO", "replication"});
        return !info.empty() && info.front().find("connected_slaves:0") != std::string::npos;
      },
      10s, 50ms))
      << "the master still lists its killed replica\n"
      << g->log_tails();
}

// Kills the master under `leader`, waits for the failover and then until
// someone works after it: the old leader renewing on the new master (its
// lease had replicated), or a new start. With replica_ack all the promoted
// replica has no replica of its own, so first nobody may lead (the old
// leader's renewals are refused there, every candidate's grants too) until
// the old master is back, as the new master's replica. Returns the kill's
// time.
std::int64_t kill_master_until_someone_works(fault_cluster& c, group& g, const interval& leader,
                                             bool ack_all = false) {
  const std::int64_t inject = mono_now_ns();
  const auto old_master = g->kill_master();
  g->wait_for_failover(old_master, 30s);
  if (ack_all) {
    EXPECT_TRUE(wait_until(
        [&] { return c.logs().find(no_replica_line) != std::string::npos; }, 20s, 50ms))
        << "no candidate said why nobody leads on the promoted replica\n"
        << c.logs();
    hold_fault_until(mono_now_ns() + std::chrono::nanoseconds(ttl).count());
    EXPECT_FALSE(first_started_after(c.log(), inject))
        << "a leader started on a master without a replica\n"
        << c.logs();
    g->restart_node(old_master, redis_sentinel_group::restart_role::replica_of_current_master);
  }
  event_log log(c.events());
  EXPECT_TRUE(wait_for(
      log,
      [&](const event_log& x) {
        if (auto next = first_started_after(x, inject); next && next->ticks > 0) return true;
        auto old = interval_of(x, leader.pid);
        return old && !old->ended && old->ticks > leader.ticks + 10;
      },
      30s))
      << "nobody works after the failover\n"
      << c.logs() << g->log_tails();
  return inject;
}

// The master SIGKILLed while a leader works: sentinels promote the replica
// (which has the lease: the kill comes after the replication link settled),
// the old leader's renewals fail over there too. Whoever leads after, never
// two at once, and someone leads again within a bound.
void master_killed(const std::string& ack, const std::string& kind) {
  for (int round = 1; round <= 2; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    group g(c.election());
    c.start_node(1, g.node(ack));
    c.start_node(2, g.node(ack));
    const auto leader = single_worker(c);
    ASSERT_GT(leader.pid, 0);

    const auto inject = kill_master_until_someone_works(c, g, leader, ack == "all");
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, kind, inject, leader.pid, overlaps));
  }
}

TEST(sentinel_faults, master_killed_while_a_leader_works_ack_off) {
  master_killed("off", "sentinel: master SIGKILLed, replica_ack off");
}

TEST(sentinel_faults, master_killed_while_a_leader_works_ack_all) {
  master_killed("all",
                "sentinel: master SIGKILLed, replica_ack all (no leader until the old master is "
                "back as a replica)");
}

// The grant never reaches the replica: the replica is frozen while node 1
// acquires, then the master dies and the replica, thawed, is promoted
// without the lease. Node 1 works on until its renewals fail; node 2 must
// not start before node 1 has stopped: the new master holds acquisitions
// back for one ttl (the record names the old master's run_id).
TEST(sentinel_faults, failover_right_after_a_grant_the_replica_never_got) {
  for (int round = 1; round <= 2; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    group g(c.election());
    const auto replica = g->data_ports().at(1);
    c.freeze_process(g->node(replica).pid());
    c.start_node(1, g.node());
    const auto leader = single_worker(c);
    ASSERT_GT(leader.pid, 0);
    c.start_node(2, g.node());

    const std::int64_t inject = mono_now_ns();
    const auto old_master = g->kill_master();
    c.thaw_all();
    const auto new_master = g->wait_for_failover(old_master, 30s);
    ASSERT_EQ(new_master, replica);
    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, inject, 30s))
        << "no new leader after the failover\n"
        << c.logs() << g->log_tails();
    log.refresh();
    const auto old = interval_of(log, leader.pid);
    ASSERT_TRUE(old && old->ended) << "the old leader's app never stopped\n" << c.logs();
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "sentinel: failover after a grant the replica never got", inject,
                              leader.pid, overlaps));
    const auto next = first_started_after(log, inject);
    EXPECT_GT(token_value(*next), token_value(leader)) << c.logs();
    EXPECT_NE(c.logs().find("failover"), std::string::npos)
        << "no candidate logged the failover as a reset\n"
        << c.logs();
  }
}

// --- a failover with every grant and renewal on every replica ---------------
//
// With replica_ack all and two replicas, the master SIGKILLed under a leader:
// Sentinel promotes a replica that followed the master live and acknowledged
// every grant and renewal, so it has the lease and its token, and keeps the
// other replica (all counts one fewer after the switch). Nothing is held
// back: the leader keeps working when the switch is shorter than its renew
// deadline, and otherwise a standby starts once the lease has ended and it
// has heard of the switch, not one ttl after the switch. With off, the same
// switch still holds every acquisition back for one ttl.

// Sentinel's down-after as in the measurement (2 s), two replicas.
redis_sentinel_group_options two_replicas() {
  auto o = group::options(3);
  o.replicas = 2;
  o.down_after = 2000ms;
  return o;
}

// Waits until every data node other than the master has run for `d`: the
// switch check trusts a promoted replica only when it ran since one ttl
// before the last grant or renewal.
void wait_until_replicas_ran(group& g, std::chrono::milliseconds d) {
  const auto master = g->master_port();
  ASSERT_TRUE(wait_until(
      [&] {
        for (auto port : g->data_ports()) {
          if (port == master) continue;
          const auto info = g->command(port, {"INFO", "server"});
          const auto at = info.empty() ? std::string::npos : info.front().find("uptime_in_seconds:");
          if (at == std::string::npos) return false;
          if (std::stoll(info.front().substr(at + 18)) * 1000 < d.count()) return false;
        }
        return true;
      },
      d + 20s, 200ms))
      << g->log_tails();
}

// One round: three candidates with `ack`, the master SIGKILLed under the
// leader once the replicas have run for a ttl and a renewal since. Returns
// the kill's and the failover's times (the test saw the new master), or
// nullopt after a failure.
struct killed_round {
  interval leader;
  std::int64_t inject = 0;
  std::int64_t failover = 0;
};
std::optional<killed_round> kill_master_under_a_leader(
    fault_cluster& c, group& g, const std::string& ack,
    const std::vector<std::string>& baton_args = {}) {
  for (int i = 1; i <= 3; ++i) {
    auto o = g.node(ack);
    o.baton_args.insert(o.baton_args.end(), baton_args.begin(), baton_args.end());
    c.start_node(i, o);
  }
  killed_round r;
  r.leader = single_worker(c);
  if (r.leader.pid <= 0) return std::nullopt;
  wait_until_replicas_ran(g, c.ttl() + c.ttl() / 3 + 1s);
  r.inject = mono_now_ns();
  const auto old_master = g->kill_master();
  g->wait_for_failover(old_master, 30s);
  r.failover = mono_now_ns();
  return r;
}

TEST(sentinel_faults, with_ack_all_the_leader_keeps_working_through_a_failover) {
  // A renew deadline that outlasts the switch (down-after 2 s, the vote, the
  // promotion, the other replica following the new master) wherever in the
  // renewal period the kill lands, even when the first vote splits on a
  // loaded machine and the sentinels try again after 2 x failover-timeout:
  // 11 s, renewals every 500 ms, failover-timeout 2 s.
  constexpr auto long_ttl = 12000ms;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), long_ttl, false);
    auto o = two_replicas();
    o.failover_timeout = 2000ms;
    group g(c.election(), o);
    const auto r = kill_master_under_a_leader(
        c, g, "all", {"--renew-interval", "500ms", "--renew-deadline", "11s"});
    ASSERT_TRUE(r);
    // Past the renew deadline of the last renewal on the old master: only
    // renewals on the promoted one keep the leader working now.
    event_log log(c.events());
    const auto past_deadline = r->failover + std::chrono::nanoseconds(long_ttl).count();
    EXPECT_TRUE(wait_for(
        log,
        [&](const event_log& x) {
          const auto old = interval_of(x, r->leader.pid);
          return (old && old->ended) || (mono_now_ns() > past_deadline && old &&
                                         old->end_ns > past_deadline);
        },
        long_ttl + 20s));
    log.refresh();
    const auto old = interval_of(log, r->leader.pid);
    ASSERT_TRUE(old);
    EXPECT_FALSE(old->ended) << "the leader stopped through a failover it could renew across\n"
                             << c.logs();
    EXPECT_FALSE(first_started_after(log, r->inject)) << "another app started\n" << c.logs();
    EXPECT_EQ(c.logs().find("lost its data or failed over"), std::string::npos)
        << "a candidate held back after the promotion\n"
        << c.logs();
    const auto overlaps = check_no_overlap(c);
    auto record = round_record(c, "sentinel: master SIGKILLed, replica_ack all, 2 replicas, ttl 12 s",
                               r->inject, std::nullopt, overlaps);
    record.kept_working = !old->ended;
    record_fault(record);
  }
}

// The new term after the kill: its start, the old leader's last work, and
// the leaderless time between them, checked against what `held_back` means.
void takeover_after_the_kill(const std::string& ack, bool held_back, const std::string& kind) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), 3000ms, false);
    group g(c.election(), two_replicas());
    const auto r = kill_master_under_a_leader(c, g, ack);
    ASSERT_TRUE(r);
    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, r->inject, 30s))
        << "no new leader after the failover\n"
        << c.logs() << g->log_tails();
    log.refresh();
    const auto old = interval_of(log, r->leader.pid);
    const auto next = first_started_after(log, r->inject);
    ASSERT_TRUE(old && next);
    const auto logs = c.logs();
    const double after_switch = ms_between(r->failover, next->start_ns);
    if (held_back) {
      EXPECT_GE(after_switch, static_cast<double>(c.ttl().count()) - 500)
          << "the failover was not held back\n"
          << logs;
      EXPECT_NE(logs.find("lost its data or failed over"), std::string::npos) << logs;
    } else {
      // No hold-back at all. When the standby starts after the switch
      // depends on when it hears of it (the sentinels' answers, its retry
      // back-off after the failed attempts on the dead master, capped at one
      // ttl), so the time is reported, not bounded tightly.
      EXPECT_EQ(logs.find("lost its data or failed over"), std::string::npos)
          << "a candidate held back after the promotion\n"
          << logs;
      EXPECT_EQ(logs.find("held back"), std::string::npos) << logs;
      const auto ttl_ns = std::chrono::nanoseconds(c.ttl()).count();
      const auto free_ns = std::max(r->failover, old->end_ns + ttl_ns / 3);
      EXPECT_LT(ms_between(free_ns, next->start_ns), static_cast<double>(c.ttl().count()) + 1000)
          << logs;
    }
    EXPECT_GT(token_value(*next), token_value(r->leader)) << c.logs();
    std::printf("[ leaderless ] %s round %d: %.0f ms (old app's last work %.0f ms after the kill, "
                "switch seen at %.0f, new start %.0f)\n",
                kind.c_str(), round, ms_between(old->end_ns, next->start_ns),
                ms_between(r->inject, old->end_ns), ms_between(r->inject, r->failover),
                ms_between(r->inject, next->start_ns));
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, kind, r->inject, r->leader.pid, overlaps));
  }
}

TEST(sentinel_faults, with_ack_all_a_standby_takes_over_when_the_lease_ends) {
  takeover_after_the_kill("all", false,
                          "sentinel: master SIGKILLed, replica_ack all, 2 replicas, ttl 3 s");
}

TEST(sentinel_faults, with_ack_off_the_same_failover_is_held_back_one_ttl) {
  takeover_after_the_kill("off", true,
                          "sentinel: master SIGKILLed, replica_ack off, 2 replicas, ttl 3 s");
}

// With acknowledgement from every replica, a grant the replica cannot
// acknowledge is given back: while the replica is frozen nobody leads.
TEST(sentinel_faults, with_ack_all_a_frozen_replica_means_no_leader_not_an_unreplicated_one) {
  fault_cluster c(round_name(1), ttl, false);
  group g(c.election());
  const auto replica = g->data_ports().at(1);
  c.freeze_process(g->node(replica).pid());
  c.start_node(1, g.node("all"));
  const std::int64_t inject = mono_now_ns();
  // Two ttls of attempts: each grant is released after WAIT times out.
  ASSERT_TRUE(wait_until(
      [&] { return c.log_of(1).find("acquire not acknowledged") != std::string::npos; }, 10s,
      50ms))
      << c.logs();
  hold_fault_until(inject + std::chrono::nanoseconds(ttl).count());
  EXPECT_EQ(c.log().start_count(), 0u) << "an app started on a grant no replica had\n" << c.logs();
  EXPECT_EQ(g.lease_value(), "") << "a grant no replica acknowledged was left in place";
  c.thaw_all();
  single_worker(c);
  const auto overlaps = check_no_overlap(c);
  auto record = round_record(c, "sentinel: replica frozen, replica_ack all", inject, std::nullopt,
                             overlaps);
  record_fault(record);
}

// replica_ack all never counts "no replica connected" as all of them. The
// only replica dies before any candidate ever ran (round 1: nothing in the
// record remembers it), or under a working leader (round 2): nobody leads,
// no grant spends a token, every candidate says why, and no standby
// announces a leader that is not one. Once the replica is back, one leads.
TEST(sentinel_faults, with_ack_all_a_dead_replica_means_no_leader_and_no_token_spent) {
  for (int round = 1; round <= 2; ++round) {
    const bool before_start = round == 1;
    fault_cluster c(round_name(round), ttl, false);
    group g(c.election());
    const auto master = g->initial_master_port();
    const auto replica = g->data_ports().at(1);
    const std::string token_key = "baton:{" + c.election() + "}:token";
    std::optional<interval> leader;
    if (before_start) {
      g->kill_node(replica);
      wait_until_no_replica(g, master);
    }
    c.start_node(1, g.node("all"));
    c.start_node(2, g.node("all"));
    if (!before_start) {
      leader = single_worker(c);
      ASSERT_GT(leader->pid, 0);
    }
    const auto token_before = g->command(master, {"GET", token_key});
    const std::int64_t inject = mono_now_ns();
    if (!before_start) {
      g->kill_node(replica);
      // The leader's renewals are refused: its app stops at the renew deadline.
      event_log log(c.events());
      EXPECT_TRUE(wait_for(
          log,
          [&](const event_log& x) {
            auto old = interval_of(x, leader->pid);
            return old && old->ended;
          },
          10s))
          << "the leader worked on without its replica\n"
          << c.logs();
    }
    EXPECT_TRUE(wait_until(
        [&] {
          return c.log_of(1).find(no_replica_line) != std::string::npos &&
                 c.log_of(2).find(no_replica_line) != std::string::npos;
        },
        15s, 50ms))
        << "a candidate did not say why nobody leads\n"
        << c.logs();
    // Two ttls of attempts by both candidates.
    hold_fault_until(mono_now_ns() + 2 * std::chrono::nanoseconds(ttl).count());
    EXPECT_FALSE(first_started_after(c.log(), inject))
        << "a leader started with no replica to acknowledge it\n"
        << c.logs();
    EXPECT_EQ(g->command(master, {"GET", token_key}), token_before)
        << "a grant nobody could lead with spent a token\n"
        << c.logs();
    // Standbys announce only the one real term (round 2), never a refused grant.
    for (const auto& token : announced_tokens(c.logs())) {
      EXPECT_TRUE(leader && token == leader->token)
          << "a standby announced a leader with token " << token << "\n"
          << c.logs();
    }
    for (int i = 1; i <= 2; ++i) {
      const auto status = c.status(i);
      ASSERT_TRUE(status) << c.logs();
      EXPECT_NE((*status)["leader"], fault_cluster::name_of(i))
          << "a refused grant shown as this node leading\n"
          << status->dump();
    }
    g->restart_node(replica, redis_sentinel_group::restart_role::replica_of_current_master);
    single_worker(c);
    const auto overlaps = check_no_overlap(c);
    auto record = round_record(c,
                               before_start ? "sentinel: replica dead before the candidates start, "
                                              "replica_ack all (no leader until it is back)"
                                            : "sentinel: replica killed under the leader, "
                                              "replica_ack all (no leader until it is back)",
                               inject, leader ? std::optional<pid_t>(leader->pid) : std::nullopt,
                               overlaps);
    record_fault(record);
  }
}

// SENTINEL FAILOVER: the master is demoted while it lives. Its leader's lease
// replicated, so the leader may keep leading on the new master, or lose it
// and another start after the hold-back; never two at once.
TEST(sentinel_faults, graceful_failover_while_a_leader_works) {
  fault_cluster c(round_name(1), ttl, false);
  group g(c.election());
  c.start_node(1, g.node());
  c.start_node(2, g.node());
  const auto leader = single_worker(c);
  ASSERT_GT(leader.pid, 0);
  const std::int64_t inject = mono_now_ns();
  const auto old_master = g->master_port();
  g->sentinel(0).command({"SENTINEL", "FAILOVER", g->master_name()});
  g->wait_for_failover(old_master, 30s);
  // Two ttls after the switch, someone works, and it was never two.
  hold_fault_until(mono_now_ns() + std::chrono::nanoseconds(2 * ttl).count());
  const auto after = single_worker(c, 20s);
  const auto overlaps = check_no_overlap(c);
  auto record =
      round_record(c, "sentinel: SENTINEL FAILOVER (graceful)", inject, leader.pid, overlaps);
  if (after.pid == leader.pid) {
    // Its lease had replicated: the leader renewed on the new master.
    record.kept_working = true;
    record.stopped_ms.reset();
  }
  record_fault(record);
}

// No sentinel answers at start: nobody leads, and each daemon says why;
// once the sentinels are back, one leads.
TEST(sentinel_faults, sentinels_unreachable_at_start_then_back) {
  fault_cluster c(round_name(1), ttl, false);
  group g(c.election());
  g->kill_all_sentinels();
  c.start_node(1, g.node());
  c.start_node(2, g.node());
  ASSERT_TRUE(wait_until(
      [&] { return c.log_of(1).find("no sentinel named the master") != std::string::npos; }, 10s,
      50ms))
      << c.logs();
  EXPECT_EQ(c.log().start_count(), 0u) << c.logs();
  const std::int64_t inject = mono_now_ns();
  g->start_all_sentinels();
  single_worker(c, 20s);
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, "sentinel: every sentinel down at start, then back", inject,
                            std::nullopt, overlaps));
}

// A lone sentinel, listed first, names the replica as the master (it
// monitors the replica's address under the same name). ROLE shows it is a
// replica; the daemon says so and finds the master through the others.
TEST(sentinel_faults, a_sentinel_that_names_a_replica_is_not_believed) {
  fault_cluster c(round_name(1), ttl, false);
  group g(c.election());
  const auto replica = g->data_ports().at(1);
  redis_sentinel rogue({"sentinel monitor " + g->master_name() + " 127.0.0.1 " +
                        std::to_string(replica) + " 1"});
  c.start_node(1, g.node("off", {rogue.url()}));
  const auto leader = single_worker(c, 20s);
  ASSERT_GT(leader.pid, 0);
  EXPECT_NE(c.log_of(1).find("is a replica, not a master"), std::string::npos) << c.logs();
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, "sentinel: one sentinel names a replica", mono_now_ns(),
                            std::nullopt, overlaps));
}

// Sentinels and data nodes that speak TLS only to baton: the sentinels
// demand a client certificate, the data nodes do not. The candidates name
// rediss:// sentinels, give them a client certificate of their own
// (sentinel.tls_cert_file / tls_key_file) and trust the CA through
// redis.tls_ca_file, which the sentinels inherit. They find the master over
// TLS, lead, and follow a failover when the master is killed. A third
// candidate without that certificate never leads and names the option.
TEST(sentinel_faults, tls_sentinels_master_killed_while_a_leader_works) {
  const test_pki pki;
  auto o = group::options(3);
  o.tls.cert_file = pki.server().cert;
  o.tls.key_file = pki.server().key;
  o.tls.ca_file = pki.ca_file();
  o.tls.client_cert_file = pki.client().cert;
  o.tls.client_key_file = pki.client().key;
  o.tls.sentinels_demand_client_certs = true;
  fault_cluster c(round_name(1), ttl, false);
  group g(c.election(), o);
  auto node = g.node("all");
  node.baton_args.insert(node.baton_args.end(), {"--redis-tls-ca-file", pki.ca_file()});
  // Without a certificate of its own a candidate is refused by every
  // sentinel, and says which option to set.
  c.start_node(3, node);
  node.baton_args.insert(node.baton_args.end(),
                         {"--sentinel-tls-cert-file", pki.client().cert, "--sentinel-tls-key-file",
                          pki.client().key});
  c.start_node(1, node);
  c.start_node(2, node);
  ASSERT_TRUE(wait_until(
      [&] {
        return c.log_of(3).find("demands a client certificate") != std::string::npos;
      },
      10s, 50ms))
      << c.logs();
  EXPECT_NE(c.log_of(3).find("set sentinel.tls_cert_file and sentinel.tls_key_file"),
            std::string::npos)
      << c.log_of(3);
  const auto leader = single_worker(c);
  ASSERT_GT(leader.pid, 0);
  const int l = fault_cluster::index_of(leader);
  const auto status = c.status(l);
  ASSERT_TRUE(status) << c.logs();
  const auto endpoint = (*status)["store"].value("endpoint", std::string());
  EXPECT_NE(endpoint.find(std::to_string(g->master_port())), std::string::npos)
      << "the leader did not reach the master's TLS port\n"
      << status->dump();

  const auto inject = kill_master_until_someone_works(c, g, leader, true);
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, "sentinel (TLS): master SIGKILLed, replica_ack all", inject,
                            leader.pid, overlaps));
}

}  // namespace
}  // namespace baton::testing::sentinel_faults_test
