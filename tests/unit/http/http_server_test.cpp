// http_server over real loopback TCP sockets. The server runs on the test's
// io_context; clients are plain non-blocking POSIX sockets, so a test can send
// malformed bytes, stop half-way through a request, or never read. Every wait
// drives the io_context in bounded run_one_for steps until the awaited
// condition holds or a generous deadline passes.
#include "baton/http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

#include "baton/http_routes.hpp"

namespace {

using namespace std::chrono_literals;
using baton::http_response;
using baton::http_server;
using clock_type = std::chrono::steady_clock;

// Far above anything expected on a loaded machine; only reached on failure.
constexpr auto patience = 10s;

// A parsed response as the client saw it.
struct received_response {
  unsigned status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;

  std::string header(const std::string& name) const {
    const auto found = headers.find(name);
    return found == headers.end() ? "<absent>" : found->second;
  }
};

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// A client end that never blocks: flush() and pump() move what the kernel
// allows right now.
class test_client {
 public:
  explicit test_client(const boost::asio::ip::tcp::endpoint& server, int receive_buffer = 0) {
    fd_ = ::socket(server.address().is_v6() ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
    }
    // The kernel completes the handshake from the listen backlog, so a
    // blocking connect does not need the io_context to run.
    const auto* address = static_cast<const sockaddr*>(server.data());
    if (::connect(fd_, address, static_cast<socklen_t>(server.size())) != 0) {
      const int err = errno;
      ::close(fd_);
      throw std::system_error(err, std::generic_category(), "connect");
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  }
  ~test_client() { close(); }
  test_client(const test_client&) = delete;
  test_client& operator=(const test_client&) = delete;

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void send(const std::string& bytes) {
    out_ += bytes;
    flush();
  }
  /// True when everything queued has been sent (or the peer is gone).
  bool flush() {
    while (!out_.empty() && fd_ >= 0) {
      const ssize_t n = ::send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return false;
        out_.clear();
        break;
      }
      out_.erase(0, static_cast<std::size_t>(n));
    }
    return out_.empty();
  }
  /// Read what is available; true once the server has closed the connection.
  bool pump() {
    flush();
    char buffer[65536];
    while (fd_ >= 0 && !eof_) {
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n > 0) {
        in_.append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0) {
        eof_ = true;
      } else if (errno == EAGAIN || errno == EINTR) {
        break;
      } else {
        eof_ = true;
        reset_ = true;
      }
    }
    return eof_;
  }
  /// A complete response at the head of the input, removed from it. For a
  /// response to HEAD (`head`), Content-Length does not count body bytes.
  std::optional<received_response> take_response(bool head = false) {
    const auto end_of_header = in_.find("\r\n\r\n");
    if (end_of_header == std::string::npos) return std::nullopt;
    received_response response;
    std::size_t line_start = 0;
    std::size_t line_end = in_.find("\r\n");
    const std::string status_line = in_.substr(0, line_end);
    if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) {
      throw std::runtime_error("bad status line: " + status_line);
    }
    response.status = static_cast<unsigned>(std::stoul(status_line.substr(9, 3)));
    while (line_end < end_of_header) {
      line_start = line_end + 2;
      line_end = in_.find("\r\n", line_start);
      const std::string line = in_.substr(line_start, line_end - line_start);
      const auto colon = line.find(':');
      if (colon == std::string::npos) throw std::runtime_error("bad header line: " + line);
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      response.headers[lower(line.substr(0, colon))] = value;
    }
    std::size_t length = 0;
    if (!head && response.headers.count("content-length") != 0) {
      length = std::stoul(response.headers["content-length"]);
    }
    const std::size_t body_start = end_of_header + 4;
    if (in_.size() < body_start + length) return std::nullopt;
    response.body = in_.substr(body_start, length);
    in_.erase(0, body_start + length);
    return response;
  }
  bool eof() const { return eof_; }
  bool reset() const { return reset_; }
  const std::string& unread() const { return in_; }

 private:
  int fd_ = -1;
  std::string out_;
  std::string in_;
  bool eof_ = false;
  bool reset_ = false;
};

// The routes of the daemon over fixed sources, counting handler calls.
struct http_server_test : ::testing::Test {
  boost::asio::io_context io;
  baton::probe_view probe;
  int handled = 0;
  std::function<http_response(const baton::http_request_view&)> override_handler;

  baton::http_handler handler() {
    return [this](const baton::http_request_view& request) {
      ++handled;
      if (override_handler) return override_handler(request);
      baton::route_sources sources;
      sources.probe = [this] { return probe; };
      sources.status = [] { return nlohmann::json{{"state", "leader"}}; };
      sources.metrics_text = [] { return std::string("baton_up 1\n"); };
      return baton::route_request(request, sources);
    };
  }

  std::unique_ptr<http_server> start(http_server::limits limits = {},
                                     const std::string& listen = "127.0.0.1:0") {
    auto server = std::make_unique<http_server>(io, listen, handler(), limits);
    std::error_code ec;
    server->open(ec);
    if (ec) throw std::runtime_error("open failed: " + server->last_error());
    return server;
  }

  /// Run the io_context until `done` holds; false after `limit`.
  bool run_until(const std::function<bool()>& done,
                 std::chrono::milliseconds limit = std::chrono::duration_cast<
                     std::chrono::milliseconds>(patience)) {
    const auto deadline = clock_type::now() + limit;
    while (!done()) {
      if (clock_type::now() >= deadline) return false;
      if (io.stopped()) io.restart();
      io.run_one_for(5ms);
    }
    return true;
  }

  received_response await_response(test_client& client, bool head = false) {
    std::optional<received_response> response;
    const bool got = run_until([&] {
      client.pump();
      response = client.take_response(head);
      return response.has_value() || client.eof();
    });
    if (!got || !response) {
      throw std::runtime_error("no response; received so far: '" + client.unread() + "'");
    }
    return *response;
  }

  bool await_close(test_client& client) {
    return run_until([&] { return client.pump(); });
  }
};

const std::string get_leader = "GET /leader HTTP/1.1\r\nHost: test\r\n\r\n";

TEST_F(http_server_test, answers_get_with_the_standard_headers) {
  probe.is_leader = true;
  const auto server = start();
  EXPECT_EQ(server->local_endpoint().address().to_string(), "127.0.0.1");
  EXPECT_NE(server->local_endpoint().port(), 0);
  test_client client(server->local_endpoint());
  client.send(get_leader);
  const auto response = await_response(client);
  EXPECT_EQ(response.status, 200u);
  EXPECT_EQ(response.body, "leader\n");
  EXPECT_EQ(response.header("server"), "baton");
  EXPECT_EQ(response.header("cache-control"), "no-store");
  EXPECT_EQ(response.header("content-length"), "7");
  EXPECT_EQ(response.header("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(handled, 1);
}

TEST_F(http_server_test, head_gets_headers_without_a_body) {
  const auto server = start();
  test_client client(server->local_endpoint());
  client.send("HEAD /status HTTP/1.1\r\nHost: test\r\n\r\n");
  const auto head = await_response(client, true);
  EXPECT_EQ(head.status, 200u);
  EXPECT_EQ(head.header("content-type"), "application/json");
  EXPECT_EQ(head.header("content-length"), std::to_string(std::string("{\"state\":\"leader\"}\n").size()));
  EXPECT_TRUE(head.body.empty());
  // No body bytes follow: the next response starts right after the header.
  client.send("GET /status HTTP/1.1\r\nHost: test\r\n\r\n");
  const auto get = await_response(client);
  EXPECT_EQ(get.status, 200u);
  EXPECT_EQ(get.body, "{\"state\":\"leader\"}\n");
  EXPECT_EQ(get.header("content-length"), head.header("content-length"));
}

TEST_F(http_server_test, keep_alive_serves_several_requests_on_one_connection) {
  const auto server = start();
  test_client client(server->local_endpoint());
  client.send(get_leader);
  EXPECT_EQ(await_response(client).body, "not leader\n");
  probe.is_leader = true;
  client.send(get_leader);
  EXPECT_EQ(await_response(client).body, "leader\n");
  EXPECT_EQ(handled, 2);
  EXPECT_EQ(server->connection_count(), 1u);
  EXPECT_FALSE(client.eof());
}

TEST_F(http_server_test, pipelined_requests_are_answered_in_order) {
  const auto server = start();
  test_client client(server->local_endpoint());
  client.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\nGET /nope HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(await_response(client).body, "ok\n");
  EXPECT_EQ(await_response(client).body, "not found: /nope\n");
}

TEST_F(http_server_test, connection_close_and_http10_end_after_the_response) {
  const auto server = start();
  test_client closing(server->local_endpoint());
  closing.send("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  const auto first = await_response(closing);
  EXPECT_EQ(first.header("connection"), "close");
  EXPECT_TRUE(await_close(closing));

  test_client old(server->local_endpoint());
  old.send("GET /healthz HTTP/1.0\r\n\r\n");
  const auto second = await_response(old);
  EXPECT_EQ(second.status, 200u);
  EXPECT_EQ(second.body, "ok\n");
  EXPECT_TRUE(await_close(old));
  // The server lingers until the clients close their ends too.
  closing.close();
  old.close();
  EXPECT_TRUE(run_until([&] { return server->connection_count() == 0; }));
}

TEST_F(http_server_test, unknown_path_is_404_and_other_methods_405) {
  const auto server = start();
  test_client client(server->local_endpoint());
  client.send("GET /nope?x=1 HTTP/1.1\r\nHost: t\r\n\r\n");
  const auto missing = await_response(client);
  EXPECT_EQ(missing.status, 404u);
  EXPECT_EQ(missing.body, "not found: /nope\n");
  client.send("DELETE /leader HTTP/1.1\r\nHost: t\r\n\r\n");
  const auto refused = await_response(client);
  EXPECT_EQ(refused.status, 405u);
  EXPECT_EQ(refused.header("allow"), "GET, HEAD");
  // A small body is read and ignored; the connection stays usable.
  client.send("POST /leader HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(await_response(client).status, 405u);
  client.send(get_leader);
  EXPECT_EQ(await_response(client).status, 503u);
}

TEST_F(http_server_test, a_throwing_handler_gives_500) {
  override_handler = [](const baton::http_request_view&) -> http_response {
    throw std::runtime_error("boom");
  };
  const auto server = start();
  test_client client(server->local_endpoint());
  client.send(get_leader);
  const auto response = await_response(client);
  EXPECT_EQ(response.status, 500u);
  EXPECT_NE(response.body.find("boom"), std::string::npos);
  // The connection survives.
  override_handler = nullptr;
  client.send(get_leader);
  EXPECT_EQ(await_response(client).status, 503u);
}

TEST_F(http_server_test, oversized_header_is_431_then_closed) {
  const auto server = start();
  test_client client(server->local_endpoint());
  client.send("GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(16 * 1024, 'a') + "\r\n\r\n");
  const auto response = await_response(client);
  EXPECT_EQ(response.status, 431u);
  EXPECT_EQ(response.header("connection"), "close");
  EXPECT_TRUE(await_close(client));
  EXPECT_FALSE(client.reset()) << "the 431 must not be destroyed by a reset";
  EXPECT_EQ(handled, 0);
}

TEST_F(http_server_test, header_limit_is_configurable) {
  http_server::limits limits;
  limits.max_header_bytes = 32 * 1024;
  const auto server = start(limits);
  test_client client(server->local_endpoint());
  client.send("GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(16 * 1024, 'a') + "\r\n\r\n");
  EXPECT_EQ(await_response(client).status, 200u);
}

TEST_F(http_server_test, large_body_is_413_then_closed) {
  const auto server = start();
  test_client client(server->local_endpoint());
  client.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n" +
              std::string(10000, 'b'));
  const auto response = await_response(client);
  EXPECT_EQ(response.status, 413u);
  EXPECT_TRUE(await_close(client));
  EXPECT_EQ(handled, 0);
}

TEST_F(http_server_test, malformed_requests_are_400_then_closed) {
  const auto server = start();
  const std::vector<std::string> malformed = {
      "this is not http\r\n\r\n", "GET\r\n\r\n", "GET / HTTP/9.9\r\n\r\n",
      "GET / HTTP/1.1\r\nNo colon\r\n\r\n", std::string("G\0T / HTTP/1.1\r\n\r\n", 18)};
  for (const std::string& bad : malformed) {
    test_client client(server->local_endpoint());
    client.send(bad);
    const auto response = await_response(client);
    EXPECT_EQ(response.status, 400u) << bad;
    EXPECT_EQ(response.body.rfind("bad request: ", 0), 0u) << response.body;
    EXPECT_TRUE(await_close(client)) << bad;
  }
  EXPECT_EQ(handled, 0);
}

TEST_F(http_server_test, a_slow_client_is_cut_after_the_read_timeout_without_stalling_others) {
  http_server::limits limits;
  limits.read_timeout = 500ms;
  const auto server = start(limits);
  test_client slow(server->local_endpoint());
  const auto slow_start = clock_type::now();
  slow.send("GET /leader HTTP/1.1\r\nHost: t\r\n");

  // While the slow request is pending, another client is served at once.
  test_client quick(server->local_endpoint());
  quick.send(get_leader);
  EXPECT_EQ(await_response(quick).status, 503u);
  slow.pump();
  EXPECT_FALSE(slow.eof()) << "cut before its read timeout";

  const auto response = await_response(slow);
  EXPECT_EQ(response.status, 408u);
  EXPECT_TRUE(await_close(slow));
  const auto waited = clock_type::now() - slow_start;
  EXPECT_GE(waited, 450ms);
  EXPECT_LT(waited, patience);
  EXPECT_EQ(handled, 1);
}

TEST_F(http_server_test, an_idle_keep_alive_connection_is_closed_quietly) {
  http_server::limits limits;
  limits.read_timeout = 300ms;
  const auto server = start(limits);
  test_client client(server->local_endpoint());
  client.send(get_leader);
  EXPECT_EQ(await_response(client).status, 503u);
  const auto idle_start = clock_type::now();
  EXPECT_TRUE(await_close(client));
  EXPECT_GE(clock_type::now() - idle_start, 250ms);
  EXPECT_EQ(client.unread(), "");
  EXPECT_TRUE(run_until([&] { return server->connection_count() == 0; }));
}

TEST_F(http_server_test, beyond_max_connections_clients_get_503) {
  http_server::limits limits;
  limits.max_connections = 2;
  const auto server = start(limits);
  test_client first(server->local_endpoint());
  test_client second(server->local_endpoint());
  ASSERT_TRUE(run_until([&] { return server->connection_count() == 2; }));

  test_client third(server->local_endpoint());
  third.send(get_leader);
  const auto refused = await_response(third);
  EXPECT_EQ(refused.status, 503u);
  EXPECT_EQ(refused.body, "too many connections (limit 2)\n");
  EXPECT_TRUE(await_close(third));
  EXPECT_EQ(server->connection_count(), 2u);

  // Once one leaves, a new client is served.
  first.close();
  ASSERT_TRUE(run_until([&] { return server->connection_count() == 1; }));
  test_client fourth(server->local_endpoint());
  fourth.send(get_leader);
  EXPECT_EQ(await_response(fourth).body, "not leader\n");
  second.send(get_leader);
  EXPECT_EQ(await_response(second).body, "not leader\n");
}

TEST_F(http_server_test, a_client_that_never_reads_is_dropped_without_blocking_others) {
  const std::string big(32 * 1024 * 1024, 'x');
  override_handler = [&](const baton::http_request_view& request) {
    http_response response;
    if (request.target == "/big") response.body = big;
    return response;
  };
  http_server::limits limits;
  limits.write_timeout = 500ms;
  const auto server = start(limits);
  test_client stuck(server->local_endpoint(), 4096);
  stuck.send("GET /big HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(run_until([&] { return handled == 1; }));

  test_client other(server->local_endpoint());
  other.send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(await_response(other).status, 200u);
  EXPECT_EQ(server->connection_count(), 2u);

  // The stuck client is dropped by the write timeout; it never read.
  EXPECT_TRUE(run_until([&] { return server->connection_count() == 1; }));
}

TEST_F(http_server_test, open_on_a_port_in_use_fails_with_a_clear_message) {
  const auto first = start();
  const std::string listen = "127.0.0.1:" + std::to_string(first->local_endpoint().port());
  http_server second(io, listen, handler());
  std::error_code ec;
  second.open(ec);
  EXPECT_TRUE(ec);
  EXPECT_EQ(second.last_error(), "cannot listen on " + listen + ": Address already in use");
  // The first one is unaffected.
  test_client client(first->local_endpoint());
  client.send(get_leader);
  EXPECT_EQ(await_response(client).status, 503u);
}

TEST_F(http_server_test, invalid_listen_strings_fail_cleanly) {
  for (const char* listen : {"nope", "1.2.3.4", "[::1]", "host:99999", "", ":80",
                             "localhost:80", "1.2.3.4:65536", "::1:80"}) {
    http_server server(io, listen, handler());
    std::error_code ec;
    EXPECT_NO_THROW(server.open(ec));
    EXPECT_TRUE(ec) << listen;
    EXPECT_EQ(server.last_error().rfind(std::string("invalid HTTP listen address '") + listen + "'",
                                        0),
              0u)
        << server.last_error();
    EXPECT_EQ(server.connection_count(), 0u);
    server.close();
  }
}

TEST_F(http_server_test, listens_on_ipv6_loopback) {
  http_server server(io, "[::1]:0", handler());
  std::error_code ec;
  server.open(ec);
  if (ec) GTEST_SKIP() << "no IPv6 loopback here: " << server.last_error();
  EXPECT_TRUE(server.local_endpoint().address().is_v6());
  test_client client(server.local_endpoint());
  client.send(get_leader);
  EXPECT_EQ(await_response(client).status, 503u);
}

TEST_F(http_server_test, close_drops_connections_and_is_idempotent) {
  const auto server = start();
  test_client client(server->local_endpoint());
  client.send(get_leader);
  EXPECT_EQ(await_response(client).status, 503u);
  EXPECT_EQ(server->connection_count(), 1u);
  server->close();
  server->close();
  EXPECT_EQ(server->connection_count(), 0u);
  EXPECT_TRUE(await_close(client));
  // Reopening works and gets a fresh port.
  std::error_code ec;
  server->open(ec);
  ASSERT_FALSE(ec) << server->last_error();
  test_client again(server->local_endpoint());
  again.send(get_leader);
  EXPECT_EQ(await_response(again).status, 503u);
}

TEST_F(http_server_test, destroying_the_server_with_work_pending_is_safe) {
  http_server::limits limits;
  auto server = start(limits);
  test_client busy(server->local_endpoint());
  busy.send("GET /leader HTTP/1.1\r\n");  // half a request, read pending
  test_client served(server->local_endpoint());
  served.send(get_leader);
  EXPECT_EQ(await_response(served).status, 503u);
  server.reset();
  EXPECT_TRUE(await_close(busy));
  EXPECT_TRUE(await_close(served));
  // Leftover handlers run against the closed server without harm.
  io.restart();
  io.run_for(50ms);
}

TEST_F(http_server_test, a_handler_may_close_the_server) {
  std::unique_ptr<http_server> server;
  override_handler = [&](const baton::http_request_view&) {
    server.reset();
    return http_response{};
  };
  server = start();
  test_client client(server->local_endpoint());
  client.send(get_leader);
  EXPECT_TRUE(await_close(client));
  EXPECT_EQ(server, nullptr);
  EXPECT_EQ(handled, 1);
}

}  // namespace
