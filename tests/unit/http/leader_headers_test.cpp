// /leader and /standby name who leads and where its service is, in headers,
// so that a proxy asking any node finds the leader; their status codes and
// bodies are what they always were.
#include <string>

#include <gtest/gtest.h>

#include "baton/http_routes.hpp"

namespace {

using baton::http_response;
using baton::probe_view;
using baton::route_request;
using baton::route_sources;

http_response leader_route(const probe_view& probe, std::string_view target) {
  route_sources s;
  s.probe = [&probe] { return probe; };
  return route_request({"GET", target}, s);
}

std::string leader_header(const http_response& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return "<absent>";
}

TEST(leader_headers, a_standby_names_the_leader_its_token_and_address) {
  probe_view probe;
  probe.leader = "node-a";
  probe.leader_token = 42;
  probe.leader_advertise = "10.0.0.7:5432";
  for (const auto* path : {"/leader", "/standby"}) {
    const auto r = leader_route(probe, path);
    EXPECT_EQ(leader_header(r, "Baton-Leader"), "node-a") << path;
    EXPECT_EQ(leader_header(r, "Baton-Leader-Token"), "42") << path;
    EXPECT_EQ(leader_header(r, "Baton-Leader-Advertise"), "10.0.0.7:5432") << path;
  }
  EXPECT_EQ(leader_route(probe, "/leader").status, 503u);
  EXPECT_EQ(leader_route(probe, "/leader").body, "not leader\n");
}

TEST(leader_headers, none_without_a_leader_and_no_address_when_none_is_published) {
  probe_view probe;
  EXPECT_EQ(leader_header(leader_route(probe, "/leader"), "Baton-Leader"), "<absent>");
  probe.leader = "node-a";
  probe.leader_token = 7;
  probe.is_leader = true;
  const auto r = leader_route(probe, "/leader");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(leader_header(r, "Baton-Leader"), "node-a");
  EXPECT_EQ(leader_header(r, "Baton-Leader-Advertise"), "<absent>");
}

}  // namespace
