// A daemon's first start on an etcd election that has no record yet (no
// `baton init-store`): it warns once that every acquisition is held back
// for one ttl, then leads. The store reads the missing record twice at
// start (its first acquire and its watch), and each read used to be a
// warning of its own.
#include <gtest/gtest.h>

#include <string>

#include "support/baton_process.hpp"
#include "support/servers/etcd_server.hpp"
#include "support/text_count.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

TEST(etcd_first_start, the_missing_record_is_warned_about_once) {
  etcd_server etcd;
  temp_dir dir("baton-first-");
  baton_process node({"run", "--election", "fresh", "--node-id", "a", "--ttl", "2s",
                      "--store-kind", "etcd", "--etcd-endpoints", etcd.client_url(), "--",
                      "sleep", "600"},
                     {}, dir / "node.log");
  // It leads only after the hold-back: every read of the start is in the log by then.
  ASSERT_TRUE(node.wait_for_log("-> working", 20s)) << node.log_text();
  EXPECT_EQ(count_occurrences(node.log_text(), "has no record of election fresh"), 1u) << node.log_text();
}

}  // namespace
}  // namespace baton::testing
