// Faults of the sentinel store (1 master + 1 replica + 3 sentinels, started
// per round by tests/support/redis_sentinel_group.hpp) while a leader works:
// the master killed (replica acknowledgement off and all), a failover right
// after a grant that never reached the replica, a graceful failover
// (SENTINEL FAILOVER), every sentinel unreachable at start, and a sentinel
// that names a replica as the master; and a partition that leaves the old
// master alive with its leader, which only replica_ack all survives. The event log proves that no two apps
// worked at once; the records give the time to the next start.
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "scenario.hpp"
#include "support/fault_proxy.hpp"
#include "support/redis_sentinel_group.hpp"
#include "support/test_pki.hpp"

namespace baton::testing {
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

// Waits until one worker works, and returns it.
interval single_worker(fault_cluster& c, std::chrono::milliseconds within = 20s) {
  std::string why;
  auto w = c.wait_for_single_worker(within, &why);
  if (!w) ADD_FAILURE() << why << "\n" << c.logs();
  return w.value_or(interval{});
}

// Kills the master under `leader`, waits for the failover and then until
// someone works after it: the old leader renewing on the new master (its
// lease had replicated), or a new start. Returns the kill's time.
std::int64_t kill_master_until_someone_works(fault_cluster& c, group& g, const interval& leader) {
  const std::int64_t inject = mono_now_ns();
  const auto old_master = g->kill_master();
  g->wait_for_failover(old_master, 30s);
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

    const auto inject = kill_master_until_someone_works(c, g, leader);
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, kind, inject, leader.pid, overlaps));
  }
}

TEST(sentinel_faults, master_killed_while_a_leader_works_ack_off) {
  master_killed("off", "sentinel: master SIGKILLed, replica_ack off");
}

TEST(sentinel_faults, master_killed_while_a_leader_works_ack_all) {
  master_killed("all", "sentinel: master SIGKILLed, replica_ack all");
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
    ASSERT_TRUE(wait_for(
        log,
        [&](const event_log& x) {
          auto next = first_started_after(x, inject);
          return next && next->ticks > 0;
        },
        30s))
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

  const auto inject = kill_master_until_someone_works(c, g, leader);
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, "sentinel (TLS): master SIGKILLed, replica_ack all", inject,
                            leader.pid, overlaps));
}

// A partition: the old master lives on, reachable by its leader, but cut off
// from the sentinels and its replica, which the sentinels promote. Built
// from parts: the master sits behind two proxies; the replica and the three
// sentinels reach it through `majority` (reset to cut them off), and the
// leader through `minority`, as the redis kind with the same
// acknowledgement: a leader that reaches no sentinel either, the worst case
// (a sentinel of its own would reconfigure the promoted replica back under
// the old master). Node 2 follows the three sentinels.
class partition {
 public:
  explicit partition(const std::string& election)
      : master_(master_options()),
        majority_(master_.port()),
        minority_(master_.port()),
        replica_(replica_options(majority_.port())) {
    master_.command({"SET", "baton:{" + election + "}:token", "1", "NX"});
    for (int i = 0; i < 3; ++i) {
      sentinels_.push_back(std::make_unique<redis_sentinel>(std::vector<std::string>{
          "sentinel monitor baton-master 127.0.0.1 " + std::to_string(majority_.port()) + " 2",
          "sentinel down-after-milliseconds baton-master 1000",
          "sentinel failover-timeout baton-master 5000"}));
    }
    // Ready when the replica has synced, and each sentinel knows it and the
    // others.
    const bool ready = wait_until(
        [&] {
          try {
            const auto info = replica_.command({"INFO", "replication"});
            if (info.empty() || info.front().find("master_link_status:up") == std::string::npos) {
              return false;
            }
            for (const auto& s : sentinels_) {
              const auto master = s->command({"SENTINEL", "MASTER", "baton-master"});
              if (field(master, "num-slaves") != "1" || field(master, "num-other-sentinels") != "2") {
                return false;
              }
            }
            return true;
          } catch (const std::exception&) {
            return false;
          }
        },
        20s, 50ms);
    if (!ready) {
      throw std::runtime_error("the replica never synced, or the sentinels never saw it and each other");
    }
  }

  // Cuts the master off from the sentinels and the replica.
  void cut() { majority_.reset(); }

  node_options leader(const std::string& ack) const {
    node_options o;
    o.redis_url = minority_.url();
    o.baton_args = {"--redis-replica-ack", ack};
    return o;
  }
  node_options standby(const std::string& ack) const {
    std::string urls;
    for (const auto& s : sentinels_) urls += (urls.empty() ? "" : ",") + s->url();
    return options(urls, "baton-master", ack);
  }
  unsigned short replica_port() const { return replica_.port(); }
  std::string sentinel_master() const {
    const auto reply = sentinels_[0]->command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", "baton-master"});
    return reply.size() == 2 ? reply[1] : "";
  }

 private:
  // The master syncs its replica at once (Redis waits 5 s by default).
  static redis_server_options master_options() {
    redis_server_options o;
    o.extra_config = {"repl-diskless-sync-delay 0"};
    return o;
  }
  static redis_server_options replica_options(unsigned short via) {
    redis_server_options o;
    o.extra_config = {"replicaof 127.0.0.1 " + std::to_string(via)};
    return o;
  }
  static std::string field(const std::vector<std::string>& flat, const std::string& name) {
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
      if (flat[i] == name) return flat[i + 1];
    }
    return {};
  }
  node_options options(const std::string& sentinels, const std::string& name,
                       const std::string& ack) const {
    node_options o;
    o.redis_url = master_.url();  // unused by the sentinel kind
    o.baton_args = {"--store-kind", "sentinel", "--sentinel-addresses", sentinels,
                    "--sentinel-master-name", name, "--redis-replica-ack", ack};
    return o;
  }

  redis_server master_;
  fault_proxy majority_;
  fault_proxy minority_;
  redis_server replica_;
  std::vector<std::unique_ptr<redis_sentinel>> sentinels_;
};

// Returns the overlaps of the round: with ack off the old leader renews on
// the cut-off master until the partition heals, so node 2 starts beside it
// once the new master's hold-back is over; with ack all its renewals miss
// the replica and it stops at its renew deadline.
std::size_t partitioned_round(int round, const std::string& ack, std::int64_t* inject_out,
                              pid_t* leader_pid, fault_cluster& c) {
  partition p(c.election());
  c.start_node(1, p.leader(ack));
  const auto leader = single_worker(c);
  *leader_pid = leader.pid;
  c.start_node(2, p.standby(ack));
  const std::int64_t inject = mono_now_ns();
  *inject_out = inject;
  p.cut();
  event_log log(c.events());
  const bool promoted = wait_until(
      [&] {
        try {
          return p.sentinel_master() == std::to_string(p.replica_port());
        } catch (const std::exception&) {
          return false;
        }
      },
      20s, 50ms);
  EXPECT_TRUE(promoted) << "the sentinels never promoted the replica (round " << round << ")";

  // Node 2 starts after the new master's hold-back.
  EXPECT_TRUE(wait_for(
      log,
      [&](const event_log& x) {
        auto next = first_started_after(x, inject);
        return next && next->ticks > 3;
      },
      20s))
      << "node 2 never started\n"
      << c.logs();
  // Held a while longer: a leader that were to stop late would show here.
  hold_fault_until(mono_now_ns() + std::chrono::nanoseconds(ttl).count());
  return c.log().overlaps().size();
}

TEST(sentinel_faults, partition_keeps_the_old_master_alive_ack_off_overlaps) {
  // The window that replica_ack off leaves: measured, and asserted to exist,
  // so the claim in docs/safety.md stays true.
  for (int round = 1; round <= 2; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    std::int64_t inject = 0;
    pid_t leader = 0;
    const auto overlaps = partitioned_round(round, "off", &inject, &leader, c);
    EXPECT_GT(overlaps, 0u) << "with replica_ack off the old leader was expected to work on\n"
                            << c.logs();
    auto record = round_record(c, "sentinel: partition, old master alive, replica_ack off",
                               inject, leader, overlaps);
    record.window = true;
    record_fault(record);
  }
}

TEST(sentinel_faults, partition_keeps_the_old_master_alive_ack_all_no_overlap) {
  for (int round = 1; round <= 2; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    std::int64_t inject = 0;
    pid_t leader = 0;
    partitioned_round(round, "all", &inject, &leader, c);
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "sentinel: partition, old master alive, replica_ack all", inject,
                              leader, overlaps));
  }
}

}  // namespace
}  // namespace baton::testing
