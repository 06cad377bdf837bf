// The peer port's route and its refusals' log line: only POST /v1/failsafe
// reaches the handler; what the handler refuses is a bare 403, said in the
// log at once and then at most once per quiet period, with the count of the
// ones not said.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/peer_port.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

struct route_harness {
  refusal_log log;
  std::vector<std::string> said;
  std::vector<std::string> bodies;
  time_point now = time_point{} + 1000s;

  http_response ask(std::string_view method, std::string_view target, std::string_view body) {
    return peer_route(
        {method, target, body},
        [this](std::string_view b) -> peer_answer {
          bodies.emplace_back(b);
          if (b == "good") return {"{\"answer\":1}\n", ""};
          return {"", "wrong MAC"};
        },
        log, now, [this](const std::string& line) { said.push_back(line); });
  }
};

TEST(peer_port, only_a_post_to_its_path_reaches_the_handler) {
  route_harness h;
  EXPECT_EQ(h.ask("POST", "/status", "good").status, 404u);
  const auto get = h.ask("GET", "/v1/failsafe", "");
  EXPECT_EQ(get.status, 405u);
  ASSERT_EQ(get.headers.size(), 1u);
  EXPECT_EQ(get.headers[0].second, "POST");
  EXPECT_TRUE(h.bodies.empty());
  const auto ok = h.ask("POST", "/v1/failsafe", "good");
  EXPECT_EQ(ok.status, 200u);
  EXPECT_EQ(ok.body, "{\"answer\":1}\n");
  EXPECT_EQ(ok.content_type, "application/json");
}

TEST(peer_port, refusals_are_a_bare_403_and_one_line_per_quiet_period) {
  route_harness h;
  for (int i = 0; i < 5; ++i) {
    const auto r = h.ask("POST", "/v1/failsafe", "forged");
    EXPECT_EQ(r.status, 403u);
    EXPECT_EQ(r.body, "");
    h.now += 1s;
  }
  ASSERT_EQ(h.said.size(), 1u);
  EXPECT_EQ(h.said[0], "peer port: refused a request: wrong MAC");
  h.now += 10s;
  h.ask("POST", "/v1/failsafe", "forged");
  ASSERT_EQ(h.said.size(), 2u);
  EXPECT_EQ(h.said[1], "peer port: refused a request: wrong MAC (and 4 more refused in the last 15 s)");
  EXPECT_EQ(h.log.total(), 6u);
}

}  // namespace
}  // namespace baton
