// zookeeper.servers read once (src/zookeeper/server_list.hpp), as a table.
#include "zookeeper/server_list.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace baton::zookeeper_detail {
namespace {

TEST(zookeeper_server_list, parses_hosts_ports_and_what_needs_resolving) {
  const auto l = parse_servers("10.0.0.1:2181, zk2.example:2182,[::1]:2183");
  ASSERT_EQ(l.error, "");
  ASSERT_EQ(l.servers.size(), 3u);
  EXPECT_EQ(l.servers[0].host, "10.0.0.1");
  EXPECT_EQ(l.servers[0].port, 2181);
  EXPECT_TRUE(l.servers[0].numeric);
  EXPECT_EQ(l.servers[1].host, "zk2.example");
  EXPECT_FALSE(l.servers[1].numeric);
  EXPECT_EQ(l.servers[2].host, "::1");
  EXPECT_TRUE(l.servers[2].numeric);
  EXPECT_EQ(client_hosts({l.servers[0], l.servers[2]}), "10.0.0.1:2181,[::1]:2183");
}

TEST(zookeeper_server_list, refuses_with_a_reason) {
  const std::vector<std::string> bad = {
      "",           " ",        "host", "host:",    ":2181",     "host:0",
      "host:70000", "host:21x", "h:1,", "::1:2181", "[::1]2181", "h:2181/chroot"};
  for (const auto& text : bad) {
    const auto l = parse_servers(text);
    EXPECT_NE(l.error, "") << "'" << text << "'";
  }
  EXPECT_NE(parse_servers("h:2181/app").error.find("zookeeper.path"), std::string::npos);
}

// The server a session is connected to, as the client names it, found in
// zookeeper.servers: by address (any spelling), port, or a name's address.
TEST(zookeeper_server_list, finds_the_server_a_session_is_connected_to) {
  const std::vector<server_address_of> known = {
      {{"10.0.0.1", 2181, true}, 0},
      {{"10.0.0.2", 2181, true}, 1},  // zk2.example resolved
      {{"10.0.0.3", 2181, true}, 1},  // zk2.example's second address
      {{"::1", 2183, true}, 2},
  };
  const struct {
    const char* connected;
    std::optional<std::size_t> server;
  } rows[] = {
      {"10.0.0.1:2181", 0},
      {"10.0.0.3:2181", 1},
      {"[::1]:2183", 2},
      {"[0:0::1]:2183", 2},             // another spelling of ::1
      {"10.0.0.1:2182", std::nullopt},  // the port differs
      {"10.0.0.9:2181", std::nullopt},
      {"", std::nullopt},
      {"zk2.example:2181", std::nullopt},  // the client names addresses only
  };
  for (const auto& r : rows) EXPECT_EQ(server_of(known, r.connected), r.server) << r.connected;
}

}  // namespace
}  // namespace baton::zookeeper_detail
