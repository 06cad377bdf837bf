// Redis Cluster routing without a cluster: key slots against the values a
// real server gives (`CLUSTER KEYSLOT`), slot maps in the shapes Redis 7 sends
// for CLUSTER SHARDS and CLUSTER SLOTS (copied from a three-node test cluster),
// redirection error texts, and the malformed replies that must become errors
// naming their cause rather than a wrong node or a crash.
#include "redis/cluster_routing.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "redis/redis_error.hpp"

namespace {

using baton::redis_errc;
using baton::redis_reply;
using namespace baton::redis_detail;
using r = baton::redis_reply;
using fields = std::vector<std::pair<std::string, redis_reply>>;

const std::string id_a = "80aea7380e44f30495b8299dacf7308d9ecc39c3";
const std::string id_b = "b4dfcf1d51aaf86f59c9c2491a5e97d155fbe4a7";
const std::string id_c = "d3773ff0976cdb9cb3925f2c086079360505ba71";

r s(std::string v) { return r::string(std::move(v)); }
r i(long long v) { return r::integer_reply(v); }

// A RESP2 map: a flat key, value, key, value... array.
r map(const fields& f) {
  std::vector<r> flat;
  for (const auto& [key, value] : f) {
    flat.push_back(s(key));
    flat.push_back(value);
  }
  return r::array(std::move(flat));
}

// A node's fields as Redis 7.0 sends them (see addNodeDetailsToShardReply).
fields node_fields(const std::string& id, long long port, const std::string& role,
                   const std::string& health = "online") {
  return {{"id", s(id)},          {"port", i(port)},
          {"ip", s("127.0.0.1")}, {"endpoint", s("127.0.0.1")},
          {"role", s(role)},      {"replication-offset", i(14)},
          {"health", s(health)}};
}

void put(fields& f, const std::string& key, r value) {
  for (auto& [k, v] : f) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  f.emplace_back(key, std::move(value));
}

void drop(fields& f, const std::string& key) {
  std::erase_if(f, [&](const auto& kv) { return kv.first == key; });
}

r shard(std::vector<r> slots, std::vector<r> nodes) {
  return map({{"slots", r::array(std::move(slots))}, {"nodes", r::array(std::move(nodes))}});
}

// One shard serving 0-100 whose only node has `f`.
r one_node(const fields& f) { return r::array({shard({i(0), i(100)}, {map(f)})}); }

// The CLUSTER SHARDS reply of the test cluster: node a (with a replica c)
// serves 0-5000 and 6000-16383, node b serves 5001-5999.
r two_shards() {
  auto a = node_fields(id_a, 50851, "master");
  a.insert(a.begin() + 4, {"hostname", s("node1.example")});
  return r::array({
      shard({i(5001), i(5999)}, {map(node_fields(id_b, 37863, "master"))}),
      shard({i(0), i(5000), i(6000), i(16383)}, {map(a), map(node_fields(id_c, 32939, "replica"))}),
  });
}

// ---- key slots --------------------------------------------------------------

TEST(ClusterKeySlot, crc16_is_xmodem) {
  EXPECT_EQ(crc16("123456789"), 0x31C3);
  EXPECT_EQ(crc16(""), 0);
}

TEST(ClusterKeySlot, matches_the_slots_redis_computes) {
  // Each from `redis-cli cluster keyslot` against redis-server 7.0.
  EXPECT_EQ(key_slot("123456789"), 12739);
  EXPECT_EQ(key_slot("foo"), 12182);
  EXPECT_EQ(key_slot("bar"), 5061);
  EXPECT_EQ(key_slot("somekey"), 11058);
  EXPECT_EQ(key_slot("a"), 15495);
  EXPECT_EQ(key_slot(""), 0);
  EXPECT_EQ(key_slot("{"), 4092);
  EXPECT_EQ(key_slot("x{y"), 2740);
  // Bytes above 0x7f must not be sign-extended.
  EXPECT_EQ(key_slot("\xff\xfe"), 3374);
  // An embedded NUL is part of the key (a leading one leaves CRC16 at 0).
  EXPECT_EQ(key_slot(std::string_view("\0a", 2)), 15495);
}

TEST(ClusterKeySlot, a_hash_tag_keeps_keys_together) {
  EXPECT_EQ(key_slot("{user1000}.following"), 3443);
  EXPECT_EQ(key_slot("{user1000}.followers"), 3443);
  EXPECT_EQ(key_slot("baton:{election}:lease"), 5218);
  EXPECT_EQ(key_slot("baton:{election}:token"), 5218);
  EXPECT_EQ(key_slot("{a}"), key_slot("a"));
  EXPECT_EQ(key_slot("}{a}"), key_slot("a"));
  // Only the first tag counts.
  EXPECT_EQ(key_slot("foo{bar}{zap}"), key_slot("bar"));
}

TEST(ClusterKeySlot, an_empty_or_unclosed_tag_hashes_the_whole_key) {
  EXPECT_EQ(key_slot("foo{}{bar}"), 8363);
  EXPECT_EQ(key_slot("foo{}{bar}"), crc16("foo{}{bar}") % 16384);
  EXPECT_EQ(key_slot("{}"), 15257);
  EXPECT_EQ(key_slot("x{y"), crc16("x{y") % 16384);
  // The tag runs from the first '{' to the next '}': here "{bar".
  EXPECT_EQ(key_slot("foo{{bar}}zap"), 4015);
  EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));
}

TEST(ClusterKeySlot, every_slot_is_below_16384) {
  for (int n = 0; n < 100000; ++n) EXPECT_LT(key_slot("key:" + std::to_string(n)), 16384);
}

// ---- CLUSTER SHARDS ---------------------------------------------------------

TEST(ClusterShards, parses_every_field) {
  auto p = parse_cluster_shards(two_shards());
  ASSERT_FALSE(p.ec) << p.detail;
  ASSERT_EQ(p.value.size(), 2u);
  const auto& second = p.value[1];
  EXPECT_EQ(second.slot_ranges, (std::vector<std::pair<int, int>>{{0, 5000}, {6000, 16383}}));
  ASSERT_EQ(second.nodes.size(), 2u);
  const auto& a = second.nodes[0];
  EXPECT_EQ(a.id, id_a);
  EXPECT_EQ(a.ip, "127.0.0.1");
  EXPECT_EQ(a.endpoint, "127.0.0.1");
  EXPECT_EQ(a.hostname, "node1.example");
  EXPECT_EQ(a.port, 50851);
  EXPECT_EQ(a.tls_port, 0);
  EXPECT_EQ(a.role, "master");
  EXPECT_EQ(a.health, "online");
  EXPECT_EQ(second.nodes[1].role, "replica");
  EXPECT_EQ(second.nodes[1].hostname, "");
}

TEST(ClusterShards, finds_the_master_of_each_slot) {
  const auto reply = two_shards();
  for (int slot : {0, 1, 4999, 5000, 6000, 12182, 16383}) {
    auto t = master_for_slot(reply, static_cast<std::uint16_t>(slot), false);
    ASSERT_FALSE(t.ec) << slot << ": " << t.detail;
    EXPECT_EQ(t.value.host, "127.0.0.1");
    EXPECT_EQ(t.value.port, 50851) << slot;
    EXPECT_EQ(t.value.id, id_a);
  }
  for (int slot : {5001, 5061, 5999}) {
    auto t = master_for_slot(reply, static_cast<std::uint16_t>(slot), false);
    ASSERT_FALSE(t.ec) << slot << ": " << t.detail;
    EXPECT_EQ(t.value.port, 37863) << slot;
    EXPECT_EQ(t.value.id, id_b);
  }
}

TEST(ClusterShards, prefers_the_endpoint_then_the_ip) {
  auto f = node_fields(id_a, 7000, "master");
  put(f, "endpoint", s("node1.example"));
  EXPECT_EQ(master_for_slot(one_node(f), 5, false).value.host, "node1.example");
  put(f, "ip", s("10.0.0.5"));
  put(f, "endpoint", s("?"));
  EXPECT_EQ(master_for_slot(one_node(f), 5, false).value.host, "10.0.0.5");
  put(f, "endpoint", s(""));
  EXPECT_EQ(master_for_slot(one_node(f), 5, false).value.host, "10.0.0.5");
  drop(f, "endpoint");
  EXPECT_EQ(master_for_slot(one_node(f), 5, false).value.host, "10.0.0.5");
  // A lone node that does not know its own address (unknown-endpoint): ""
  // means the node that answered.
  put(f, "ip", s(""));
  put(f, "endpoint", s(""));
  auto t = master_for_slot(one_node(f), 5, false);
  ASSERT_FALSE(t.ec) << t.detail;
  EXPECT_EQ(t.value.host, "");
  EXPECT_EQ(t.value.port, 7000);
}

TEST(ClusterShards, picks_the_tls_port_for_tls_connections) {
  auto f = node_fields(id_a, 7000, "master");
  put(f, "tls-port", i(7443));
  EXPECT_EQ(master_for_slot(one_node(f), 5, true).value.port, 7443);
  EXPECT_EQ(master_for_slot(one_node(f), 5, false).value.port, 7000);
  // No TLS port announced: the one port there is.
  drop(f, "tls-port");
  EXPECT_EQ(master_for_slot(one_node(f), 5, true).value.port, 7000);
  // A TLS-only node (port 0 is not sent) cannot serve a plain connection.
  put(f, "tls-port", i(7443));
  drop(f, "port");
  EXPECT_EQ(master_for_slot(one_node(f), 5, true).value.port, 7443);
  auto plain = master_for_slot(one_node(f), 5, false);
  EXPECT_EQ(plain.ec, redis_errc::unexpected_reply);
  EXPECT_NE(plain.detail.find("no plain TCP port"), std::string::npos) << plain.detail;
}

TEST(ClusterShards, accepts_numbers_as_strings) {
  auto f = node_fields(id_a, 0, "master");
  put(f, "port", s("7000"));
  put(f, "tls-port", s("7443"));
  put(f, "replication-offset", s("99"));
  auto reply = r::array({shard({s("0"), s("16383")}, {map(f)})});
  auto t = master_for_slot(reply, 16383, true);
  ASSERT_FALSE(t.ec) << t.detail;
  EXPECT_EQ(t.value.port, 7443);
}

TEST(ClusterShards, ignores_unknown_keys) {
  auto f = node_fields(id_a, 7000, "master");
  put(f, "availability-zone", r::array({s("x")}));
  auto reply = r::array({map({{"slots", r::array({i(0), i(16383)})},
                              {"shard-id", s("abc")},
                              {"nodes", r::array({map(f)})},
                              {"future", r::nil()}})});
  auto t = master_for_slot(reply, 9, false);
  ASSERT_FALSE(t.ec) << t.detail;
  EXPECT_EQ(t.value.id, id_a);
}

TEST(ClusterShards, ranges_need_not_be_sorted) {
  auto reply =
      r::array({shard({i(9000), i(16383), i(0), i(10)}, {map(node_fields(id_a, 7000, "master"))})});
  EXPECT_FALSE(master_for_slot(reply, 5, false).ec);
  EXPECT_FALSE(master_for_slot(reply, 9000, false).ec);
  EXPECT_EQ(master_for_slot(reply, 11, false).ec, redis_errc::no_master);
}

TEST(ClusterShards, an_unserved_slot_is_an_error) {
  auto t = master_for_slot(two_shards(), 5000, false);
  EXPECT_FALSE(t.ec);
  auto reply = r::array({shard({i(0), i(1233)}, {map(node_fields(id_a, 7000, "master"))})});
  t = master_for_slot(reply, 1234, false);
  EXPECT_EQ(t.ec, redis_errc::no_master);
  EXPECT_EQ(t.detail, "slot 1234 is not served by any shard: the cluster is not fully set up");
  // Worth asking again later, like a sentinel that knows no master yet.
  EXPECT_EQ(t.ec, baton::store_errc::unavailable);
  // A fresh cluster: shards without slots, or none at all.
  EXPECT_EQ(
      master_for_slot(r::array({shard({}, {map(node_fields(id_a, 7000, "master"))})}), 0, false).ec,
      redis_errc::no_master);
  EXPECT_EQ(master_for_slot(r::array({}), 0, false).ec, redis_errc::no_master);
}

TEST(ClusterShards, a_failed_master_is_an_error) {
  for (const char* health : {"fail", "failed"}) {
    auto reply = r::array({shard({i(0), i(16383)}, {map(node_fields(id_a, 7000, "master", health)),
                                                    map(node_fields(id_c, 7001, "replica"))})});
    auto t = master_for_slot(reply, 0, false);
    EXPECT_EQ(t.ec, redis_errc::no_master) << health;
    EXPECT_NE(t.detail.find("health " + std::string(health)), std::string::npos) << t.detail;
    EXPECT_NE(t.detail.find(id_a), std::string::npos) << t.detail;
  }
}

TEST(ClusterShards, a_promoted_master_wins_over_the_failed_one) {
  auto reply = r::array({shard({i(0), i(16383)}, {map(node_fields(id_a, 7000, "master", "fail")),
                                                  map(node_fields(id_c, 7001, "master"))})});
  auto t = master_for_slot(reply, 0, false);
  ASSERT_FALSE(t.ec) << t.detail;
  EXPECT_EQ(t.value.id, id_c);
  EXPECT_EQ(t.value.port, 7001);
}

TEST(ClusterShards, a_loading_master_is_still_the_master) {
  // Its LOADING errors are needs_new_master's business, not the map's.
  auto t = master_for_slot(one_node(node_fields(id_a, 7000, "master", "loading")), 0, false);
  ASSERT_FALSE(t.ec) << t.detail;
  EXPECT_EQ(t.value.id, id_a);
}

TEST(ClusterShards, a_shard_without_master_is_an_error) {
  auto reply = r::array({shard({i(0), i(16383)}, {map(node_fields(id_c, 7001, "replica"))})});
  auto t = master_for_slot(reply, 0, false);
  EXPECT_EQ(t.ec, redis_errc::no_master);
  EXPECT_NE(t.detail.find("no master"), std::string::npos) << t.detail;
  EXPECT_EQ(master_for_slot(r::array({shard({i(0), i(16383)}, {})}), 0, false).ec,
            redis_errc::no_master);
}

TEST(ClusterShards, a_slot_claimed_twice_is_an_error) {
  auto reply = r::array({shard({i(0), i(100)}, {map(node_fields(id_a, 7000, "master"))}),
                         shard({i(100), i(200)}, {map(node_fields(id_b, 7001, "master"))})});
  auto t = master_for_slot(reply, 100, false);
  EXPECT_EQ(t.ec, redis_errc::unexpected_reply);
  EXPECT_NE(t.detail.find("two shards"), std::string::npos) << t.detail;
  EXPECT_EQ(master_for_slot(reply, 99, false).value.id, id_a);
  EXPECT_EQ(master_for_slot(reply, 101, false).value.id, id_b);
}

TEST(ClusterShards, an_error_reply_keeps_its_text) {
  auto t =
      master_for_slot(r::error("ERR unknown subcommand 'SHARDS'. Try CLUSTER HELP."), 0, false);
  EXPECT_EQ(t.ec, redis_errc::server_error);
  EXPECT_EQ(t.detail, "CLUSTER SHARDS: ERR unknown subcommand 'SHARDS'. Try CLUSTER HELP.");
  EXPECT_EQ(master_for_slot(r::error("NOPERM this user has no permissions"), 0, false).ec,
            redis_errc::permission_denied);
}

TEST(ClusterShards, a_reply_that_is_not_an_array_is_unexpected) {
  for (const auto& reply : {r::nil(), i(1), s("slots"), r::status("OK")}) {
    auto t = master_for_slot(reply, 0, false);
    EXPECT_EQ(t.ec, redis_errc::unexpected_reply) << baton::describe_reply(reply);
    EXPECT_NE(t.detail.find("CLUSTER SHARDS: unexpected reply"), std::string::npos) << t.detail;
  }
}

// The error code and detail of parsing `reply` as CLUSTER SHARDS, which must
// fail as unexpected_reply with a detail containing `expected`.
void expect_malformed(const r& reply, const std::string& expected) {
  auto p = parse_cluster_shards(reply);
  EXPECT_EQ(p.ec, redis_errc::unexpected_reply) << expected;
  EXPECT_NE(p.detail.find(expected), std::string::npos) << p.detail;
  EXPECT_EQ(p.detail.rfind("CLUSTER SHARDS: ", 0), 0u) << p.detail;
  // The lookup reports the same.
  EXPECT_EQ(master_for_slot(reply, 0, false).ec, redis_errc::unexpected_reply);
}

TEST(ClusterShards, malformed_shards_are_unexpected) {
  const auto node = map(node_fields(id_a, 7000, "master"));
  expect_malformed(r::array({i(1)}), "shard 0: the shard is integer 1, not a map");
  expect_malformed(r::array({shard({i(0), i(1)}, {node}), s("x")}), "shard 1: ");
  expect_malformed(r::array({shard({i(0), i(1)}, {node}), s("nodes")}),
                   "shard 1: the shard is string \"nodes\", not a map");
  expect_malformed(r::array({r::array({s("slots"), r::array({}), s("nodes")})}),
                   "odd number of elements (3)");
  expect_malformed(r::array({r::array({i(1), r::array({})})}), "a key that is integer 1");
  expect_malformed(r::array({map({{"nodes", r::array({node})}})}), "no \"slots\"");
  expect_malformed(r::array({map({{"slots", r::array({i(0), i(1)})}})}), "no \"nodes\"");
  expect_malformed(r::array({map({{"slots", i(0)}, {"nodes", r::array({node})}})}),
                   "\"slots\" is integer 0, not an array");
  expect_malformed(r::array({map({{"slots", r::array({i(0), i(1)})}, {"nodes", s("a")}})}),
                   "\"nodes\" is string \"a\", not an array");
}

TEST(ClusterShards, malformed_slot_ranges_are_unexpected) {
  const auto node = map(node_fields(id_a, 7000, "master"));
  expect_malformed(r::array({shard({i(0), i(1), i(2)}, {node})}), "odd number of elements (3)");
  expect_malformed(r::array({shard({i(-1), i(1)}, {node})}), "is -1, outside 0..16383");
  expect_malformed(r::array({shard({i(0), i(16384)}, {node})}), "is 16384, outside 0..16383");
  expect_malformed(r::array({shard({i(0), i(1LL << 40)}, {node})}), "outside 0..16383");
  expect_malformed(r::array({shard({s("zero"), i(1)}, {node})}), "not a number");
  expect_malformed(r::array({shard({s(""), i(1)}, {node})}), "not a number");
  expect_malformed(r::array({shard({s("1 "), i(1)}, {node})}), "not a number");
  expect_malformed(r::array({shard({r::nil(), i(1)}, {node})}), "is nil, not a number");
  expect_malformed(r::array({shard({r::array({}), i(1)}, {node})}), "not a number");
  expect_malformed(r::array({shard({i(200), i(100)}, {node})}),
                   "slot range 200-100 runs backwards");
  // A reply of only good shards next to one bad one is still refused.
  expect_malformed(r::array({shard({i(0), i(100)}, {node}), shard({i(300), i(200)}, {node})}),
                   "shard 1: slot range 300-200 runs backwards");
}

TEST(ClusterShards, malformed_nodes_are_unexpected) {
  auto with = [](void (*change)(fields&)) {
    auto f = node_fields(id_a, 7000, "master");
    change(f);
    return one_node(f);
  };
  expect_malformed(r::array({shard({i(0), i(1)}, {i(3)})}), "node 0: the node is integer 3");
  expect_malformed(r::array({shard({i(0), i(1)}, {r::array({s("id"), s(id_a), s("port")})})}),
                   "node 0: the node has an odd number of elements (3)");
  expect_malformed(with([](fields& f) { drop(f, "id"); }), "has no \"id\"");
  expect_malformed(with([](fields& f) { put(f, "id", s("")); }), "has no \"id\"");
  expect_malformed(with([](fields& f) { put(f, "id", r::array({})); }),
                   "\"id\" is array[0], not text");
  expect_malformed(with([](fields& f) { drop(f, "ip"); }), "has no \"ip\"");
  expect_malformed(with([](fields& f) { put(f, "ip", r::nil()); }), "\"ip\" is nil, not text");
  expect_malformed(with([](fields& f) { drop(f, "role"); }), "has no \"role\"");
  expect_malformed(with([](fields& f) { put(f, "role", s("primary")); }),
                   "unknown role \"primary\"");
  expect_malformed(with([](fields& f) { put(f, "health", r::array({})); }), "\"health\" is array");
  expect_malformed(with([](fields& f) { put(f, "endpoint", r::nil()); }), "\"endpoint\" is nil");
  expect_malformed(with([](fields& f) { put(f, "hostname", r::array({})); }), "\"hostname\"");
  expect_malformed(with([](fields& f) { drop(f, "port"); }), "neither \"port\" nor \"tls-port\"");
}

TEST(ClusterShards, bad_ports_are_unexpected) {
  for (const auto& port : {i(-1), i(0), i(65536), i(1LL << 40), i(-(1LL << 62)), s("-6379"),
                           s("6379x"), s("99999999999999999999999"), s(""), r::nil()}) {
    auto f = node_fields(id_a, 7000, "master");
    put(f, "port", port);
    expect_malformed(one_node(f), "\"port\" is ");
    f = node_fields(id_a, 7000, "master");
    put(f, "tls-port", port);
    expect_malformed(one_node(f), "\"tls-port\" is ");
  }
  auto f = node_fields(id_a, 65535, "master");
  EXPECT_EQ(master_for_slot(one_node(f), 0, false).value.port, 65535);
}

TEST(ClusterShards, a_lookup_in_a_map_built_by_hand_checks_the_port) {
  cluster_shard sh;
  sh.slot_ranges = {{0, 16383}};
  cluster_node n;
  n.id = id_a;
  n.role = "master";
  n.port = 70000;
  sh.nodes = {n};
  auto t = master_for_slot(std::vector<cluster_shard>{sh}, 0, false);
  EXPECT_EQ(t.ec, redis_errc::unexpected_reply);
  EXPECT_EQ(t.detail, "slot 0: master " + id_a + " announces the port 70000");
  sh.nodes[0].port = -5;
  EXPECT_EQ(master_for_slot(std::vector<cluster_shard>{sh}, 0, false).ec,
            redis_errc::unexpected_reply);
}

// ---- CLUSTER SLOTS ----------------------------------------------------------

r slots_node(r endpoint, long long port, const std::string& id, fields metadata = {}) {
  return r::array({std::move(endpoint), i(port), s(id), map(metadata)});
}

// The CLUSTER SLOTS reply of the test cluster (cluster-preferred-endpoint-type ip).
r slots_reply() {
  return r::array({
      r::array({i(0), i(5000),
                slots_node(s("127.0.0.1"), 50851, id_a, {{"hostname", s("node1.example")}}),
                slots_node(s("127.0.0.1"), 32939, id_c)}),
      r::array({i(5001), i(5999), slots_node(s("127.0.0.1"), 37863, id_b)}),
      r::array({i(6000), i(16383),
                slots_node(s("127.0.0.1"), 50851, id_a, {{"hostname", s("node1.example")}}),
                slots_node(s("127.0.0.1"), 32939, id_c)}),
  });
}

TEST(ClusterSlots, parses_ranges_into_shards) {
  auto p = parse_cluster_slots(slots_reply());
  ASSERT_FALSE(p.ec) << p.detail;
  ASSERT_EQ(p.value.size(), 3u);
  EXPECT_EQ(p.value[0].slot_ranges, (std::vector<std::pair<int, int>>{{0, 5000}}));
  ASSERT_EQ(p.value[0].nodes.size(), 2u);
  EXPECT_EQ(p.value[0].nodes[0].role, "master");
  EXPECT_EQ(p.value[0].nodes[0].hostname, "node1.example");
  EXPECT_EQ(p.value[0].nodes[0].health, "");
  EXPECT_EQ(p.value[0].nodes[1].role, "replica");
  EXPECT_EQ(p.value[0].nodes[1].id, id_c);
}

TEST(ClusterSlots, finds_the_master_of_each_slot) {
  const auto reply = slots_reply();
  for (int slot : {0, 5000, 6000, 16383}) {
    auto t = master_for_slot_from_slots(reply, static_cast<std::uint16_t>(slot));
    ASSERT_FALSE(t.ec) << t.detail;
    EXPECT_EQ(t.value.host, "127.0.0.1");
    EXPECT_EQ(t.value.port, 50851);
    EXPECT_EQ(t.value.id, id_a);
  }
  auto t = master_for_slot_from_slots(reply, 5061);
  ASSERT_FALSE(t.ec) << t.detail;
  EXPECT_EQ(t.value.port, 37863);
  EXPECT_EQ(t.value.id, id_b);
}

TEST(ClusterSlots, an_unknown_endpoint_falls_back_to_the_ip_then_the_node_asked) {
  // unknown-endpoint: nil, with the ip in the metadata.
  auto reply = r::array(
      {r::array({i(0), i(16383), slots_node(r::nil(), 7000, id_a, {{"ip", s("10.0.0.5")}})})});
  EXPECT_EQ(master_for_slot_from_slots(reply, 1).value.host, "10.0.0.5");
  reply = r::array(
      {r::array({i(0), i(16383), slots_node(s("?"), 7000, id_a, {{"ip", s("10.0.0.5")}})})});
  EXPECT_EQ(master_for_slot_from_slots(reply, 1).value.host, "10.0.0.5");
  // As a lone node that does not know its own address answers.
  reply = r::array({r::array({i(0), i(16383), slots_node(r::nil(), 7000, id_a, {{"ip", s("")}})})});
  auto t = master_for_slot_from_slots(reply, 1);
  ASSERT_FALSE(t.ec) << t.detail;
  EXPECT_EQ(t.value.host, "");
  EXPECT_EQ(t.value.port, 7000);
  // hostname preferred: the hostname is the endpoint.
  reply = r::array({r::array(
      {i(0), i(16383), slots_node(s("node1.example"), 7000, id_a, {{"ip", s("10.0.0.5")}})})});
  EXPECT_EQ(master_for_slot_from_slots(reply, 1).value.host, "node1.example");
}

TEST(ClusterSlots, older_servers_send_fewer_node_fields) {
  // Redis 3.0: [ip, port]; up to 6.2: [ip, port, id].
  auto reply = r::array({r::array({i(0), i(16383), r::array({s("10.0.0.5"), i(7000)})})});
  auto t = master_for_slot_from_slots(reply, 0);
  ASSERT_FALSE(t.ec) << t.detail;
  EXPECT_EQ(t.value.host, "10.0.0.5");
  EXPECT_EQ(t.value.id, "");
  reply = r::array({r::array({i(0), i(16383), r::array({s("10.0.0.5"), i(7000), s(id_a)})})});
  EXPECT_EQ(master_for_slot_from_slots(reply, 0).value.id, id_a);
}

TEST(ClusterSlots, an_unserved_slot_is_an_error) {
  auto t = master_for_slot_from_slots(
      r::array({r::array({i(0), i(1233), slots_node(s("h"), 1, id_a)})}), 1234);
  EXPECT_EQ(t.ec, redis_errc::no_master);
  EXPECT_EQ(t.detail, "slot 1234 is not served by any shard: the cluster is not fully set up");
  EXPECT_EQ(master_for_slot_from_slots(r::array({}), 0).ec, redis_errc::no_master);
}

TEST(ClusterSlots, an_error_reply_keeps_its_text) {
  auto t =
      master_for_slot_from_slots(r::error("ERR This instance has cluster support disabled"), 0);
  EXPECT_EQ(t.ec, redis_errc::server_error);
  EXPECT_EQ(t.detail, "CLUSTER SLOTS: ERR This instance has cluster support disabled");
}

void expect_malformed_slots(const r& reply, const std::string& expected) {
  auto p = parse_cluster_slots(reply);
  EXPECT_EQ(p.ec, redis_errc::unexpected_reply) << expected;
  EXPECT_NE(p.detail.find(expected), std::string::npos) << p.detail;
  EXPECT_EQ(p.detail.rfind("CLUSTER SLOTS: ", 0), 0u) << p.detail;
  EXPECT_EQ(master_for_slot_from_slots(reply, 0).ec, redis_errc::unexpected_reply);
}

TEST(ClusterSlots, malformed_replies_are_unexpected) {
  const auto good = slots_node(s("h"), 7000, id_a);
  expect_malformed_slots(r::nil(), "unexpected reply nil");
  expect_malformed_slots(i(5), "unexpected reply integer 5");
  expect_malformed_slots(r::array({i(0)}), "entry 0: the entry is integer 0");
  expect_malformed_slots(r::array({r::array({i(0), i(1)})}), "not [start, end, master, ...]");
  expect_malformed_slots(r::array({r::array({i(0), i(16384), good})}), "outside 0..16383");
  expect_malformed_slots(r::array({r::array({i(-1), i(1), good})}), "outside 0..16383");
  expect_malformed_slots(r::array({r::array({s("a"), i(1), good})}), "not a number");
  expect_malformed_slots(r::array({r::array({i(9), i(1), good})}), "slot range 9-1 runs backwards");
  expect_malformed_slots(r::array({r::array({i(0), i(1), s("h:1")})}),
                         "master: the node is string");
  expect_malformed_slots(r::array({r::array({i(0), i(1), r::array({s("h")})})}),
                         "master: the node is array[1]");
  expect_malformed_slots(r::array({r::array({i(0), i(1), r::array({r::array({}), i(1)})})}),
                         "master: the endpoint is array[0]");
  expect_malformed_slots(r::array({r::array({i(0), i(1), slots_node(s("h"), 0, id_a)})}),
                         "master: the port is 0");
  expect_malformed_slots(r::array({r::array({i(0), i(1), slots_node(s("h"), 65536, id_a)})}),
                         "master: the port is 65536");
  expect_malformed_slots(r::array({r::array({i(0), i(1), slots_node(s("h"), -1, id_a)})}),
                         "master: the port is -1");
  expect_malformed_slots(r::array({r::array({i(0), i(1), r::array({s("h"), i(1), r::nil()})})}),
                         "master: the node id is nil");
  expect_malformed_slots(
      r::array({r::array({i(0), i(1), r::array({s("h"), i(1), s(id_a), r::array({s("ip")})})})}),
      "metadata has an odd number of elements (1)");
  expect_malformed_slots(
      r::array({r::array({i(0), i(1), r::array({s("h"), i(1), s(id_a), i(7)})})}),
      "metadata is integer 7, not a map");
  expect_malformed_slots(r::array({r::array({i(0), i(1), good, slots_node(s("h"), 99999, id_c)})}),
                         "entry 0: replica 0: the port is 99999");
}

// ---- redirects and other cluster errors -----------------------------------

TEST(ClusterRedirect, parses_moved_and_ask) {
  // Texts as Redis 7.0 sent them.
  auto m = parse_redirect("MOVED 5061 127.0.0.1:37863");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, cluster_redirect::kind::moved);
  EXPECT_EQ(m->slot, 5061);
  EXPECT_EQ(m->host, "127.0.0.1");
  EXPECT_EQ(m->port, 37863);
  auto a = parse_redirect("ASK 12182 127.0.0.1:37863");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, cluster_redirect::kind::ask);
  EXPECT_EQ(a->slot, 12182);
  EXPECT_EQ(a->port, 37863);
}

TEST(ClusterRedirect, hosts_may_be_names_ipv6_or_unknown) {
  auto h = parse_redirect("MOVED 3999 node1.example:6381");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->host, "node1.example");
  auto v6 = parse_redirect("MOVED 1 ::1:6381");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 6381);
  auto full = parse_redirect("ASK 16383 2001:db8::7:0:6380");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->host, "2001:db8::7:0");
  EXPECT_EQ(full->slot, 16383);
  auto bracketed = parse_redirect("MOVED 0 [::1]:6381");
  ASSERT_TRUE(bracketed);
  EXPECT_EQ(bracketed->host, "::1");
  auto same = parse_redirect("MOVED 1 :6380");
  ASSERT_TRUE(same);
  EXPECT_EQ(same->host, "");
  EXPECT_EQ(same->port, 6380);
}

TEST(ClusterRedirect, malformed_texts_are_not_redirects) {
  for (const char* text : {"",
                           "MOVED",
                           "MOVED ",
                           "MOVED 3999",
                           "MOVED 3999 ",
                           "MOVED 3999 127.0.0.1",
                           "MOVED 3999 127.0.0.1:",
                           "MOVED 3999 :",
                           "MOVED 16384 h:1",
                           "MOVED 99999999999 h:1",
                           "MOVED -1 h:1",
                           "MOVED +1 h:1",
                           "MOVED x h:1",
                           "MOVED 1x h:1",
                           "MOVED 1 h:0",
                           "MOVED 1 h:65536",
                           "MOVED 1 h:99999999999999999999",
                           "MOVED 1 h:-5",
                           "MOVED 1 h:+5",
                           "MOVED 1 h:5x",
                           "MOVED  1 h:1",
                           "MOVED 1  h:1",
                           "MOVED 1 h:1 ",
                           "MOVED 1 h:1 extra",
                           "moved 1 h:1",
                           "MOVEDX 1 h:1",
                           "ASKING 1 h:1",
                           "ERR MOVED 1 h:1",
                           " MOVED 1 h:1",
                           "MOVED 1 [::1:6381",
                           "MOVED 1 ::1]:6381",
                           "MOVED 1 [[::1]]:6381",
                           "TRYAGAIN 1 h:1"}) {
    EXPECT_FALSE(parse_redirect(text)) << '"' << text << '"';
  }
}

TEST(ClusterErrors, tryagain_and_clusterdown) {
  EXPECT_TRUE(is_tryagain("TRYAGAIN Multiple keys request during rehashing of slot"));
  EXPECT_TRUE(is_tryagain("TRYAGAIN"));
  EXPECT_FALSE(is_tryagain("TRYAGAINX"));
  EXPECT_FALSE(is_tryagain("ERR TRYAGAIN"));
  EXPECT_FALSE(is_tryagain(""));
  EXPECT_TRUE(is_clusterdown("CLUSTERDOWN The cluster is down"));
  EXPECT_TRUE(is_clusterdown("CLUSTERDOWN Hash slot not served"));
  EXPECT_FALSE(is_clusterdown("CLUSTERDOWNX"));
  EXPECT_FALSE(is_clusterdown("ERR CLUSTERDOWN"));
  EXPECT_FALSE(is_clusterdown("MOVED 1 h:1"));
}

TEST(ClusterErrors, errors_that_need_a_new_master) {
  for (const char* text :
       {"READONLY You can't write against a read only replica.",
        "NOREPLICAS Not enough good replicas to write.",
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
        "LOADING Redis is loading the dataset in memory", "READONLY"}) {
    EXPECT_TRUE(needs_new_master(text)) << text;
  }
  for (const char* text : {"", "ERR", "MOVED 1 h:1", "READONLYX", "LOADINGS x", "ERR READONLY",
                           "CLUSTERDOWN The cluster is down", "TRYAGAIN x"}) {
    EXPECT_FALSE(needs_new_master(text)) << text;
  }
}

TEST(ClusterEndpoint, follows_a_redirect_with_the_same_settings) {
  baton::redis_endpoint via;
  via.host = "seed.example";
  via.port = 6380;
  via.tls = true;
  via.tls_settings.ca_file = "ca.pem";
  via.username = "baton";
  via.password = "secret";
  auto e = endpoint_for(via, "10.0.0.7", 7001);
  EXPECT_EQ(e.host, "10.0.0.7");
  EXPECT_EQ(e.port, 7001);
  EXPECT_TRUE(e.tls);
  EXPECT_EQ(e.tls_settings.ca_file, "ca.pem");
  EXPECT_EQ(e.username, "baton");
  EXPECT_EQ(e.password, "secret");
  // "" = the node that answered.
  auto same = endpoint_for(via, "", 7002);
  EXPECT_EQ(same.host, "seed.example");
  EXPECT_EQ(same.port, 7002);
  // A redirect always names a TCP port.
  baton::redis_endpoint unix_via;
  unix_via.kind = baton::redis_endpoint::transport::unix_socket;
  unix_via.path = "redis.sock";
  auto tcp = endpoint_for(unix_via, "10.0.0.7", 7001);
  EXPECT_EQ(tcp.kind, baton::redis_endpoint::transport::tcp);
  EXPECT_EQ(tcp.path, "");
}

}  // namespace
