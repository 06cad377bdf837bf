// `baton leader` against a real app_socket with scripted status answers: a
// standby whose first status names a leader its candidates list lacks yet is
// asked again, on a new connection each time, and the leader is printed.
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace baton::cli_test {
namespace {

using leader_command_test = cli_test;

TEST_F(leader_command_test, asks_again_until_the_list_has_the_leader) {
  fake_daemon daemon(socket_path());
  daemon.set_status_fn([](int call) {
    json s{{"node_id", "node-b"}, {"leader", "node-a"}, {"token", 7}, {"candidates", json::array()}};
    if (call >= 2) {
      s["candidates"] = json::array({{{"node", "node-a"}, {"advertise", "10.0.0.7:80"}}});
      s["leader_advertise"] = "10.0.0.7:80";
    }
    return s;
  });
  auto r = run_cli({"leader", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "node-a token 7 10.0.0.7:80\n");
}

}  // namespace
}  // namespace baton::cli_test
