// Faults of a Redis Cluster under the cluster store kind, on a real cluster
// of 3 masters with 1 replica each (tests/support/servers/redis_cluster.hpp, node
// timeout 1000 ms), while a leader works:
// - the master of the election's slot SIGKILLed: its replica takes over, the
//   election record's run_id tells every candidate to hold back for one ttl,
//   and a single app works again; with replica acks off and with
//   `--redis-replica-ack all` (then only once the old master is back as the
//   promoted replica's replica: before, it has none to acknowledge);
// - the election's slot migrated to another master and back (held in the
//   migrating state with the keys on either side, so that the leader's
//   renewals go by ASK): the leader keeps leading;
// - a graceful failover (CLUSTER FAILOVER on the slot master's replica): one
//   app, the old one or a new one, never two;
// - a TLS cluster (rediss:// seeds, the test CA): one leader, and a standby
//   takes over from a crashed leader.
// Each round is a fresh election; the event log proves no two apps worked at
// once. Failure messages carry the daemons' logs and the nodes' log tails.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scenario.hpp"
#include "support/servers/redis_cluster.hpp"
#include "support/test_pki.hpp"

namespace baton::testing::cluster_faults_test {
namespace {

constexpr auto ttl = 2000ms;
// The default renew deadline (ttl * 2 / 3): a fault phase that lasts longer
// would stop the leader's app if its renewals failed throughout.
constexpr auto renew_deadline = ttl * 2 / 3;
// Rounds of the scenarios here: each builds a cluster or moves a slot, so
// fewer than the suite's default.
constexpr int cluster_rounds = 2;

std::int64_t ns_of(std::chrono::nanoseconds d) { return d.count(); }

// "key:value" of an INFO text; "" when absent.
std::string info_field(const std::string& info, const std::string& key) {
  const std::string needle = key + ":";
  for (std::size_t at = info.find(needle); at != std::string::npos;
       at = info.find(needle, at + 1)) {
    if (at != 0 && info[at - 1] != '\n') continue;
    const auto begin = at + needle.size();
    const auto end = info.find_first_of("\r\n", begin);
    return info.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  }
  return {};
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

// Daemon logs and the cluster's log tails, for failure messages.
std::string diagnostics(const fault_cluster& c, const redis_cluster& rc) {
  return c.logs() + "\n==== cluster log tails\n" + rc.log_tails();
}

// Runs a harness step (a failover, a slot move); a throw becomes a test
// failure with every log. Returns whether it succeeded.
bool harness_step(const std::string& what, const fault_cluster& c, const redis_cluster& rc,
                  const std::function<void()>& step) {
  try {
    step();
    return true;
  } catch (const std::exception& e) {
    const std::string message = e.what();
    // The harness's waits already end their message with the log tails.
    ADD_FAILURE() << what << " failed: " << message << "\n"
                  << (message.find("--- node ") == std::string::npos ? rc.log_tails() : "")
                  << c.logs();
    return false;
  }
}

// check_no_overlap, with the cluster's log tails when it fails.
std::size_t no_overlap(fault_cluster& c, const redis_cluster& rc) {
  const auto overlaps = check_no_overlap(c);
  if (overlaps > 0) ADD_FAILURE() << "cluster log tails:\n" << rc.log_tails();
  return overlaps;
}

// One election on a cluster: its slot, its master, the baton flags.
class cluster_election {
 public:
  cluster_election(redis_cluster& rc, std::string election)
      : rc_(rc),
        election_(std::move(election)),
        slot_(rc.key_slot("baton:{" + election_ + "}:lease")) {}

  int slot() const { return slot_; }
  unsigned short master() const { return rc_.master_port_for_slot(slot_); }
  std::string key(const char* name) const { return "baton:{" + election_ + "}:" + name; }

  // The counter seeded on the slot's master, as a long-lived cluster would
  // have it: a missing one counts as lost data and holds the first start
  // back for one ttl.
  void seed() const { rc_.command(master(), {"SET", key("token"), "1", "NX"}); }

  // A candidate of the cluster kind, every node a seed (rediss:// ones on a
  // TLS cluster, with the test CA). The Redis URL fault_cluster passes is
  // unused by this kind.
  node_options node(const std::vector<std::string>& extra = {},
                    const std::string& ca_file = {}) const {
    node_options o = via_redis_url(rc_.seed_urls().front());
    o.baton_args = {"--store-kind", "cluster", "--cluster-nodes",
                    join(rc_.tls() ? rc_.tls_seed_urls() : rc_.seed_urls())};
    if (!ca_file.empty()) o.baton_args.insert(o.baton_args.end(), {"--redis-tls-ca-file", ca_file});
    o.baton_args.insert(o.baton_args.end(), extra.begin(), extra.end());
    return o;
  }

  // CLOCK_MONOTONIC ns before which the lease key cannot expire on the
  // slot's master (PTTL, rounded down); nullopt when it is absent.
  std::optional<std::int64_t> lease_expires_ns() const {
    try {
      const auto before = mono_now_ns();
      const auto reply = rc_.command(master(), {"PTTL", key("lease")});
      if (reply.empty()) return std::nullopt;
      const long long pttl = std::stoll(reply.front());
      if (pttl >= 0) return before + pttl * 1'000'000;
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }

  // Waits until every replica of the slot's master has applied what the
  // master had written when this was called (the grant among it, with the
  // election record's run_id): the replication offsets of INFO replication.
  bool replicas_caught_up(std::chrono::milliseconds timeout, std::string* why) const {
    const auto m = master();
    long long target = -1;
    try {
      target = std::stoll(info_field(rc_.command(m, {"INFO", "replication"}).front(),
                                     "master_repl_offset"));
    } catch (const std::exception& e) {
      *why = std::string("INFO replication on the master: ") + e.what();
      return false;
    }
    const auto replicas = rc_.replica_ports_of(m);
    if (replicas.empty()) {
      *why = "the slot's master has no replica";
      return false;
    }
    return wait_until(
        [&] {
          for (const auto r : replicas) {
            try {
              const auto info = rc_.command(r, {"INFO", "replication"}).front();
              const auto offset = info_field(info, "slave_repl_offset");
              if (offset.empty() || std::stoll(offset) < target) {
                *why = "replica " + std::to_string(r) + " at offset " + offset + " of " +
                       std::to_string(target);
                return false;
              }
            } catch (const std::exception& e) {
              *why = e.what();
              return false;
            }
          }
          return true;
        },
        timeout, 20ms);
  }

 private:
  redis_cluster& rc_;
  std::string election_;
  int slot_;
};

// The first master other than `port`.
unsigned short another_master(const redis_cluster& rc, unsigned short port) {
  for (const auto p : rc.master_ports()) {
    if (p != port) return p;
  }
  throw std::runtime_error("no master other than port " + std::to_string(port));
}

// A worker that started after `after_ns` is the only live one, and works.
std::optional<interval> wait_for_new_single_worker(fault_cluster& c, std::int64_t after_ns,
                                                   std::chrono::milliseconds timeout) {
  event_log log(c.events());
  std::optional<interval> found;
  wait_for(
      log,
      [&](const event_log& x) {
        const auto live = x.live_workers();
        if (live.size() != 1 || live[0].ticks == 0 || live[0].start_ns <= after_ns) return false;
        found = live[0];
        return true;
      },
      timeout);
  return found;
}

// What the leader's status said while a fault phase lasted.
struct renewal_samples {
  // The longest time since its last renewal it reported, ms.
  long long longest_gap_ms = 0;
  // Replies in which it did not hold the lease.
  int not_holding = 0;
  // Requests it did not answer in time (a loaded host; not judged).
  int unanswered = 0;

  void merge(const renewal_samples& o) {
    longest_gap_ms = std::max(longest_gap_ms, o.longest_gap_ms);
    not_holding += o.not_holding;
    unanswered += o.unanswered;
  }
};

// Samples the leader's status every 100 ms until `until_ns` (the length of
// the fault phase, not a wait for an outcome).
renewal_samples sample_renewals(fault_cluster& c, int l, std::int64_t until_ns) {
  renewal_samples out;
  for (int i = 0; i < 200 && mono_now_ns() < until_ns; ++i) {
    const auto s = c.status(l, 500ms);
    if (!s) {
      ++out.unanswered;
    } else if (s->contains("last_renewal_ms_ago")) {
      out.longest_gap_ms = std::max(out.longest_gap_ms, (*s)["last_renewal_ms_ago"].get<long long>());
    } else {
      ++out.not_holding;
    }
    const auto left = until_ns - mono_now_ns();
    if (left > 0) {
      std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(100ms, std::chrono::nanoseconds(left)));
    }
  }
  return out;
}

// --- 1. the slot's master SIGKILLed ----------------------------------------

// Kills the slot's master while a leader works; its replica (which has the
// grant and the election record) takes over. The old app stops at its renew
// deadline, every candidate holds back for one ttl on the new master (its
// run_id is not the record's), then exactly one app works, with a larger
// token; with replica_ack all only once the old master is back as the new
// one's replica.
void slot_master_killed(const std::vector<std::string>& flags, const std::string& kind) {
  const bool ack_all = !flags.empty() && flags.back() == "all";
  for (int round = 1; round <= cluster_rounds; ++round) {
    redis_cluster rc;
    fault_cluster c(round_name(round), ttl, false);
    cluster_election e(rc, c.election());
    e.seed();
    c.start_node(1, e.node(flags));
    c.start_node(2, e.node(flags));
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why << "\n" << rc.log_tails();
    ASSERT_TRUE(e.replicas_caught_up(5s, &why))
        << "the grant did not reach the replica: " << why << "\n"
        << diagnostics(c, rc);
    exit_watch app(leader->pid);
    const auto old_master = e.master();
    // The replica has the lease with the same expiry.
    const auto expires = e.lease_expires_ns();
    ASSERT_TRUE(expires) << diagnostics(c, rc);

    const std::int64_t inject = mono_now_ns();
    unsigned short promoted = 0;
    ASSERT_TRUE(harness_step("failover of the slot's master", c, rc,
                             [&] { promoted = rc.failover_slot_master(e.slot(), 30s); }));
    const std::int64_t failed_over = mono_now_ns();
    ASSERT_NE(promoted, old_master);

    if (ack_all) {
      // The promoted replica has no replica of its own: nobody may lead on
      // it (the old leader's renewals and every grant are refused, and say
      // why) until the old master is back as its replica.
      ASSERT_TRUE(wait_until(
          [&] {
            return c.logs().find("0 of the 1 replicas redis.replica_ack all requires") !=
                   std::string::npos;
          },
          20s, 50ms))
          << "no candidate said why nobody leads on the promoted replica\n"
          << diagnostics(c, rc);
      hold_fault_until(mono_now_ns() + std::chrono::nanoseconds(ttl).count());
      EXPECT_FALSE(first_started_after(c.log(), inject))
          << "a leader started on a master without a replica\n"
          << diagnostics(c, rc);
      ASSERT_TRUE(harness_step("the old master back as a replica", c, rc,
                               [&] { rc.restart_node(old_master); }));
    }
    const auto next = wait_for_new_single_worker(c, inject, 30s);
    ASSERT_TRUE(next) << "no single working app within 30 s of the failover\n"
                      << diagnostics(c, rc);
    const auto gone = app.wait(0ms);
    EXPECT_TRUE(gone) << "the old app still runs\n" << diagnostics(c, rc);
    EXPECT_GT(token_value(*next), token_value(*leader))
        << "the fencing token went backwards across the failover\n"
        << diagnostics(c, rc);
    EXPECT_GE(next->start_ns, *expires - 1'000'000)
        << "a candidate started before the old lease could expire\n"
        << diagnostics(c, rc);
    // The replica is promoted no sooner than the node timeout after the
    // kill; the first acquire there fences the election for one ttl.
    EXPECT_GE(next->start_ns - inject, ns_of(rc.options().node_timeout + ttl))
        << "the first acquisition on the promoted replica was not held back for a ttl\n"
        << diagnostics(c, rc);
    // The new master's run_id differs from the record's: the candidates were
    // told (the acquire script's "failover", or the node's "run_id changed"),
    // which their status keeps as the store's last reset.
    bool reset_seen = false;
    std::string statuses;
    for (int i = 1; i <= 2; ++i) {
      const auto s = c.status(i);
      if (!s) continue;
      statuses += s->dump() + "\n";
      reset_seen = reset_seen || !(*s)["store"].value("last_reset", std::string()).empty();
    }
    EXPECT_TRUE(reset_seen) << "no candidate noticed the failover\n" << statuses << c.logs();

    const auto overlaps = no_overlap(c, rc);
    const auto record = round_record(c, kind, inject, leader->pid, overlaps);
    record_fault(record);
    std::printf(
        "%s, round %d: failover %.0f ms (kill to a consistent cluster), old app's last work "
        "+%.0f ms, next app +%.0f ms (%.0f ms after the failover), token %s -> %s\n",
        kind.c_str(), round, ms_between(inject, failed_over), record.stopped_ms.value_or(-1),
        record.started_ms.value_or(-1), ms_between(failed_over, next->start_ns),
        leader->token.c_str(), next->token.c_str());
  }
}

TEST(cluster_faults, slot_master_killed_replica_ack_off_one_app_after_the_failover) {
  slot_master_killed({}, "cluster: slot master SIGKILLed (replica takes over), ack off");
}

TEST(cluster_faults, slot_master_killed_replica_ack_all_one_app_after_the_old_master_is_back) {
  slot_master_killed({"--redis-replica-ack", "all"},
                     "cluster: slot master SIGKILLed (replica takes over), ack all (no leader "
                     "until the old master is back as its replica)");
}

// --- 2. the election's slot migrated ---------------------------------------

// The slot is moved to another master and back, each move held in its two
// half-way states for longer than the renew deadline: keys on the source
// (migrating; the source still serves them), then keys on the target (the
// source answers ASK). The leader must renew throughout and keep its app.
TEST(cluster_faults, election_slot_migrated_and_back_the_leader_keeps_leading) {
  redis_cluster rc;
  constexpr auto phase = renew_deadline + 300ms;
  for (int round = 1; round <= cluster_rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    cluster_election e(rc, c.election());
    e.seed();
    c.start_node(1, e.node());
    c.start_node(2, e.node());
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why << "\n" << rc.log_tails();
    const int l = fault_cluster::index_of(*leader);
    const auto home = e.master();
    const auto away = another_master(rc, home);

    const std::int64_t inject = mono_now_ns();
    renewal_samples samples;
    constexpr int moves = 2;
    for (int move = 0; move < moves; ++move) {
      const auto to = move % 2 == 0 ? away : home;
      ASSERT_TRUE(harness_step("begin_migration to " + std::to_string(to), c, rc,
                               [&] { rc.begin_migration(e.slot(), to); }));
      samples.merge(sample_renewals(c, l, mono_now_ns() + ns_of(phase)));
      std::size_t moved = 0;
      ASSERT_TRUE(harness_step("move_keys", c, rc, [&] { moved = rc.move_keys(e.slot()); }));
      // lease, token, holder record, epoch record (no fence key).
      EXPECT_GE(moved, 4u) << diagnostics(c, rc);
      samples.merge(sample_renewals(c, l, mono_now_ns() + ns_of(phase)));
      ASSERT_TRUE(harness_step("finish_migration", c, rc,
                               [&] { rc.finish_migration(e.slot(), 15s); }));
      ASSERT_EQ(e.master(), to);
      samples.merge(sample_renewals(c, l, mono_now_ns() + ns_of(phase)));
    }

    event_log log(c.events());
    log.refresh();
    const auto before = interval_of(log, leader->pid);
    ASSERT_TRUE(before);
    ASSERT_TRUE(wait_for(
        log,
        [&](const event_log& x) {
          auto now = interval_of(x, leader->pid);
          return now && now->ticks > before->ticks + 5 && !now->ended;
        },
        5s))
        << "the leader's app stopped working\n"
        << diagnostics(c, rc);
    EXPECT_EQ(log.start_count(), 1u) << "leadership changed\n" << diagnostics(c, rc);
    EXPECT_EQ(samples.not_holding, 0) << "the leader did not hold the lease throughout\n"
                                      << diagnostics(c, rc);
    EXPECT_LT(samples.longest_gap_ms, renew_deadline.count()) << diagnostics(c, rc);
    const auto s = c.status(l);
    ASSERT_TRUE(s) << diagnostics(c, rc);
    EXPECT_TRUE((*s)["is_leader"].get<bool>()) << s->dump();
    // The lease lives on its home master again, ours, renewed.
    const auto expires = e.lease_expires_ns();
    EXPECT_TRUE(expires && *expires > mono_now_ns()) << diagnostics(c, rc);

    const auto overlaps = no_overlap(c, rc);
    auto record = round_record(c, "cluster: election slot migrated and back (held half-way)",
                               inject, std::nullopt, overlaps);
    record.injected = moves;
    record.kept_working = true;
    record_fault(record);
    std::printf("cluster: slot %d moved %d -> %d -> %d, round %d: longest time since a renewal "
                "%lld ms (deadline %lld ms; %d status requests unanswered)\n",
                e.slot(), home, away, home, round, samples.longest_gap_ms,
                static_cast<long long>(renew_deadline.count()), samples.unanswered);
  }
}

// --- 3. a graceful failover ------------------------------------------------

// CLUSTER FAILOVER on the slot master's replica: the master pauses its
// clients until the replica has caught up, so the lease survives and its
// holder may keep leading on the new master; the run_id change holds new
// acquisitions back for one ttl. Either way one app works a ttl later.
TEST(cluster_faults, manual_failover_of_the_slot_master_one_app_throughout) {
  redis_cluster rc;
  for (int round = 1; round <= cluster_rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    cluster_election e(rc, c.election());
    e.seed();
    c.start_node(1, e.node());
    c.start_node(2, e.node());
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why << "\n" << rc.log_tails();
    const auto old_master = e.master();
    const auto replicas = rc.replica_ports_of(old_master);
    ASSERT_FALSE(replicas.empty()) << rc.log_tails();

    const std::int64_t inject = mono_now_ns();
    ASSERT_TRUE(harness_step("manual failover", c, rc,
                             [&] { rc.manual_failover(replicas.front(), 30s); }));
    const std::int64_t failed_over = mono_now_ns();
    ASSERT_EQ(e.master(), replicas.front());

    // One live app that still works a ttl after the failover (past any
    // hold-back the new master's run_id caused).
    event_log log(c.events());
    std::optional<interval> current;
    ASSERT_TRUE(wait_for(
        log,
        [&](const event_log& x) {
          const auto live = x.live_workers();
          if (live.size() != 1 || live[0].end_ns <= failed_over + ns_of(ttl)) return false;
          current = live[0];
          return true;
        },
        20s))
        << "no single working app a ttl after the failover\n"
        << diagnostics(c, rc);
    const bool kept = current->pid == leader->pid && log.start_count() == 1;
    if (!kept) {
      EXPECT_GT(token_value(*current), token_value(*leader)) << diagnostics(c, rc);
    }

    const auto overlaps = no_overlap(c, rc);
    auto record = round_record(c, "cluster: manual failover (CLUSTER FAILOVER) of the slot master",
                               inject, kept ? std::nullopt : std::optional<pid_t>(leader->pid),
                               overlaps);
    record.kept_working = kept;
    record_fault(record);
    std::printf("cluster: manual failover %d -> %d, round %d: took %.0f ms; %s\n", old_master,
                replicas.front(), round, ms_between(inject, failed_over),
                kept ? "the leader kept leading"
                     : ("a new app started +" + std::to_string(record.started_ms.value_or(-1)) +
                        " ms")
                           .c_str());
  }
}

// --- 4. TLS ----------------------------------------------------------------

// A cluster that serves TLS (and runs its bus and replication over TLS);
// the candidates know it only by rediss:// seeds and trust the test CA,
// whose server certificate names 127.0.0.1, so the default verification
// (chain and name) applies. One leader; its daemon group SIGKILLed (a host
// crash), the standby takes over once the lease has expired.
TEST(cluster_faults, tls_cluster_one_leader_and_takeover_after_a_crash) {
  const test_pki pki;
  redis_cluster_options o;
  o.tls_cert_file = pki.server().cert;
  o.tls_key_file = pki.server().key;
  o.tls_ca_file = pki.ca_file();
  // The server certificate is for serverAuth only; the bus demands a client one.
  o.tls_client_cert_file = pki.client().cert;
  o.tls_client_key_file = pki.client().key;
  redis_cluster rc(o);
  ASSERT_TRUE(rc.tls());
  for (int round = 1; round <= cluster_rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    cluster_election e(rc, c.election());
    e.seed();
    c.start_node(1, e.node({}, pki.ca_file()));
    c.start_node(2, e.node({}, pki.ca_file()));
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why << "\n" << rc.log_tails();
    const int l = fault_cluster::index_of(*leader);
    // The leader reached the master over TLS.
    const auto s = c.status(l);
    ASSERT_TRUE(s) << diagnostics(c, rc);
    const auto endpoint = (*s)["store"].value("endpoint", std::string());
    EXPECT_NE(endpoint.find(std::to_string(rc.tls_port_of(e.master()))), std::string::npos)
        << s->dump();

    const auto expires = e.lease_expires_ns();
    ASSERT_TRUE(expires) << diagnostics(c, rc);
    const std::int64_t inject = mono_now_ns();
    ASSERT_TRUE(c.node(l).signal_group(SIGKILL));
    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, leader->start_ns, 15s))
        << "no takeover\n"
        << diagnostics(c, rc);
    const auto next = first_started_after(log, leader->start_ns);
    EXPECT_NE(next->name, leader->name);
    EXPECT_GE(next->start_ns, *expires - 1'000'000)
        << "the standby started before the dead leader's key could expire\n"
        << diagnostics(c, rc);
    EXPECT_GT(token_value(*next), token_value(*leader)) << diagnostics(c, rc);

    const auto overlaps = no_overlap(c, rc);
    const auto record =
        round_record(c, "cluster (TLS): leader daemon group SIGKILLed", inject, leader->pid, overlaps);
    record_fault(record);
    std::printf("cluster (TLS), round %d: old app's last work +%.0f ms, next app +%.0f ms\n",
                round, record.stopped_ms.value_or(-1), record.started_ms.value_or(-1));
  }
}

}  // namespace
}  // namespace baton::testing::cluster_faults_test
