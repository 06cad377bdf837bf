// The peer port of lease.failsafe peers on a running daemon (a standby while
// "node-9" holds the lease, put in Redis by hand): a confirm request signed
// with the shared secret is confirmed and promises one ttl; the same request
// replayed is refused, signed, with its reason; a request with a wrong
// secret, without its MAC, for another election or of an answer's kind gets
// a bare 403, and the daemon says so in one log line for the lot; the
// status counts them and shows the promise.
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "baton/peer_port.hpp"
#include "baton/peer_wire.hpp"
#include "daemon_fixture.hpp"
#include "support/free_port.hpp"

namespace baton::testing {
namespace {

const std::string peer_secret = "0123456789abcdef0123456789abcdef-shared";

class failsafe_peer_port : public daemon_fixture {
 protected:
  unsigned short port = free_loopback_port();
  std::string address = "127.0.0.1:" + std::to_string(port);

  baton_process& start_standby() {
    const auto secret_file = dir / "peer.secret";
    std::ofstream(secret_file) << peer_secret << "\n";
    // node-9 leads for a minute: the daemon stays a standby.
    redis->command({"SET", "baton:{" + election() + "}:lease", "node-9:0123", "PX", "60000"});
    return start_node(1, {},
                      {"--failsafe", "peers", "--failsafe-secret-file", secret_file.string(),
                       "--failsafe-listen", address});
  }

  // POSTs `line` to the daemon's peer port: the error ("" = a 200) and body.
  std::pair<std::string, std::string> post(const std::string& line) {
    boost::asio::io_context io;
    peer_client client(io);
    std::optional<std::pair<std::string, std::string>> got;
    client.post(address, line, 2000ms, [&](std::string error, std::string body) {
      got.emplace(std::move(error), std::move(body));
    });
    io.run_for(3s);
    EXPECT_TRUE(got) << "no answer from the peer port";
    return got.value_or(std::make_pair(std::string("no answer"), std::string()));
  }

  peer_wire::message confirm(std::uint64_t sent_ms) const {
    peer_wire::message m;
    m.what = peer_wire::kind::confirm;
    m.election = election();
    m.from = "node-9";
    m.to = "node-1";
    m.leader = "node-9";
    m.token = 1000;  // the counter the standby's held answers name
    m.nonce = "00112233445566778899aabbccddeeff";
    m.sent_ms = sent_ms;
    return m;
  }

  peer_wire::message answer_to(const std::string& body) const {
    auto d = peer_wire::decode(body, peer_secret, election(), "node-9");
    EXPECT_TRUE(d.msg) << d.error << ": " << body;
    return d.msg.value_or(peer_wire::message{});
  }

  nlohmann::json status() {
    auto reply = socket_request(socket_of(1), R"({"cmd":"status"})", 3s);
    EXPECT_TRUE(reply);
    return nlohmann::json::parse(reply.value_or("{}"), nullptr, false);
  }
};

TEST_F(failsafe_peer_port, confirms_once_refuses_replays_and_strangers) {
  auto& node = start_standby();
  ASSERT_TRUE(node.wait_for_log("peer port on 127.0.0.1:" + std::to_string(port), 10s))
      << node.log_text();
  // The standby has met node-9's lease: it knows the term.
  ASSERT_TRUE(node.wait_for_log("busy", 10s)) << node.log_text();

  const auto request = confirm(5000);
  const auto line = peer_wire::encode(request, peer_secret).line;
  auto [error, body] = post(line);
  ASSERT_EQ(error, "") << node.log_text();
  auto answer = answer_to(body);
  EXPECT_TRUE(peer_wire::answers(request, answer));
  EXPECT_EQ(answer.what, peer_wire::kind::confirmed) << answer.reason;
  EXPECT_EQ(answer.ms, 2000u) << "a promise of one ttl";

  // The same request again: a replay, refused with its reason (signed).
  std::tie(error, body) = post(line);
  ASSERT_EQ(error, "");
  answer = answer_to(body);
  EXPECT_EQ(answer.what, peer_wire::kind::refused);
  EXPECT_NE(answer.reason.find("replayed"), std::string::npos) << answer.reason;

  // Strangers: a wrong secret, no MAC, another election, an answer's kind.
  const auto wrong = peer_wire::encode(confirm(6000), "another-secret-of-32-bytes-or-more!!").line;
  std::string unsigned_line = peer_wire::encode(confirm(7000), peer_secret).line;
  unsigned_line.erase(unsigned_line.find(",\"mac\""));
  unsigned_line += "}\n";
  auto elsewhere = confirm(8000);
  elsewhere.election = "another-election";
  auto reply_kind = confirm(9000);
  reply_kind.what = peer_wire::kind::confirmed;
  reply_kind.ms = 2000;
  for (const auto& bad : {wrong, unsigned_line, peer_wire::encode(elsewhere, peer_secret).line,
                          peer_wire::encode(reply_kind, peer_secret).line, std::string("hello")}) {
    SCOPED_TRACE(bad);
    std::tie(error, body) = post(bad);
    EXPECT_NE(error.find("status 403"), std::string::npos) << error;
    EXPECT_EQ(body, "");
  }
  ASSERT_TRUE(node.wait_for_log("peer port: refused a request: ", 5s)) << node.log_text();
  const auto log = node.log_text();
  EXPECT_EQ(log.find("peer port: refused a request: "),
            log.rfind("peer port: refused a request: "))
      << "one line for the five, at most one per 10 s\n" << log;
  EXPECT_EQ(log.find(peer_secret), std::string::npos) << "the secret in the log";

  const auto s = status();
  ASSERT_TRUE(s.contains("failsafe")) << s.dump();
  EXPECT_EQ(s["failsafe"]["mode"], "peers");
  EXPECT_EQ(s["failsafe"]["peer_address"], address);
  EXPECT_EQ(s["failsafe"]["refused_requests"], 5);
  ASSERT_TRUE(s["failsafe"].contains("promise")) << s.dump();
  EXPECT_EQ(s["failsafe"]["promise"]["leader"], "node-9");
  EXPECT_EQ(s["failsafe"]["promise"]["token"], 1000);
}

TEST_F(failsafe_peer_port, a_secret_too_short_is_refused_at_start) {
  const auto secret_file = dir / "short.secret";
  std::ofstream(secret_file) << "short\n";
  auto& node = start_node(1, {},
                          {"--failsafe", "peers", "--failsafe-secret-file", secret_file.string(),
                           "--failsafe-listen", address});
  const auto code = node.wait_exit(10s);
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 2) << node.log_text();
  EXPECT_NE(node.log_text().find("lease.failsafe_secret_file"), std::string::npos)
      << node.log_text();
  EXPECT_EQ(node.log_text().find("short\n"), std::string::npos);
}

}  // namespace
}  // namespace baton::testing
