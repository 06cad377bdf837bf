// One member's status as check-store reports it per endpoint
// (src/etcd/member_status.hpp), as a table.
#include "etcd/member_status.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "etcd/etcd_error.hpp"

namespace baton::etcd_detail {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// As etcd 3.4.23 answers (int64 and uint64 as strings).
json status_of(const std::string& member, const std::string& leader) {
  return json::parse(
      R"({"header":{"cluster_id":"17739047509904066669","member_id":")" + member +
      R"(","revision":"1","raft_term":"2"},"version":"3.4.23","dbSize":"20480","leader":")" +
      leader + R"(","raftIndex":"4","raftTerm":"2","raftAppliedIndex":"4"})");
}

TEST(etcd_member_status, reads_the_status_answer) {
  const auto s = read_member_status(status_of("16349957551577246028", "16349957551577246028"));
  EXPECT_EQ(s.version, "3.4.23");
  EXPECT_EQ(s.member_id, "16349957551577246028");
  EXPECT_EQ(s.leader, "16349957551577246028");
  EXPECT_EQ(s.raft_term, 2);
  EXPECT_EQ(s.raft_index, 4);
  EXPECT_THROW(read_member_status(json::parse(R"({"raftTerm":"x"})")), std::runtime_error);
}

// check-store names members as etcdctl does (`etcdctl member list`,
// `endpoint status`): in hex.
TEST(etcd_member_status, member_ids_read_as_etcdctl_prints_them) {
  EXPECT_EQ(member_id_text("10276657743932975437"), "8e9e05c52164694d");
  EXPECT_EQ(member_id_text("16349957551577246028"), "e2e6b7c4727a294c");
  EXPECT_EQ(member_id_text("18446744073709551615"), "ffffffffffffffff");
  EXPECT_EQ(member_id_text("7"), "7");
  EXPECT_EQ(member_id_text("0"), "0");
  EXPECT_EQ(member_id_text(""), "");
  EXPECT_EQ(member_id_text("18446744073709551616"), "18446744073709551616");  // above uint64
  EXPECT_EQ(member_id_text("12ab"), "12ab");
}

TEST(etcd_member_status, one_line_per_endpoint) {
  const std::string url = "http://10.0.0.1:2379";
  const struct {
    store_error error;
    json answer;
    std::chrono::nanoseconds took;
    check_verdict verdict;
    const char* text;
  } rows[] = {
      {{},
       status_of("7", "7"),
       2ms,
       check_verdict::ok,
       "http://10.0.0.1:2379: etcd 3.4.23, the leader, raft term 2 index 4, 2.00 ms"},
      {{},
       status_of("8", "7"),
       2ms,
       check_verdict::ok,
       "http://10.0.0.1:2379: etcd 3.4.23, a follower, raft term 2 index 4, 2.00 ms"},
      {{},
       status_of("8", "0"),
       2ms,
       check_verdict::hazard,
       "http://10.0.0.1:2379: etcd 3.4.23, knows no leader (it cannot serve), raft term 2 index 4, "
       "2.00 ms"},
      {{},
       status_of("7", "7"),
       400ms,
       check_verdict::hazard,
       "http://10.0.0.1:2379: etcd 3.4.23, the leader, raft term 2 index 4, 400.00 ms: more than a "
       "tenth of lease.ttl"},
      {{etcd_errc::connect_failed, "etcd: connect http://10.0.0.1:2379: Connection refused"},
       json(nullptr),
       0ms,
       check_verdict::hazard,
       "http://10.0.0.1:2379: etcd: connect http://10.0.0.1:2379: Connection refused (the store "
       "moves on to the next endpoint)"},
  };
  for (const auto& r : rows) {
    const auto line = endpoint_line(url, r.error, r.answer, r.took, 3000ms);
    EXPECT_EQ(line.topic, "endpoint");
    EXPECT_EQ(line.verdict, r.verdict) << line.text;
    EXPECT_EQ(line.text, r.text);
  }
}

}  // namespace
}  // namespace baton::etcd_detail
