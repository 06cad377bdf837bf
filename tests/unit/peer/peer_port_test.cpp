// The peer port's route and its refusals' log line: only POST /v1/failsafe
// reaches the handler; what the handler refuses is a bare 403, said in the
// log at once and then at most once per quiet period, with the count of the
// ones not said. And the client, on loopback: an answer, a silent peer and
// an address that is none.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
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

namespace baton {
namespace {

// The client against a peer port on loopback: an answer comes back once;
// a peer that accepts and never answers, or none listening, is an error
// within the timeout.
TEST(peer_client, answers_once_and_gives_up_on_a_silent_peer_in_time) {
  boost::asio::io_context io;
  peer_port port(io, "127.0.0.1:0", [](std::string_view body) -> peer_answer {
    return {std::string(body) + "!\n", ""};
  });
  std::error_code ec;
  port.open(ec);
  ASSERT_FALSE(ec) << port.last_error();
  const auto address = "127.0.0.1:" + std::to_string(port.local_endpoint().port());
  // A listener that never answers.
  boost::asio::ip::tcp::acceptor silent(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  boost::asio::ip::tcp::socket held(io);
  silent.async_accept(held, [](const boost::system::error_code&) {});
  const auto silent_address = "127.0.0.1:" + std::to_string(silent.local_endpoint().port());

  peer_client client(io);
  std::vector<std::pair<std::string, std::string>> got;
  client.post(address, "hello", 1000ms, [&](std::string e, std::string b) { got.emplace_back(e, b); });
  const auto sent = std::chrono::steady_clock::now();
  client.post(silent_address, "hello", 200ms,
              [&](std::string e, std::string b) { got.emplace_back(e, b); });
  client.post("nonsense", "hello", 200ms, [&](std::string e, std::string b) { got.emplace_back(e, b); });
  for (int i = 0; i < 1000 && got.size() < 3; ++i) io.run_one_for(2s);
  const auto took = std::chrono::steady_clock::now() - sent;
  ASSERT_EQ(got.size(), 3u);
  bool answered = false, silent_timed_out = false, bad_address = false;
  for (const auto& [e, b] : got) {
    if (e.empty() && b == "hello!\n") answered = true;
    if (e.find("within 200 ms") != std::string::npos) silent_timed_out = true;
    if (e.find("not a HOST:PORT address") != std::string::npos) bad_address = true;
  }
  EXPECT_TRUE(answered);
  EXPECT_TRUE(silent_timed_out);
  EXPECT_TRUE(bad_address);
  EXPECT_LT(took, 1500ms);
}

}  // namespace
}  // namespace baton
