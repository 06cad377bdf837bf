// route_request on its own: every endpoint, methods, query strings, clipping
// of echoed paths, and sources that throw or are missing.
#include "baton/http_routes.hpp"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace {

using baton::http_response;
using baton::probe_view;
using baton::route_request;
using baton::route_sources;

struct http_routes_test : ::testing::Test {
  probe_view probe;
  nlohmann::json status = {{"state", "leader"}, {"term", 3}};
  std::string metrics = "# TYPE baton_up gauge\nbaton_up 1\n";
  int probe_calls = 0;

  route_sources sources() {
    route_sources s;
    s.probe = [this] {
      ++probe_calls;
      return probe;
    };
    s.status = [this] { return status; };
    s.metrics_text = [this] { return metrics; };
    return s;
  }

  http_response get(std::string_view target, std::string_view method = "GET") {
    return route_request({method, target}, sources());
  }
};

std::string header(const http_response& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return "<absent>";
}

TEST_F(http_routes_test, healthz_is_ok_when_healthy) {
  const auto response = get("/healthz");
  EXPECT_EQ(response.status, 200u);
  EXPECT_EQ(response.body, "ok\n");
  EXPECT_EQ(response.content_type, "text/plain; charset=utf-8");
}

TEST_F(http_routes_test, healthz_gives_the_reason_when_unhealthy) {
  probe.healthy = false;
  probe.unhealthy_reason = "leader has not renewed for 7200ms (deadline 6666ms)";
  const auto response = get("/healthz");
  EXPECT_EQ(response.status, 503u);
  EXPECT_EQ(response.body, "unhealthy: leader has not renewed for 7200ms (deadline 6666ms)\n");
}

// Liveness (/healthz, /livez) and readiness (/readyz) answer from their own
// verdicts: a node whose store is down is live but not ready.
TEST_F(http_routes_test, liveness_and_readiness_answer_separately) {
  struct probe_case {
    bool live;
    bool ready;
    unsigned healthz;
    unsigned readyz;
  };
  for (const auto& c : {probe_case{true, true, 200u, 200u}, probe_case{true, false, 200u, 503u},
                        probe_case{false, false, 503u, 503u}}) {
    probe.healthy = c.live;
    probe.unhealthy_reason = c.live ? "ok" : "leader cannot stop its app";
    probe.ready = c.ready;
    probe.unready_reason = c.ready ? "ok" : "the store has not answered for 12.0s";
    EXPECT_EQ(get("/healthz").status, c.healthz);
    EXPECT_EQ(get("/livez").status, c.healthz);
    EXPECT_EQ(get("/livez").body, get("/healthz").body);
    EXPECT_EQ(get("/readyz").status, c.readyz);
    EXPECT_EQ(get("/readyz").body,
              c.ready ? "ok\n" : "not ready: " + probe.unready_reason + "\n");
  }
}

TEST_F(http_routes_test, leader_and_standby_follow_leadership) {
  probe.is_leader = true;
  EXPECT_EQ(get("/leader").status, 200u);
  EXPECT_EQ(get("/leader").body, "leader\n");
  EXPECT_EQ(get("/standby").status, 503u);
  EXPECT_EQ(get("/standby").body, "leader\n");

  probe.is_leader = false;
  EXPECT_EQ(get("/leader").status, 503u);
  EXPECT_EQ(get("/leader").body, "not leader\n");
  EXPECT_EQ(get("/standby").status, 200u);
  EXPECT_EQ(get("/standby").body, "standby\n");
}

TEST_F(http_routes_test, probes_are_taken_fresh_for_each_request) {
  get("/leader");
  get("/standby");
  get("/healthz");
  EXPECT_EQ(probe_calls, 3);
}

TEST_F(http_routes_test, status_is_json_with_a_trailing_newline) {
  const auto response = get("/status");
  EXPECT_EQ(response.status, 200u);
  EXPECT_EQ(response.content_type, "application/json");
  ASSERT_FALSE(response.body.empty());
  EXPECT_EQ(response.body.back(), '\n');
  EXPECT_EQ(nlohmann::json::parse(response.body), status);
}

TEST_F(http_routes_test, status_with_invalid_utf8_is_still_served) {
  status = {{"name", std::string("bad \xff byte")}};
  const auto response = get("/status");
  EXPECT_EQ(response.status, 200u);
  EXPECT_NE(response.body.find("bad"), std::string::npos);
}

TEST_F(http_routes_test, metrics_use_the_prometheus_content_type) {
  const auto response = get("/metrics");
  EXPECT_EQ(response.status, 200u);
  EXPECT_EQ(response.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(response.body, metrics);
}

TEST_F(http_routes_test, root_lists_the_endpoints) {
  const auto response = get("/");
  EXPECT_EQ(response.status, 200u);
  for (const char* path :
       {"/healthz", "/livez", "/readyz", "/leader", "/standby", "/status", "/metrics"}) {
    EXPECT_NE(response.body.find(path), std::string::npos) << path;
  }
}

TEST_F(http_routes_test, query_string_is_ignored) {
  probe.is_leader = true;
  EXPECT_EQ(get("/leader?x=1").body, "leader\n");
  EXPECT_EQ(get("/leader?").status, 200u);
  EXPECT_EQ(get("/healthz?verbose=1&a=b").body, "ok\n");
  EXPECT_EQ(get("/?x").status, 200u);
  EXPECT_EQ(get("/status?pretty").content_type, "application/json");
}

TEST_F(http_routes_test, unknown_path_is_404_and_echoes_it) {
  const auto response = get("/nope?secret=1");
  EXPECT_EQ(response.status, 404u);
  EXPECT_EQ(response.body, "not found: /nope\n");
  EXPECT_EQ(get("/leader/").status, 404u);
  EXPECT_EQ(get("/LEADER").status, 404u);
  EXPECT_EQ(get("*").status, 404u);
  EXPECT_EQ(get("").status, 404u);
}

TEST_F(http_routes_test, echoed_path_is_clipped_and_printable) {
  const auto response = get("/a\x01\x1b[31m\xc3\xa9\x7f" + std::string(500, 'x'));
  EXPECT_EQ(response.status, 404u);
  const std::string expected_start = "not found: /a??[31m???";
  EXPECT_EQ(response.body.substr(0, expected_start.size()), expected_start);
  // 200 characters of path, "...", the prefix and the newline.
  EXPECT_EQ(response.body.size(), std::string("not found: ").size() + 200 + 3 + 1);
  EXPECT_EQ(response.body.substr(response.body.size() - 4), "...\n");
}

TEST_F(http_routes_test, head_is_answered_like_get) {
  probe.is_leader = true;
  const auto response = get("/leader", "HEAD");
  EXPECT_EQ(response.status, 200u);
  EXPECT_EQ(response.body, "leader\n");
  EXPECT_EQ(get("/nope", "HEAD").status, 404u);
}

TEST_F(http_routes_test, other_methods_are_405_with_allow) {
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get", "BREW"}) {
    for (const char* path : {"/leader", "/nope"}) {
      const auto response = get(path, method);
      EXPECT_EQ(response.status, 405u) << method << " " << path;
      EXPECT_EQ(header(response, "Allow"), "GET, HEAD") << method;
    }
  }
  EXPECT_EQ(get("/leader", "POST").body, "method not allowed: POST\n");
  EXPECT_EQ(get("/", std::string(300, '\n')).body.size(),
            std::string("method not allowed: ").size() + 203 + 1);
}

TEST_F(http_routes_test, a_throwing_source_gives_500_with_its_message) {
  route_sources s = sources();
  s.probe = []() -> probe_view { throw std::runtime_error("state unavailable"); };
  s.status = []() -> nlohmann::json { throw std::runtime_error("status broke"); };
  s.metrics_text = []() -> std::string { throw std::logic_error("no registry"); };
  for (const char* path : {"/healthz", "/leader", "/standby"}) {
    const auto response = route_request({"GET", path}, s);
    EXPECT_EQ(response.status, 500u) << path;
    EXPECT_NE(response.body.find("state unavailable"), std::string::npos) << response.body;
  }
  EXPECT_NE(route_request({"GET", "/status"}, s).body.find("status broke"), std::string::npos);
  const auto metrics_response = route_request({"GET", "/metrics"}, s);
  EXPECT_EQ(metrics_response.status, 500u);
  EXPECT_NE(metrics_response.body.find("no registry"), std::string::npos);
  EXPECT_EQ(route_request({"GET", "/"}, s).status, 200u);
}

TEST_F(http_routes_test, a_source_throwing_a_non_exception_gives_500) {
  route_sources s = sources();
  s.probe = []() -> probe_view { throw 42; };
  EXPECT_EQ(route_request({"GET", "/leader"}, s).status, 500u);
}

TEST_F(http_routes_test, missing_sources_give_500) {
  const route_sources empty;
  for (const char* path : {"/healthz", "/leader", "/standby", "/status", "/metrics"}) {
    EXPECT_EQ(route_request({"GET", path}, empty).status, 500u) << path;
  }
  EXPECT_EQ(route_request({"GET", "/"}, empty).status, 200u);
  EXPECT_EQ(route_request({"GET", "/x"}, empty).status, 404u);
}

}  // namespace
