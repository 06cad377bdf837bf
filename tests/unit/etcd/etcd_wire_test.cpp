// The gateway's answers read into structs (the shapes etcd 3.4 sends, with
// its omitted zeros and int64 strings), the request bodies, and the answers
// a broken server or proxy could send.
#include "etcd/etcd_wire.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "etcd/base64.hpp"
#include "etcd/http_client.hpp"

namespace baton::etcd_detail {
namespace {

using nlohmann::json;

const char* const header_json =
    R"("header":{"cluster_id":"324952591200643719","member_id":"3319814642761637952","revision":"7","raft_term":"2"})";

json answer(const std::string& rest) {
  return json::parse("{" + std::string(header_json) + rest + "}");
}

TEST(etcd_wire, a_range_answer_reads_its_keys_and_revisions) {
  const auto j = answer(
      R"(,"kvs":[{"key":"YmF0b24vZS9sZWFzZQ==","create_revision":"2","mod_revision":"5","version":"3","value":"bjE6eA==","lease":"2324035635986398733"}],"count":"1")");
  const auto h = read_header(j);
  EXPECT_EQ(h.revision, 7);
  EXPECT_EQ(h.cluster_id, "324952591200643719");
  EXPECT_EQ(h.raft_term, 2);
  const auto kvs = read_range(j);
  ASSERT_EQ(kvs.size(), 1u);
  EXPECT_EQ(kvs[0].key, "baton/e/lease");
  EXPECT_EQ(kvs[0].value, "n1:x");
  EXPECT_EQ(kvs[0].create_revision, 2);
  EXPECT_EQ(kvs[0].mod_revision, 5);
  EXPECT_EQ(kvs[0].version, 3);
  EXPECT_EQ(kvs[0].lease, 2324035635986398733);
}

TEST(etcd_wire, omitted_fields_are_zero) {
  EXPECT_TRUE(read_range(answer("")).empty());
  EXPECT_FALSE(read_txn(answer("")).succeeded);
  EXPECT_TRUE(read_txn(answer(R"(,"succeeded":true)")).succeeded);
  EXPECT_EQ(
      read_keepalive(json::parse(std::string("{\"result\":{") + header_json + R"(,"ID":"5"}})"))
          .ttl_seconds,
      0)
      << "a keepalive of a lease that is gone carries no TTL";
  EXPECT_EQ(read_keepalive(json::parse(std::string("{\"result\":{") + header_json +
                                       R"(,"ID":"5","TTL":"2"}})"))
                .ttl_seconds,
            2);
  EXPECT_EQ(read_time_to_live(answer(R"(,"ID":"5","TTL":"-1")")).ttl_seconds, -1);
  // A lease in its last second (or past it, not yet revoked): the gateway
  // leaves the TTL of 0 out, and says what it was granted with.
  const auto last_second = read_time_to_live(answer(R"(,"ID":"5","grantedTTL":"3")"));
  EXPECT_EQ(last_second.ttl_seconds, 0);
  EXPECT_EQ(last_second.granted_seconds, 3);
}

// A registration's put then a read, as one txn answers them (etcd 3.4's
// gateway: the empty range's kvs left out).
TEST(etcd_wire, a_txns_range_reads_its_keys) {
  const auto j = answer(
      R"(,"succeeded":true,"responses":[{"response_put":{"header":{"revision":"7"}}},{"response_range":{"header":{"revision":"7"},"kvs":[{"key":"YmF0b24vZS9sZWFzZQ==","create_revision":"2","mod_revision":"5","version":"3","value":"bjE6eA=="}],"count":"1"}}])");
  EXPECT_TRUE(read_txn(j).succeeded);
  const auto kvs = read_txn_range(j, 1);
  ASSERT_EQ(kvs.size(), 1u);
  EXPECT_EQ(kvs[0].key, "baton/e/lease");
  EXPECT_EQ(kvs[0].value, "n1:x");
  EXPECT_EQ(kvs[0].mod_revision, 5);
  const auto empty = answer(
      R"(,"succeeded":true,"responses":[{"response_put":{"header":{}}},{"response_range":{"header":{"revision":"7"}}}])");
  EXPECT_TRUE(read_txn_range(empty, 1).empty());
  EXPECT_THROW(read_txn_range(j, 0), std::runtime_error) << "a put is no range";
  EXPECT_THROW(read_txn_range(j, 2), std::runtime_error) << "no third operation";
  EXPECT_THROW(read_txn_range(answer(R"(,"succeeded":true)"), 1), std::runtime_error);
  EXPECT_THROW(read_txn_range(answer(R"(,"responses":[{},{"response_range":[]}])"), 1),
               std::runtime_error);
}

TEST(etcd_wire, a_grant_names_its_lease_and_ttl) {
  const auto g = read_grant(answer(R"(,"ID":"2324035635986398726","TTL":"2")"));
  EXPECT_EQ(g.id, 2324035635986398726);
  EXPECT_EQ(g.ttl_seconds, 2);
  EXPECT_THROW(read_grant(answer(R"(,"TTL":"2")")), std::runtime_error) << "no lease id";
}

TEST(etcd_wire, malformed_answers_throw_naming_what_is_wrong) {
  const std::vector<std::string> bad = {
      R"({"kvs":[]})",                                                       // no header
      "[1,2]",                                                               // not an object
      std::string("{") + header_json + R"(,"kvs":{}})",                      // kvs not an array
      std::string("{") + header_json + R"(,"kvs":[{"key":"!!"}]})",          // key not base64
      std::string("{") + header_json + R"(,"kvs":[{"mod_revision":"x"}]})",  // not an integer
      std::string("{") + header_json + R"(,"succeeded":"yes"})",
      R"({"header":{"revision":"1e3"}})",
  };
  for (const auto& text : bad) {
    const auto j = json::parse(text);
    EXPECT_THROW(
        {
          read_header(j);
          read_range(j);
          read_txn(j);
        },
        std::runtime_error)
        << text;
  }
}

TEST(etcd_wire, int64_fields_as_strings_or_numbers) {
  EXPECT_EQ(int64_field(json::parse(R"({"a":"9223372036854775807"})"), "a"), 9223372036854775807);
  EXPECT_EQ(int64_field(json::parse(R"({"a":12})"), "a"), 12);
  EXPECT_EQ(int64_field(json::parse(R"({})"), "a"), 0);
  EXPECT_FALSE(int64_field(json::parse(R"({"a":"12x"})"), "a").has_value());
  EXPECT_FALSE(int64_field(json::parse(R"({"a":""})"), "a").has_value());
  EXPECT_FALSE(int64_field(json::parse(R"({"a":1.5})"), "a").has_value());
  EXPECT_FALSE(int64_field(json::parse(R"({"a":"99999999999999999999"})"), "a").has_value());
}

TEST(etcd_wire, watch_messages_decode_created_events_and_cancel) {
  const auto created =
      read_watch_message(std::string("{\"result\":{") + header_json + R"(,"created":true}})");
  EXPECT_TRUE(created.created);
  EXPECT_EQ(created.hdr.revision, 7);
  EXPECT_TRUE(created.events.empty());

  const auto events = read_watch_message(
      std::string("{\"result\":{") + header_json +
      R"(,"events":[{"kv":{"key":"YmF0b24vZS9sZWFzZQ==","create_revision":"2","mod_revision":"2","version":"1","value":"bjE6eA==","lease":"9"}},)"
      R"({"type":"DELETE","kv":{"key":"YmF0b24vZS9sZWFzZQ==","mod_revision":"3"},"prev_kv":{"key":"YmF0b24vZS9sZWFzZQ==","mod_revision":"2","value":"bjE6eA=="}}]}})");
  ASSERT_EQ(events.events.size(), 2u);
  EXPECT_FALSE(events.events[0].deleted);
  EXPECT_EQ(events.events[0].kv.version, 1);
  EXPECT_EQ(events.events[0].kv.value, "n1:x");
  EXPECT_TRUE(events.events[1].deleted);
  EXPECT_EQ(events.events[1].kv.mod_revision, 3);
  ASSERT_TRUE(events.events[1].prev.has_value());
  EXPECT_EQ(events.events[1].prev->value, "n1:x");

  const auto cancelled = read_watch_message(
      std::string("{\"result\":{") + header_json +
      R"(,"canceled":true,"compact_revision":"5","cancel_reason":"compacted"}})");
  EXPECT_TRUE(cancelled.canceled);
  EXPECT_EQ(cancelled.compact_revision, 5);

  EXPECT_THROW(
      read_watch_message(R"({"error":{"grpc_code":14,"message":"etcdserver: no leader"}})"),
      std::runtime_error);
  EXPECT_THROW(read_watch_message("{not json"), std::runtime_error);
  EXPECT_THROW(read_watch_message(std::string("{\"result\":{") + header_json +
                                  R"(,"events":[{"type":"PATCH","kv":{}}]}})"),
               std::runtime_error);
}

TEST(etcd_wire, request_bodies_carry_base64_keys_and_int64_strings) {
  EXPECT_EQ(json::parse(grant_request(2)), json::parse(R"({"TTL":"2"})"));
  EXPECT_EQ(json::parse(lease_id_request(77)), json::parse(R"({"ID":"77"})"));
  EXPECT_EQ(json::parse(range_request("a", "b")),
            json::parse(R"({"key":"YQ==","range_end":"Yg=="})"));
  EXPECT_EQ(json::parse(range_request("a", "")), json::parse(R"({"key":"YQ=="})"));
  const auto txn = json::parse(
      txn_request({{"k", "MOD", 5}, {"f", "CREATE", 0}},
                  {{txn_op::kind::put, "k", "v", 9, {}}, {txn_op::kind::remove, "x", {}, 0, {}}}));
  EXPECT_EQ(txn["compare"][0],
            json::parse(R"({"key":"aw==","target":"MOD","result":"EQUAL","mod_revision":"5"})"));
  EXPECT_EQ(txn["compare"][1]["create_revision"], "0");
  EXPECT_EQ(txn["success"][0]["request_put"],
            json::parse(R"({"key":"aw==","value":"dg==","lease":"9"})"));
  EXPECT_EQ(txn["success"][1]["request_delete_range"], json::parse(R"({"key":"eA=="})"));
  txn_op later{txn_op::kind::range, "p/", {}, 0, "p0"};
  later.min_mod_revision = 12;
  const auto reads = json::parse(txn_request({}, {later, {txn_op::kind::range, "k", {}, 0, {}}}));
  EXPECT_EQ(reads["success"][0]["request_range"],
            json::parse(R"({"key":"cC8=","range_end":"cDA=","min_mod_revision":"12"})"));
  EXPECT_EQ(reads["success"][1]["request_range"], json::parse(R"({"key":"aw=="})"));
  const auto watch = json::parse(watch_request("p/", "p0", 8));
  EXPECT_EQ(watch["create_request"]["start_revision"], "8");
  EXPECT_EQ(watch["create_request"]["prev_kv"], true);
}

TEST(etcd_wire, prefix_end_is_the_next_key_after_every_key_with_the_prefix) {
  EXPECT_EQ(prefix_end("baton/e/"), "baton/e0");
  EXPECT_EQ(prefix_end("a\xff"), "b");
  EXPECT_EQ(prefix_end(std::string(1, '\xff')), std::string(1, '\0'));
}

TEST(etcd_wire, gateway_errors_map_onto_store_conditions) {
  struct row {
    unsigned status;
    const char* body;
    store_errc expected;
    const char* message;
  };
  const std::vector<row> rows = {
      {503, R"({"error":"etcdserver: no leader","message":"etcdserver: no leader","code":14})",
       store_errc::unavailable, "etcdserver: no leader"},
      {401,
       R"({"error":"etcdserver: invalid auth token","message":"etcdserver: invalid auth token","code":16})",
       store_errc::auth, "invalid auth token"},
      {403, R"({"message":"etcdserver: permission denied","code":7})", store_errc::auth,
       "permission denied"},
      {504, R"({"message":"context deadline exceeded","code":4})", store_errc::timeout, "deadline"},
      {404, R"({"message":"etcdserver: requested lease not found","code":5})", store_errc::refused,
       "lease not found"},
      {200, R"({"error":{"grpc_code":14,"message":"etcdserver: no leader"}})",
       store_errc::unavailable, "no leader"},
      {502, R"({})", store_errc::refused, "HTTP status 502"},
  };
  for (const auto& r : rows) {
    const auto e = gateway_error(r.status, json::parse(r.body), "http://127.0.0.1:2379");
    ASSERT_TRUE(e) << r.body;
    EXPECT_EQ(e.code, r.expected) << r.body << ": " << e.message();
    EXPECT_NE(e.detail.find(r.message), std::string::npos) << e.detail;
    EXPECT_NE(e.detail.find("http://127.0.0.1:2379"), std::string::npos) << e.detail;
  }
  EXPECT_FALSE(gateway_error(200, answer(""), "x"));
}

}  // namespace
}  // namespace baton::etcd_detail
