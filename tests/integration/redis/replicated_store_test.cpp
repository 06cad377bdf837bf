// The replicated kinds' own behaviour on real servers, below the daemon:
// replica acknowledgement (a grant no replica acknowledged is given back; a
// renewal that did not reach them does not count), the epoch check (a record
// written by another server holds acquisitions back, as after a failover),
// tokens from the server's clock, and a Cluster store following a migration
// of its slot (ASK while the keys move, MOVED once the slot has).
#include <signal.h>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "redis/cluster_locator.hpp"
#include "redis/lease_keys.hpp"
#include "redis/redis_error.hpp"
#include "redis/redis_reply.hpp"
#include "redis/redis_store.hpp"
#include "redis/sentinel_locator.hpp"
#include "store_test_util.hpp"
#include "support/servers/redis_cluster.hpp"
#include "support/event_log.hpp"
#include "support/servers/redis_sentinel_group.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;
namespace util = testing::store_test_util;
using testing::redis_cluster;
using testing::redis_sentinel_group;
using testing::redis_sentinel_group_options;

redis_sentinel_group_options one_sentinel() {
  redis_sentinel_group_options o;
  o.replicas = 1;
  o.sentinels = 1;
  o.quorum = 1;
  o.down_after = 60s;  // no failover unless a test asks for one
  return o;
}

std::unique_ptr<redis_store> sentinel_store(boost::asio::io_context& io,
                                            const redis_sentinel_group& group,
                                            const std::string& node, int ack = -1,
                                            milliseconds ttl = 5s) {
  redis_detail::sentinel_locator_options s;
  for (auto port : group.sentinel_ports()) {
    redis_endpoint e;
    e.port = port;
    s.sentinels.push_back(e);
  }
  s.master_name = group.master_name();
  redis_store_options o;
  o.identity = {util::election, node, ttl};
  // Generous: a loaded machine can take hundreds of ms to replicate, and a
  // slow acknowledgement must not look like a missing one.
  o.command_timeout = 4s;
  o.locator = redis_detail::sentinel_locator::create(io, std::move(s));
  o.replicated = true;
  o.ack.replicas = ack;
  o.ack.timeout = 2s;
  // As the sentinel kind sets it (redis_kinds.cpp).
  o.acknowledged_promotion = ack == 0;
  o.kind = "sentinel";
  return std::make_unique<redis_store>(io, std::move(o));
}

util::outcome<renew_answer> renew(boost::asio::io_context& io, lease_store& store) {
  auto out = std::make_shared<util::outcome<renew_answer>>();
  store.async_renew([out](store_error e, renew_answer a) {
    ++out->calls;
    out->error = std::move(e);
    out->value = a;
  });
  EXPECT_TRUE(util::run_until(io, [&] { return out->calls > 0; })) << "renew never completed";
  return *out;
}

release_answer release(boost::asio::io_context& io, lease_store& store) {
  auto out = std::make_shared<util::outcome<release_answer>>();
  store.async_release([out](store_error e, release_answer a) {
    ++out->calls;
    out->error = std::move(e);
    out->value = a;
  });
  EXPECT_TRUE(util::run_until(io, [&] { return out->calls > 0; })) << "release never completed";
  EXPECT_FALSE(out->error) << out->error.message();
  return out->value;
}

class replicated_store : public ::testing::Test {
 protected:
  void SetUp() override {
    group_ = std::make_unique<redis_sentinel_group>(one_sentinel());
    master_ = group_->initial_master_port();
    replica_ = group_->data_ports().at(1);
    group_->command(master_, {"SET", token_key(util::election), "1000"});
  }
  void TearDown() override {
    if (frozen_) group_->node(replica_).signal(SIGCONT);
  }
  void freeze_replica() {
    group_->node(replica_).signal(SIGSTOP);
    frozen_ = true;
  }
  void thaw_replica() {
    group_->node(replica_).signal(SIGCONT);
    frozen_ = false;
  }
  std::vector<std::string> get(const std::string& key) { return group_->command(master_, {"GET", key}); }
  std::string get_one(const std::string& key) {
    const auto v = get(key);
    return v.empty() ? std::string() : v.front();
  }
  // Kills the replica and waits (bounded) until the master has noticed.
  void kill_replica() {
    group_->kill_node(replica_);
    ASSERT_TRUE(testing::wait_until(
        [&] {
          const auto info = group_->command(master_, {"INFO", "replication"});
          return !info.empty() && info.front().find("connected_slaves:0") != std::string::npos;
        },
        10s, 50ms))
        << "the master still lists its killed replica";
  }

  boost::asio::io_context io_;
  std::unique_ptr<redis_sentinel_group> group_;
  unsigned short master_ = 0;
  unsigned short replica_ = 0;
  bool frozen_ = false;
};

TEST_F(replicated_store, an_acquire_the_replica_did_not_acknowledge_is_given_back) {
  auto store = sentinel_store(io_, *group_, "a", 0);
  freeze_replica();
  const auto r = util::acquire(io_, *store);
  ASSERT_TRUE(r.error) << "acquired without the replica";
  EXPECT_EQ(r.error.code, store_errc::no_quorum);
  EXPECT_NE(r.error.detail.find("0 of 1 replicas acknowledged within 2000 ms"), std::string::npos)
      << r.error.detail;
  EXPECT_NE(r.error.detail.find("released it"), std::string::npos) << r.error.detail;
  EXPECT_TRUE(get(lease_key(util::election)).empty()) << "the unacknowledged grant is still there";
  thaw_replica();
  const auto again = util::acquire(io_, *store);
  ASSERT_FALSE(again.error) << again.error.message();
  EXPECT_TRUE(again.value.acquired());
}

TEST_F(replicated_store, a_renewal_the_replica_did_not_acknowledge_does_not_count) {
  auto store = sentinel_store(io_, *group_, "a", 1);
  const auto r = util::acquire(io_, *store);
  ASSERT_FALSE(r.error) << r.error.message();
  ASSERT_TRUE(r.value.acquired());
  freeze_replica();
  const auto lost = renew(io_, *store);
  ASSERT_TRUE(lost.error) << "renewed without the replica";
  EXPECT_EQ(lost.error.code, store_errc::no_quorum);
  EXPECT_NE(lost.error.detail.find("renewal not acknowledged"), std::string::npos)
      << lost.error.detail;
  thaw_replica();
  const auto ok = renew(io_, *store);
  ASSERT_FALSE(ok.error) << ok.error.message();
  EXPECT_EQ(ok.value, renew_answer::renewed);
}

TEST_F(replicated_store, ack_all_counts_the_replicas_the_master_had_at_connect) {
  auto store = sentinel_store(io_, *group_, "a", 0);
  const auto r = util::acquire(io_, *store);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
  const auto ok = renew(io_, *store);
  ASSERT_FALSE(ok.error) << ok.error.message();
}

// replica_ack all never reads "no replica connected" as "all of them":
// with the only replica down before any candidate ever ran, a fresh store
// is refused before the grant, so no token is spent and nothing is written.
TEST_F(replicated_store, ack_all_with_its_only_replica_down_grants_nothing_and_spends_no_token) {
  kill_replica();
  auto store = sentinel_store(io_, *group_, "a", 0);
  const auto r = util::acquire(io_, *store);
  ASSERT_TRUE(r.error) << "acquired with no replica to acknowledge it";
  EXPECT_EQ(r.error.code, store_errc::no_quorum);
  EXPECT_NE(r.error.detail.find("acquire refused: the master has 0 of the 1 replicas "
                                "redis.replica_ack all requires"),
            std::string::npos)
      << r.error.detail;
  EXPECT_EQ(get_one(token_key(util::election)), "1000") << "a refused grant spent a token";
  EXPECT_EQ(get_one(lease_key(util::election)), "");
}

// The count of "all" is kept in the election's record, so it survives the
// connection that saw the replica: the leader's renewal is refused (not
// extended) once the replica is gone, and a candidate that connects after
// (a reconnect, a restart) is refused too, its token unspent.
TEST_F(replicated_store, ack_all_remembers_the_replicas_across_connections) {
  auto leader = sentinel_store(io_, *group_, "a", 0);
  const auto r = util::acquire(io_, *leader);
  ASSERT_FALSE(r.error) << r.error.message();
  ASSERT_TRUE(r.value.acquired());
  EXPECT_EQ(get_one(replicas_key(util::election)), "1");
  kill_replica();
  const auto renewal = renew(io_, *leader);
  ASSERT_TRUE(renewal.error) << "renewed with no replica to acknowledge it";
  EXPECT_NE(renewal.error.detail.find("renewal refused: the master has 0 of the 1 replicas"),
            std::string::npos)
      << renewal.error.detail;
  EXPECT_EQ(release(io_, *leader), release_answer::released);

  auto next = sentinel_store(io_, *group_, "b", 0);
  const auto refused = util::acquire(io_, *next);
  ASSERT_TRUE(refused.error) << "a new connection read all as none";
  EXPECT_NE(refused.error.detail.find("0 of the 1 replicas"), std::string::npos)
      << refused.error.detail;
  EXPECT_EQ(get_one(token_key(util::election)), std::to_string(r.value.token))
      << "a refused grant spent a token";
}

// A grant that its replica did not acknowledge is given back without a
// word: no "acquired", no "released", so that candidates which cannot lead
// do not wake each other in a loop. A watcher hears only the next real term.
TEST_F(replicated_store, a_grant_given_back_for_want_of_acknowledgement_is_never_announced) {
  auto watcher = sentinel_store(io_, *group_, "w");
  std::vector<std::string> heard;
  watcher->watch([&](const store_event& e) {
    if (auto a = std::get_if<store_events::acquired>(&e)) heard.push_back("acquired " + a->holder);
    if (std::holds_alternative<store_events::released>(e)) heard.push_back("released");
  });
  ASSERT_TRUE(util::run_until(io_, [&] { return util::wakeups_of(*watcher) == "subscribed"; }));
  heard.clear();  // (the first subscribe counts as a wake-up)
  freeze_replica();
  auto store = sentinel_store(io_, *group_, "a", 0);
  const auto given_back = util::acquire(io_, *store);
  ASSERT_TRUE(given_back.error) << "acquired without the replica";
  EXPECT_NE(given_back.error.detail.find("released it"), std::string::npos)
      << given_back.error.detail;
  thaw_replica();
  // A real term, announced from begin to end: heard after anything before.
  auto other = sentinel_store(io_, *group_, "c");
  ASSERT_TRUE(util::acquire(io_, *other).value.acquired());
  EXPECT_EQ(release(io_, *other), release_answer::released);
  ASSERT_TRUE(util::run_until(io_, [&] { return heard.size() >= 2; }));
  util::run_for(io_, 200ms);
  EXPECT_EQ(heard, (std::vector<std::string>{"acquired c", "released"}));
}

// A failover promotes one of the replicas all counted: the count drops by
// that one (never below one), so a master that had two replicas keeps a
// leader once the other is its replica. Here the record says another
// server wrote it, and that the group had two replicas.
TEST_F(replicated_store, ack_all_counts_one_replica_fewer_after_a_failover) {
  group_->command(master_, {"SET", epoch_key(util::election), "0123456789abcdef"});
  group_->command(master_, {"SET", replicas_key(util::election), "2"});
  auto store = sentinel_store(io_, *group_, "a", 0);
  const auto held = util::acquire(io_, *store);
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, acquire_outcome::held_back);
  EXPECT_EQ(get_one(replicas_key(util::election)), "1");
  // The hold-back is not what this test is about.
  group_->command(master_, {"DEL", fence_key(util::election)});
  const auto r = util::acquire(io_, *store);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
}

TEST_F(replicated_store, a_record_another_server_wrote_holds_acquisitions_back_as_a_failover) {
  // As after a failover: the epoch names the old master's run_id.
  group_->command(master_, {"SET", epoch_key(util::election), "0123456789abcdef"});
  auto store = sentinel_store(io_, *group_, "a");
  std::vector<store_events::reset> resets;
  store->watch([&](const store_event& e) {
    if (auto r = std::get_if<store_events::reset>(&e)) resets.push_back(*r);
  });
  const auto held = util::acquire(io_, *store);
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, acquire_outcome::held_back);
  ASSERT_EQ(resets.size(), 1u);
  EXPECT_NE(resets[0].why.find("written by another server"), std::string::npos) << resets[0].why;
  EXPECT_FALSE(resets[0].record_missing);
  // The counter now follows the server's clock (microseconds since 1970).
  const auto counter = std::stoull(get(token_key(util::election)).at(0));
  EXPECT_GT(counter, 1'600'000'000'000'000ull);
  // A second store, which never saw the old server, is held back too.
  auto other = sentinel_store(io_, *group_, "b");
  EXPECT_EQ(util::acquire(io_, *other).value.outcome, acquire_outcome::held_back);
}

// A candidate connected to the old master sees one failover twice: its
// node's run_id check on reaching the new master, then its acquire script's
// epoch check there. Watchers (the log) hear of it once.
TEST_F(replicated_store, one_failover_is_told_once) {
  auto store = sentinel_store(io_, *group_, "a");
  std::vector<store_events::reset> resets;
  store->watch([&](const store_event& e) {
    if (auto r = std::get_if<store_events::reset>(&e)) resets.push_back(*r);
  });
  const auto first = util::acquire(io_, *store);
  ASSERT_FALSE(first.error) << first.error.message();
  ASSERT_TRUE(first.value.acquired());
  EXPECT_EQ(release(io_, *store), release_answer::released);
  group_->wait_for_replication(master_);
  group_->sentinel(0).command({"SENTINEL", "FAILOVER", group_->master_name()});
  group_->wait_for_failover(master_, 30s);
  // The sentinel demotes the old master after it promoted the new one; a
  // node changing its role drops its clients, the asking one too.
  ASSERT_TRUE(testing::wait_until(
      [&] {
        try {
          return group_->role_of(master_) == "slave";
        } catch (const std::exception&) {
          return false;
        }
      },
      20s, 50ms));
  // Until the store has found the new master, an attempt may fail.
  std::optional<acquire_outcome> outcome;
  for (int i = 0; i < 50 && !outcome; ++i) {
    const auto r = util::acquire(io_, *store);
    if (!r.error) outcome = r.value.outcome;
  }
  ASSERT_TRUE(outcome) << "the store never reached the new master";
  EXPECT_EQ(*outcome, acquire_outcome::held_back);
  util::run_for(io_, 200ms);
  ASSERT_EQ(resets.size(), 1u) << (resets.empty() ? "" : resets.back().why);
  EXPECT_FALSE(store->status().last_reset.empty());
}

// After a real promotion (SENTINEL FAILOVER, 2 replicas), what the epoch
// check makes of the acked key (replica_ack all): the record's epoch names
// the old master in each row, as right after a failover; only a record whose
// last grant or renewal came from the server's previous replication ID,
// written while this server already ran (so it followed that master live),
// lets acquisitions go without a hold-back.
TEST(replicated_sentinel_store, ack_all_holds_back_unless_the_new_master_followed_the_writer_live) {
  redis_sentinel_group_options o = one_sentinel();
  o.replicas = 2;
  redis_sentinel_group group(o);
  const auto old_master = group.initial_master_port();
  group.command(old_master, {"SET", token_key(util::election), "1000"});
  group.wait_for_replication(old_master);
  group.sentinel(0).command({"SENTINEL", "FAILOVER", group.master_name()});
  const auto master = group.wait_for_failover(old_master, 30s);
  const auto field = [&](const std::string& section, const std::string& name) {
    return info_field(group.command(master, {"INFO", section}).at(0), name);
  };
  // Both replicas follow the new master (replica_ack all needs them).
  ASSERT_TRUE(testing::wait_until(
      [&] { return field("replication", "connected_slaves") == "2"; }, 30s, 100ms))
      << group.log_tails();
  const auto previous_id = field("replication", "master_replid2");
  ASSERT_EQ(previous_id.size(), 40u);
  // The server must have run for longer than the ttl before the write.
  constexpr auto ttl = 2s;
  ASSERT_TRUE(testing::wait_until(
      [&] { return std::stoll(field("server", "uptime_in_seconds")) >= 4; }, 10s, 100ms));
  const auto now_ms = [&] {
    const auto t = group.command(master, {"TIME"});
    return std::stoll(t.at(0)) * 1000 + std::stoll(t.at(1)) / 1000;
  };
  const auto started_ms =
      now_ms() - std::stoll(field("server", "uptime_in_seconds")) * 1000 - 1000;
  struct row {
    const char* what;
    int ack;
    std::optional<std::string> acked;  // nullopt = no acked key
    acquire_outcome expected;
  };
  const std::string other_id(40, 'a');
  const std::vector<row> rows{
      {"followed the writer live", 0, previous_id + " " + std::to_string(now_ms()),
       acquire_outcome::acquired},
      {"the write predates its start (loaded from a file)", 0,
       previous_id + " " + std::to_string(started_ms), acquire_outcome::held_back},
      {"the write came from another history", 0, other_id + " " + std::to_string(now_ms()),
       acquire_outcome::held_back},
      {"no acknowledged write recorded", 0, std::nullopt, acquire_outcome::held_back},
      {"replica_ack off", -1, previous_id + " " + std::to_string(now_ms()),
       acquire_outcome::held_back},
  };
  int n = 0;
  for (const auto& r : rows) {
    SCOPED_TRACE(r.what);
    for (const auto& key : {lease_key(util::election), fence_key(util::election),
                            acked_key(util::election), holder_key(util::election)}) {
      group.command(master, {"DEL", key});
    }
    group.command(master, {"SET", epoch_key(util::election), "0123456789abcdef"});
    if (r.acked) group.command(master, {"SET", acked_key(util::election), *r.acked});
    boost::asio::io_context io;
    auto store = sentinel_store(io, group, "n" + std::to_string(++n), r.ack, ttl);
    std::vector<store_events::reset> resets;
    store->watch([&](const store_event& e) {
      if (auto x = std::get_if<store_events::reset>(&e)) resets.push_back(*x);
    });
    const auto a = util::acquire(io, *store);
    ASSERT_FALSE(a.error) << a.error.message();
    EXPECT_EQ(a.value.outcome, r.expected);
    EXPECT_EQ(resets.size(), r.expected == acquire_outcome::held_back ? 1u : 0u);
    // The record names this server now; the counter follows its clock.
    EXPECT_EQ(group.command(master, {"GET", epoch_key(util::election)}).at(0),
              field("server", "run_id"));
    if (a.value.acquired()) {
      // The grant recorded this master's own replication ID for the next switch.
      EXPECT_EQ(group.command(master, {"GET", acked_key(util::election)}).at(0).substr(0, 40),
                field("replication", "master_replid"));
      EXPECT_EQ(release(io, *store), release_answer::released);
    }
  }
}

TEST_F(replicated_store, tokens_are_at_least_the_servers_clock) {
  auto store = sentinel_store(io_, *group_, "a");
  const auto before = std::stoull(group_->command(master_, {"TIME"}).at(0)) * 1'000'000ull;
  const auto r = util::acquire(io_, *store);
  ASSERT_FALSE(r.error) << r.error.message();
  ASSERT_TRUE(r.value.acquired());
  EXPECT_GE(r.value.token, before);
}

// The sentinels and the master each with their own password: the
// sentinels' from a file (read at every connection), the master's as given.
TEST(replicated_sentinel_store, sentinels_and_master_each_use_their_own_password) {
  redis_sentinel_group_options options = one_sentinel();
  options.requirepass = "master-secret";
  options.sentinel_requirepass = "sentinel-secret";
  redis_sentinel_group group(options);
  group.command(group.initial_master_port(), {"SET", token_key(util::election), "1000"});
  const auto dir = std::filesystem::temp_directory_path() /
                   ("baton-sentinel-pw-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = (dir / "sentinel").string();
  std::ofstream(file) << "sentinel-secret\n";

  boost::asio::io_context io;
  auto make = [&](const std::string& sentinel_file) {
    redis_detail::sentinel_locator_options s;
    for (auto port : group.sentinel_ports()) {
      redis_endpoint e;
      e.port = port;
      s.sentinels.push_back(e);
    }
    s.master_name = group.master_name();
    s.password_file = sentinel_file;
    redis_store_options o;
    o.identity = {util::election, "a", 5s};
    o.password = "master-secret";
    o.locator = redis_detail::sentinel_locator::create(io, std::move(s));
    o.replicated = true;
    return std::make_unique<redis_store>(io, std::move(o));
  };
  auto store = make(file);
  const auto ok = util::acquire(io, *store);
  EXPECT_FALSE(ok.error) << ok.error.message();
  EXPECT_TRUE(ok.value.acquired());

  // Without the sentinels' password nobody names the master, and the
  // error says which sentinel refused and why.
  auto refused = make("");
  const auto r = util::acquire(io, *refused);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error.code, store_errc::unavailable);
  EXPECT_NE(r.error.detail.find("no sentinel named the master"), std::string::npos) << r.error.detail;
  EXPECT_NE(r.error.detail.find("NOAUTH"), std::string::npos) << r.error.detail;
  EXPECT_EQ(r.error.detail.find("sentinel-secret"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// --- Cluster ----------------------------------------------------------------

std::unique_ptr<redis_store> cluster_store(boost::asio::io_context& io, const redis_cluster& c,
                                           const std::string& node) {
  redis_detail::cluster_locator_options l;
  for (auto port : c.ports()) {
    redis_endpoint e;
    e.port = port;
    l.seeds.push_back(e);
  }
  l.key = lease_key(util::election);
  redis_store_options o;
  o.identity = {util::election, node, 5s};
  o.locator = redis_detail::cluster_locator::create(io, std::move(l));
  o.replicated = true;
  o.sharded_pubsub = true;
  o.kind = "cluster";
  return std::make_unique<redis_store>(io, std::move(o));
}

// The seed node that owns the slot is the one baton works with: its status
// row shows the link in use, even when another seed answered the slot map
// (it is listed last here) and its own query connection was never opened.
// A seed holds no lease copy, so it never claims one.
TEST(replicated_cluster_store, the_seed_that_is_the_master_shows_the_link_in_use) {
  testing::redis_cluster_options options;
  options.replicas_per_master = 0;
  redis_cluster cluster(options);
  const auto owner = cluster.master_port_for_slot(cluster.key_slot(lease_key(util::election)));
  cluster.command(owner, {"SET", token_key(util::election), "1000"});
  redis_detail::cluster_locator_options l;
  std::vector<unsigned short> ports;
  for (auto port : cluster.ports()) {
    if (port != owner) ports.push_back(port);
  }
  ports.push_back(owner);
  for (auto port : ports) {
    redis_endpoint e;
    e.port = port;
    l.seeds.push_back(e);
  }
  l.key = lease_key(util::election);
  boost::asio::io_context io;
  redis_store_options o;
  o.identity = {util::election, "a", 5s};
  o.locator = redis_detail::cluster_locator::create(io, std::move(l));
  o.replicated = true;
  o.sharded_pubsub = true;
  o.kind = "cluster";
  redis_store store(io, std::move(o));
  const auto r = util::acquire(io, store);
  ASSERT_FALSE(r.error) << r.error.message();
  ASSERT_TRUE(r.value.acquired());
  const auto members = store.status().members;
  ASSERT_EQ(members.size(), ports.size());
  EXPECT_EQ(members.back().link, link_state::connected)
      << "the slot's master, in use, shown as " << to_string(members.back().link);
  for (const auto& m : members) EXPECT_FALSE(m.holds_lease) << m.endpoint;
}

TEST(replicated_cluster_store, follows_its_slot_through_a_migration) {
  testing::redis_cluster_options options;
  options.replicas_per_master = 0;
  redis_cluster cluster(options);
  const int slot = cluster.key_slot(lease_key(util::election));
  const auto owner = cluster.master_port_for_slot(slot);
  cluster.command(owner, {"SET", token_key(util::election), "1000"});
  boost::asio::io_context io;
  auto store = cluster_store(io, cluster, "a");
  const auto r = util::acquire(io, *store);
  ASSERT_FALSE(r.error) << r.error.message();
  ASSERT_TRUE(r.value.acquired());
  unsigned short target = 0;
  for (auto port : cluster.master_ports()) {
    if (port != owner) target = port;
  }
  // Keys moved, slot still migrating: the source answers ASK.
  cluster.begin_migration(slot, target);
  ASSERT_GT(cluster.move_keys(slot), 0u);
  auto during = renew(io, *store);
  ASSERT_FALSE(during.error) << during.error.message();
  EXPECT_EQ(during.value, renew_answer::renewed);
  // Slot moved: MOVED, and the store follows it for good.
  cluster.finish_migration(slot);
  auto after = renew(io, *store);
  ASSERT_FALSE(after.error) << after.error.message();
  EXPECT_EQ(after.value, renew_answer::renewed);
  EXPECT_NE(store->status().endpoint.find(std::to_string(target)), std::string::npos)
      << store->status().endpoint;
}

}  // namespace
}  // namespace baton
