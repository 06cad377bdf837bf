// `baton check-store` as an operator runs it: against a healthy server it
// says ready and exits 0; each hazard it knows (an eviction policy that can
// drop the lease, a master with replicas, TLS without verification) is one
// line and exit 1; what stops baton from working there (nothing listens, a
// replica, a missing ACL permission, a bad config) is a FAIL line and exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "support/baton_process.hpp"
#include "support/fault_proxy.hpp"
#include "support/servers/etcd_cluster.hpp"
#include "support/servers/postgres_server.hpp"
#include "support/servers/redis_cluster.hpp"
#include "support/servers/redis_sentinel_group.hpp"
#include "support/servers/redis_server.hpp"
#include "support/servers/zookeeper_server.hpp"
#include "support/test_pki.hpp"
#include "support/text_count.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

struct outcome {
  int code;
  std::string output;
};

outcome check_store(std::vector<std::string> args, env_list env = {}) {
  temp_dir dir("baton-cs-");
  if (std::find(args.begin(), args.end(), "--election") == args.end()) {
    args.insert(args.begin(), {"--election", "jobs"});
  }
  args.insert(args.begin(), "check-store");
  baton_process p(std::move(args), std::move(env), dir / "out.log");
  auto code = p.wait_exit(20s);
  EXPECT_TRUE(code) << "baton check-store did not exit";
  return {code.value_or(-1), p.log_text()};
}

// Waits (at most 4 s) until `master` counts a replica that was just attached.
void wait_until_it_counts_a_replica(redis_server& master) {
  for (int i = 0; i < 200; ++i) {
    const auto info = master.command({"INFO", "replication"}).front();
    if (info.find("connected_slaves:1") != std::string::npos) return;
    std::this_thread::sleep_for(20ms);
  }
}

bool has_line(const std::string& output, const std::string& verdict, const std::string& topic,
              const std::string& words) {
  std::size_t at = 0;
  while ((at = output.find("\n", at)) != std::string::npos) {
    ++at;
    const auto end = output.find('\n', at);
    const auto line = output.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.find("  " + verdict + " ") == 0 && line.find(topic) != std::string::npos &&
        line.find(words) != std::string::npos)
      return true;
  }
  return false;
}

TEST(check_store, a_healthy_server_is_ready) {
  redis_server redis;
  redis.command({"SET", "baton:{jobs}:token", "7"});
  const auto r = check_store({"--redis-url", redis.url()});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "reachable", "answered in")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "version", "Redis 7")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "user", "authenticated as default")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "acl", "every command baton needs")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "role", "master, no replicas")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "eviction", "nothing is evicted")) << r.output;
  EXPECT_TRUE(has_line(r.output, "note", "persistence", "AOF off")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "latency", "round trip")) << r.output;
  EXPECT_TRUE(has_line(r.output, "note", "clock", "ms")) << r.output;
  EXPECT_TRUE(has_line(r.output, "note", "lease", "free (token counter at 7)")) << r.output;
  EXPECT_NE(r.output.find("verdict: ready (exit 0)"), std::string::npos) << r.output;
  EXPECT_EQ(redis.command({"EXISTS", "baton:{jobs}:check-store"}).front(), "0")
      << "the probe key was left behind";
}

TEST(check_store, an_eviction_policy_that_can_drop_the_lease_is_a_hazard) {
  redis_server redis;
  redis.command({"CONFIG", "SET", "maxmemory", "100mb"});
  redis.command({"CONFIG", "SET", "maxmemory-policy", "volatile-lru"});
  auto r = check_store({"--redis-url", redis.url()});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has_line(r.output, "hazard", "eviction", "volatile-lru can evict the lease key"))
      << r.output;
  EXPECT_NE(r.output.find("(exit 1)"), std::string::npos) << r.output;

  redis.command({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"});
  r = check_store({"--redis-url", redis.url()});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has_line(r.output, "hazard", "eviction", "the token counter")) << r.output;
}

// check-store weighs replica_ack all by the scripts' rule: never fewer than
// one replica, and never fewer than the most recorded for the election.
TEST(check_store, replica_ack_all_counts_at_least_one_replica_and_the_most_recorded) {
  redis_server master;
  const std::vector<std::string> all = {"--redis-url", master.url(), "--redis-replica-ack", "all"};
  auto r = check_store(all);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "role",
                       "the master has 0 of the 1 replicas redis.replica_ack all requires"))
      << r.output;

  redis_server replica;
  replica.command({"REPLICAOF", "127.0.0.1", std::to_string(master.port())});
  wait_until_it_counts_a_replica(master);
  r = check_store(all);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "role", "all counts 1")) << r.output;
  // A second replica was seen once: all of them is two.
  master.command({"SET", "baton:{jobs}:replicas", "2"});
  r = check_store(all);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "role", "1 of the 2 replicas")) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "role", "SET baton:{jobs}:replicas 1")) << r.output;
}

TEST(check_store, a_master_with_a_replica_is_a_hazard_and_the_replica_a_failure) {
  redis_server master;
  redis_server replica;
  replica.command({"REPLICAOF", "127.0.0.1", std::to_string(master.port())});
  wait_until_it_counts_a_replica(master);
  auto r = check_store({"--redis-url", master.url()});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has_line(r.output, "hazard", "role", "a master with 1 replica(s)")) << r.output;
  r = check_store({"--redis-url", replica.url()});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "role", "a replica (read-only)")) << r.output;
}

TEST(check_store, a_round_trip_near_the_command_timeout_is_a_hazard) {
  redis_server redis;
  fault_proxy proxy(redis.port());
  proxy.delay(300ms);  // 600 ms a round trip, past half the 1 s command timeout
  const auto r = check_store({"--redis-url", proxy.url(), "--redis-timeout", "1s",
                              "--redis-connect-timeout", "5s"});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has_line(r.output, "hazard", "latency", "near the command timeout")) << r.output;
}

TEST(check_store, a_missing_acl_permission_is_named) {
  redis_server redis;
  redis.command({"ACL", "SETUSER", "baton", "on", ">pw", "~baton:{jobs}:*", "&baton:{jobs}:events",
                 "-@all", "+evalsha", "+eval", "+info", "+subscribe", "+ping", "+get", "+set",
                 "+pexpire", "+pttl", "+exists", "+incr", "+time", "+acl|whoami"});
  const auto r = check_store({"--redis-url", redis.url(), "--redis-username", "baton"},
                             {{"BATON_REDIS_PASSWORD", "pw"}});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "acl", "may not run +del +publish")) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "acl", "grant them: ACL SETUSER baton +del +publish"))
      << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "user", "authenticated as baton")) << r.output;
  EXPECT_EQ(r.output.find("pw\n"), std::string::npos) << r.output;
}

// docs/stores/redis.md's minimal ACL is written for one election; run for another, every
// command is allowed and only the keys and the channel are refused. Naming
// +eval +evalsha +subscribe would send the operator to the wrong grant.
TEST(check_store, an_acl_for_another_election_names_the_keys_and_channel_not_commands) {
  redis_server redis;
  redis.command({"ACL", "SETUSER", "baton", "on", ">pw", "resetchannels", "~baton:{jobs}:*",
                 "&baton:{jobs}:events", "-@all", "+evalsha", "+eval", "+info", "+subscribe",
                 "+ping", "+get", "+set", "+pexpire", "+pttl", "+exists", "+incr", "+del", "+time",
                 "+publish", "+acl|whoami"});
  const auto r = check_store({"--election", "jobs2", "--redis-url", redis.url(),
                              "--redis-username", "baton"},
                             {{"BATON_REDIS_PASSWORD", "pw"}});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "acl",
                       "the user may not use the keys ~baton:{jobs2}:* nor the channel "
                       "&baton:{jobs2}:events; grant them: ACL SETUSER baton ~baton:{jobs2}:* "
                       "&baton:{jobs2}:events"))
      << r.output;
  EXPECT_EQ(r.output.find("may not run"), std::string::npos) << r.output;
}

TEST(check_store, nothing_listening_is_a_failure) {
  redis_server redis;
  const auto url = redis.url();
  redis.kill_and_wait();
  const auto r = check_store({"--redis-url", url});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "reachable", "Connection refused")) << r.output;
}

TEST(check_store, a_bad_config_exits_2_naming_the_option) {
  const auto r = check_store({"--redis-url", "http://x"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("redis.url"), std::string::npos) << r.output;
}

TEST(check_store, tls_is_reported_and_unverified_tls_is_a_hazard) {
  test_pki pki;
  redis_server_options o;
  o.tls_cert_file = pki.server().cert;
  o.tls_key_file = pki.server().key;
  o.tls_ca_file = pki.ca_file();
  redis_server redis(o);
  auto r = check_store({"--redis-url", redis.tls_url(), "--redis-tls-ca-file", pki.ca_file()});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "tls", "the chain up to a trusted CA and the name 127.0.0.1"))
      << r.output;
  r = check_store({"--redis-url", redis.tls_url(), "--redis-tls-verify", "none"});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has_line(r.output, "hazard", "tls", "not verified")) << r.output;
  r = check_store({"--redis-url", redis.tls_url(), "--redis-tls-ca-file", pki.other_ca_file()});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "reachable", "the server's certificate is not trusted"))
      << r.output;
}

TEST(check_store, postgres_reports_role_user_table_and_latency) {
  postgres_server pg;
  auto r = check_store({"--store-kind", "postgres", "--postgres-url", pg.conninfo()});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "version", "PostgreSQL 15")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "role", "primary")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "user", "authenticated as postgres")) << r.output;
  EXPECT_TRUE(has_line(r.output, "note", "table", "baton_lease does not exist yet")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "latency", "round trip")) << r.output;
  r = check_store({"--store-kind", "postgres", "--postgres-url", pg.conninfo(),
                   "--postgres-create-schema=false"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "table", "init-store --print")) << r.output;
}

// The line of `output` with `verdict` and `topic` that holds `words` (""
// when there is none).
std::string line_with(const std::string& output, const std::string& verdict,
                      const std::string& topic, const std::string& words) {
  std::size_t at = 0;
  while ((at = output.find("\n", at)) != std::string::npos) {
    ++at;
    const auto end = output.find('\n', at);
    const auto line = output.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.find("  " + verdict + " ") == 0 && line.find(topic) != std::string::npos &&
        line.find(words) != std::string::npos)
      return line;
  }
  return {};
}

// ZooKeeper: each server's version and mode by srvr, its tick and limits by
// conf, and the session timeout the server grants weighed against the ttl:
// shorter is a failure (the server would end a leader's session before its
// lease), much longer a hazard (a crashed leader's node outlives it); each
// hint names the bound that set the grant, in the words of the daemon's own
// acquire error. A standalone server has no followers, so no stale-follower
// window, and a session with nowhere to move. No authentication is a note.
// Nothing serving fails the report and tries no session.
TEST(check_store, zookeeper_reports_the_server_and_weighs_the_granted_session) {
  zookeeper_server_options o;
  o.max_session_timeout_ms = 4000;
  zookeeper_server zk(o);
  auto r = check_store({"--store-kind", "zookeeper", "--zookeeper-servers", zk.address(), "--ttl",
                        "3s"});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "version", "ZooKeeper 3.")) << r.output;
  EXPECT_TRUE(has_line(r.output, "note", "mode", "standalone")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "session", "granted 3000 ms")) << r.output;
  EXPECT_TRUE(has_line(r.output, "note", "auth", "any client")) << r.output;
  EXPECT_TRUE(
      has_line(r.output, "note", "conf", "tickTime 200 ms, sessions granted within [400, 4000 ms]"))
      << r.output;
  EXPECT_TRUE(has_line(r.output, "note", "stale reads", "standalone: no followers")) << r.output;
  EXPECT_TRUE(has_line(r.output, "note", "stall", "nowhere to move")) << r.output;
  // The server caps sessions at 4 s: a 5 s ttl cannot be led, and its
  // maximum is what to raise.
  r = check_store({"--store-kind", "zookeeper", "--zookeeper-servers", zk.address(), "--ttl", "5s"});
  EXPECT_EQ(r.code, 2) << r.output;
  auto line = line_with(r.output, "FAIL", "session", "granted 4000 ms");
  EXPECT_NE(line.find("Raise the server's maxSessionTimeout"), std::string::npos) << r.output;
  EXPECT_EQ(line.find("minSessionTimeout"), std::string::npos) << r.output;
  // Asked for more than twice the ttl: the option asked is what to lower.
  r = check_store({"--store-kind", "zookeeper", "--zookeeper-servers", zk.address(), "--ttl", "1s",
                   "--zookeeper-session-timeout", "3s"});
  line = line_with(r.output, "hazard", "session", "granted 3000 ms");
  EXPECT_NE(line.find("Lower zookeeper.session_timeout"), std::string::npos) << r.output;

  // A server whose minimum raises the grant past twice the ttl: its minimum
  // is what to lower, not its maximum.
  zookeeper_server_options high;
  high.min_session_timeout_ms = 8000;
  zookeeper_server raised(high);
  r = check_store({"--store-kind", "zookeeper", "--zookeeper-servers", raised.address(), "--ttl",
                   "3s"});
  EXPECT_EQ(r.code, 1) << r.output;
  line = line_with(r.output, "hazard", "session", "granted 8000 ms");
  EXPECT_NE(line.find("Lower the servers' minSessionTimeout"), std::string::npos) << r.output;
  EXPECT_EQ(line.find("maxSessionTimeout"), std::string::npos) << r.output;

  // Nothing serves: the report fails, and tries no session that a server
  // coming up meanwhile could grant under a "FAIL reachable".
  zk.stop(true);
  r = check_store({"--store-kind", "zookeeper", "--zookeeper-servers", zk.address(), "--ttl", "3s"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "reachable", zk.address())) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "session", "not tried")) << r.output;
}

// On an ensemble, conf gives each member's syncLimit and tickTime: a
// follower cut off from the quorum serves its clients syncLimit * tickTime
// (here 5 * 200 ms) before it lets them go. The window is the ensemble's:
// one line, however many servers. With three servers listed a leader's
// session leaves such a follower (it answers no write) as it leaves a
// stalled server, and the "stall" line says how long one may stall; with
// fewer, the window is weighed against the renewals' room, a hazard beyond
// it naming what to set. One follower down of the three is a hazard on its
// row (the session goes to the others), not a failure beside an "ok
// session". With conf left out of the whitelist (Debian's default allows
// srvr alone) the window is not weighed, and check-store says how to have
// it weighed.
TEST(check_store, zookeeper_weighs_the_stale_follower_window_against_the_ttl) {
  auto ensemble = start_zookeeper_ensemble(3);
  std::string servers;
  for (const auto& s : ensemble) servers += (servers.empty() ? "" : ",") + s->address();
  auto r =
      check_store({"--store-kind", "zookeeper", "--zookeeper-servers", servers, "--ttl", "6s"});
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* server : {"server 1", "server 2", "server 3"}) {
    EXPECT_TRUE(has_line(r.output, "note", std::string(server) + " conf",
                         "tickTime 200 ms, initLimit 10, syncLimit 5"))
        << r.output;
  }
  EXPECT_EQ(count_occurrences(r.output, "stale reads"), 1u) << r.output;
  EXPECT_TRUE(
      has_line(r.output, "ok", "stale reads", "syncLimit * tickTime = 5 * 200 ms = 1000 ms"))
      << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "stall", "for any length")) << r.output;
  // Two servers listed: the session cannot leave the follower.
  const auto two = ensemble[0]->address() + "," + ensemble[1]->address();
  r = check_store({"--store-kind", "zookeeper", "--zookeeper-servers", two, "--ttl", "2s"});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(count_occurrences(r.output, "stale reads"), 1u) << r.output;
  EXPECT_TRUE(has_line(r.output, "hazard", "stale reads",
                       "longer than the 667 ms a leader's renewals may fail before it stops"))
      << r.output;
  EXPECT_TRUE(has_line(r.output, "hazard", "stale reads",
                       "(set syncLimit <= 3 at tickTime 200 ms, or lease.ttl >= 3000 ms"))
      << r.output;

  // A follower: the others keep their quorum and leader.
  std::size_t down = 0;
  while (down + 1 < ensemble.size() && ensemble[down]->mode() != "follower") ++down;
  ensemble[down]->stop(true);
  r = check_store({"--store-kind", "zookeeper", "--zookeeper-servers", servers, "--ttl", "6s"});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has_line(r.output, "hazard", "server " + std::to_string(down + 1) + " reachable",
                       "the session goes to the others"))
      << r.output;
  EXPECT_EQ(r.output.find("  FAIL "), std::string::npos) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "session", "granted 6000 ms")) << r.output;

  zookeeper_server_options o;
  o.extra_config = {"4lw.commands.whitelist=ruok,srvr"};
  zookeeper_server srvr_only(o);
  r = check_store(
      {"--store-kind", "zookeeper", "--zookeeper-servers", srvr_only.address(), "--ttl", "3s"});
  EXPECT_TRUE(has_line(r.output, "ok", "version", "ZooKeeper 3.")) << r.output;
  EXPECT_TRUE(has_line(r.output, "note", "conf", "conf is not allowed (4lw.commands.whitelist)"))
      << r.output;
}

// Digest credentials cross the connection in plaintext (the C client has
// no TLS): a hazard that says so, by the rule every kind follows.
TEST(check_store, zookeeper_digest_credentials_are_a_plaintext_hazard) {
  zookeeper_server zk;
  temp_dir dir("baton-cs-zk-");
  const auto password = dir / "password";
  std::ofstream(password) << "secret\n";
  const auto r = check_store({"--store-kind", "zookeeper", "--zookeeper-servers", zk.address(),
                              "--ttl", "3s", "--zookeeper-username", "baton",
                              "--zookeeper-password-file", password.string()});
  EXPECT_TRUE(has_line(r.output, "hazard", "auth", "plaintext")) << r.output;
  EXPECT_EQ(r.output.find("secret"), std::string::npos) << r.output;
}

// etcd: the cluster as the first endpoint sees it (reachable, version, a
// leader, members, the smallest lease), then every endpoint's own status:
// one leads, the others follow, each with raft term and index and its
// latency. A member that is down is a hazard on its line (the store moves on
// to the next endpoint), not a failure.
TEST(check_store, etcd_reports_each_endpoint) {
  etcd_cluster cluster(3);
  ASSERT_TRUE(cluster.wait_for_leader());
  const std::vector<std::string> args = {"--store-kind",      "etcd",  "--etcd-endpoints",
                                         cluster.endpoints(), "--ttl", "3s"};
  auto r = check_store(args);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "reachable", cluster.member(0).client_url())) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "version", "etcd 3.")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "members", "3 members")) << r.output;
  int leaders = 0;
  for (int i = 0; i < 3; ++i) {
    const auto topic = "endpoint " + std::to_string(i + 1);
    const auto url = cluster.member(i).client_url();
    EXPECT_TRUE(has_line(r.output, "ok", topic, url + ": etcd 3.")) << r.output;
    EXPECT_TRUE(has_line(r.output, "ok", topic, ", raft term ")) << r.output;
    if (has_line(r.output, "ok", topic, url + ": etcd 3.4") &&
        has_line(r.output, "ok", topic, ", the leader, "))
      ++leaders;
  }
  EXPECT_EQ(leaders, 1) << r.output;
  // The leader is named as etcdctl names members: its id in hex, the first
  // field of a `member list` line.
  const auto members = cluster.member(0).etcdctl("member list");
  const auto named = r.output.find("member id ");
  ASSERT_NE(named, std::string::npos) << r.output;
  const auto id = r.output.substr(named + 10, r.output.find('\n', named) - named - 10);
  EXPECT_NE(members.find(id + ", started"), std::string::npos)
      << "check-store names the leader " << id << "; etcdctl member list says:\n"
      << members;

  cluster.member(2).stop(true);
  ASSERT_TRUE(cluster.wait_for_leader());
  r = check_store(args);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has_line(r.output, "hazard", "endpoint 3",
                       cluster.member(2).client_url() + ": etcd: connect "))
      << r.output;
  EXPECT_TRUE(has_line(r.output, "hazard", "endpoint 3", "the store moves on")) << r.output;
}

// PostgreSQL 15 no longer lets every role create in schema public: a role
// that may not create the missing table cannot start, and check-store says
// so (exit 2), naming the grant; with the grant it is ready. init-store then
// fails the same way with its own exit code, 3 (refused), not 1
// (unreachable).
TEST(check_store, postgres_names_a_missing_create_privilege_when_the_table_is_missing) {
  postgres_server pg;
  pg.query("CREATE ROLE weak LOGIN");
  const std::vector<std::string> as_weak{"--store-kind", "postgres", "--postgres-url",
                                         pg.conninfo("weak")};
  auto r = check_store(as_weak);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "table",
                       "baton_lease does not exist and weak may not create it: no CREATE "
                       "privilege on schema public"))
      << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "table", "GRANT CREATE ON SCHEMA public TO weak"))
      << r.output;

  temp_dir dir("baton-is-");
  std::vector<std::string> init{"init-store", "--election", "jobs"};
  init.insert(init.end(), as_weak.begin(), as_weak.end());
  baton_process refused(init, {}, dir / "init.log");
  EXPECT_EQ(refused.wait_exit(20s), 3) << refused.log_text();
  EXPECT_NE(refused.log_text().find("permission denied for schema public"), std::string::npos)
      << refused.log_text();
  EXPECT_NE(refused.log_text().find("baton init-store --print"), std::string::npos)
      << refused.log_text();

  pg.query("GRANT CREATE ON SCHEMA public TO weak");
  r = check_store(as_weak);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has_line(r.output, "note", "table", "weak may create in schema public")) << r.output;

  r = check_store({"--store-kind", "postgres", "--postgres-url", pg.conninfo(),
                   "--postgres-table", "nowhere.baton_lease"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "table", "schema nowhere does not exist")) << r.output;
}

TEST(check_store, run_logs_the_hazards_once_at_start) {
  redis_server redis;
  redis.command({"SET", "baton:{jobs}:token", "7"});
  redis.command({"CONFIG", "SET", "maxmemory", "100mb"});
  redis.command({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"});
  temp_dir dir("baton-cs-");
  baton_process node({"run", "--election", "jobs", "--redis-url", redis.url(), "--", "sleep", "600"},
                     {}, dir / "node.log");
  ASSERT_TRUE(node.wait_for_log("store check: eviction: maxmemory-policy allkeys-lru", 15s))
      << node.log_text();
  EXPECT_TRUE(node.wait_for_log("-> working", 15s)) << node.log_text();
}

TEST(check_store, redlock_reports_each_master_and_the_quorum) {
  redis_server a;
  redis_server b;
  redis_server c;
  const std::string masters = a.url() + "," + b.url() + "," + c.url();
  auto r = check_store({"--store-kind", "redlock", "--redlock-masters", masters});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "quorum", "3 of 3 masters answer")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "master 2 reachable", "answered")) << r.output;
  c.kill_and_wait();
  r = check_store({"--store-kind", "redlock", "--redlock-masters", masters});
  EXPECT_EQ(r.code, 1) << r.output;  // a minority down: it works, one loss from stopping
  EXPECT_TRUE(has_line(r.output, "hazard", "quorum", "2 of 3 masters answer")) << r.output;
  EXPECT_TRUE(has_line(r.output, "hazard", "master 3 reachable", "Connection refused")) << r.output;
  b.kill_and_wait();
  r = check_store({"--store-kind", "redlock", "--redlock-masters", masters});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "quorum", "no majority")) << r.output;
}

// A Sentinel-managed master as check-store finds it: through the sentinel
// (as docs/stores/sentinel.md's sentinel ACL user), with the master's replica weighed against
// replica_ack. With an ACL user that has the single-Redis list but not what
// this kind adds (ROLE on every connection, WAIT for replica_ack), both are
// named; a sentinel user that may not ask for the master fails the first line.
TEST(check_store, sentinel_reports_the_located_master_and_its_missing_permissions) {
  redis_sentinel_group_options o;
  o.sentinels = 1;
  o.quorum = 1;
  o.down_after = 60s;
  const std::string single_redis =
      "user baton on >pw resetchannels ~baton:{jobs}:* &baton:{jobs}:events -@all +evalsha +eval "
      "+info +subscribe +ping +get +set +pexpire +pttl +exists +incr +del +time +publish "
      "+acl|whoami";
  o.extra_config = {single_redis, "user full on >pw resetchannels ~baton:{jobs}:* "
                                  "&baton:{jobs}:events -@all +evalsha +eval +info +subscribe "
                                  "+ping +get +set +pexpire +pttl +exists +incr +del +time "
                                  "+publish +acl|whoami +role +wait"};
  o.sentinel_extra_config = {
      "user watcher on >spw resetchannels &+switch-master -@all "
      "+sentinel|get-master-addr-by-name +subscribe +ping",
      "user blind on >spw resetchannels &+switch-master -@all +subscribe +ping"};
  redis_sentinel_group g(o);
  temp_dir dir("baton-cs-sentinel-");
  const auto sentinel_password = (dir / "sentinel-password").string();
  std::ofstream(sentinel_password) << "spw\n";
  const std::vector<std::string> kind = {"--store-kind",          "sentinel",
                                         "--sentinel-addresses",  g.sentinel_urls().front(),
                                         "--sentinel-master-name", g.master_name(),
                                         "--sentinel-password-file", sentinel_password,
                                         "--redis-replica-ack",   "all"};
  auto as = [&](const std::string& user, const std::string& sentinel_user = "watcher") {
    auto args = kind;
    args.insert(args.end(), {"--redis-username", user, "--sentinel-username", sentinel_user});
    return check_store(args, {{"BATON_REDIS_PASSWORD", "pw"}});
  };
  auto r = as("full");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "acl", "every command baton needs")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "role", "1 replica(s)")) << r.output;
  r = as("baton");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "acl", "may not run +role +wait")) << r.output;
  r = as("full", "blind");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "sentinels", "get-master-addr-by-name")) << r.output;
  EXPECT_EQ(r.output.find("spw"), std::string::npos) << r.output;
}

// A Cluster: the slot's master found through the seed nodes, and the
// permissions a Cluster adds (sharded pub/sub, ASK redirects) named when an
// ACL user lacks them.
TEST(check_store, cluster_reports_the_slot_master_and_its_missing_permissions) {
  redis_cluster_options o;
  o.replicas_per_master = 0;
  const std::string common =
      " on >pw resetchannels ~baton:{jobs}:* &baton:{jobs}:events -@all +evalsha +eval +info "
      "+subscribe +ping +get +set +pexpire +pttl +exists +incr +del +time +publish +acl|whoami "
      "+role +cluster";
  o.extra_config = {"user baton" + common, "user full" + common + " +asking +spublish +ssubscribe"};
  redis_cluster rc(o);
  auto as = [&](const std::string& user) {
    return check_store({"--store-kind", "cluster", "--cluster-nodes", rc.seed_urls().front(),
                        "--redis-username", user},
                       {{"BATON_REDIS_PASSWORD", "pw"}});
  };
  auto r = as("full");
  EXPECT_TRUE(has_line(r.output, "ok", "acl", "every command baton needs")) << r.output;
  EXPECT_TRUE(has_line(r.output, "ok", "reachable", "answered")) << r.output;
  r = as("baton");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has_line(r.output, "FAIL", "acl", "may not run +spublish +asking +ssubscribe"))
      << r.output;
}

}  // namespace
}  // namespace baton::testing
