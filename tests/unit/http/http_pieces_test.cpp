// The pure helpers behind http_server: the listen address parser, the
// printable clipper and the wire response builder.
#include <boost/beast/http/field.hpp>
#include <string>

#include <gtest/gtest.h>

#include "../../../src/http/listen_address.hpp"
#include "../../../src/http/printable.hpp"
#include "../../../src/http/wire_response.hpp"

namespace {

using baton::http_detail::make_wire_response;
using baton::http_detail::parse_listen_address;
using baton::http_detail::printable;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

std::string field(const baton::http_detail::wire_response& message, http::field name) {
  const auto found = message.find(name);
  if (found == message.end()) return "<absent>";
  return std::string(found->value());
}

std::string field(const baton::http_detail::wire_response& message, const char* name) {
  const auto found = message.find(name);
  if (found == message.end()) return "<absent>";
  return std::string(found->value());
}

TEST(http_listen_address, parses_ipv4_and_bracketed_ipv6) {
  tcp::endpoint endpoint;
  std::string error = "stale";
  ASSERT_TRUE(parse_listen_address("127.0.0.1:9464", endpoint, error)) << error;
  EXPECT_EQ(endpoint.address().to_string(), "127.0.0.1");
  EXPECT_EQ(endpoint.port(), 9464);
  EXPECT_EQ(error, "");
  ASSERT_TRUE(parse_listen_address("0.0.0.0:0", endpoint, error)) << error;
  EXPECT_EQ(endpoint.port(), 0);
  ASSERT_TRUE(parse_listen_address("[::1]:65535", endpoint, error)) << error;
  EXPECT_TRUE(endpoint.address().is_v6());
  EXPECT_EQ(endpoint.port(), 65535);
  ASSERT_TRUE(parse_listen_address("[::]:80", endpoint, error)) << error;
  EXPECT_TRUE(endpoint.address().is_unspecified());
}

TEST(http_listen_address, rejects_bad_input_with_a_message_naming_it) {
  const struct {
    const char* text;
    const char* why;
  } cases[] = {
      {"", "expected ADDR:PORT"},
      {"nope", "expected ADDR:PORT"},
      {"1.2.3.4", "expected ADDR:PORT"},
      {"[::1]", "expected ':PORT'"},
      {"[::1:80", "missing ']'"},
      {"[::1]80", "expected ':PORT'"},
      {"host:99999", "port must be a number"},
      {"host:80", "'host' is not an IPv4 address"},
      {"localhost:9464", "host names are not resolved"},
      {"1.2.3.4:", "port must be a number"},
      {"1.2.3.4:65536", "port must be a number"},
      {"1.2.3.4:123456", "port must be a number"},
      {"1.2.3.4:-1", "port must be a number"},
      {"1.2.3.4:+80", "port must be a number"},
      {"1.2.3.4: 80", "port must be a number"},
      {":9464", "address is missing"},
      {"[]:9464", "address is missing"},
      {"::1:80", "needs brackets"},
      {"1.2.3:80", "not an IPv4 address"},
      {"1.2.3.256:80", "not an IPv4 address"},
      {"[1.2.3.4]:80", "not an IPv6 address"},
      {"[zz::1]:80", "not an IPv6 address"},
  };
  for (const auto& c : cases) {
    tcp::endpoint endpoint;
    std::string error;
    EXPECT_FALSE(parse_listen_address(c.text, endpoint, error)) << c.text;
    EXPECT_EQ(error.rfind("invalid HTTP listen address '" + std::string(c.text) + "': ", 0), 0u)
        << error;
    EXPECT_NE(error.find(c.why), std::string::npos) << c.text << " -> " << error;
  }
}

TEST(http_listen_address, echoes_hostile_input_clipped_and_printable) {
  tcp::endpoint endpoint;
  std::string error;
  EXPECT_FALSE(parse_listen_address("\x1b[2J" + std::string(1000, 'a'), endpoint, error));
  EXPECT_EQ(error.find('\x1b'), std::string::npos);
  EXPECT_LT(error.size(), 400u);
}

TEST(http_printable, replaces_control_and_non_ascii_bytes_and_clips) {
  EXPECT_EQ(printable("plain text", 100), "plain text");
  EXPECT_EQ(printable("a\r\nb\t\x7f\xc3\xa9", 100), "a??b????");
  EXPECT_EQ(printable("abcdef", 3), "abc...");
  EXPECT_EQ(printable("abc", 3), "abc");
  EXPECT_EQ(printable("", 0), "");
}

TEST(http_wire_response, carries_the_standard_headers) {
  baton::http_response response;
  response.body = "leader\n";
  response.headers.emplace_back("X-Extra", "1");
  const auto message = make_wire_response(response, 11, true, false);
  EXPECT_EQ(message.result_int(), 200u);
  EXPECT_EQ(message.version(), 11u);
  EXPECT_EQ(field(message, http::field::server), "baton");
  EXPECT_EQ(field(message, http::field::cache_control), "no-store");
  EXPECT_EQ(field(message, http::field::content_type), "text/plain; charset=utf-8");
  EXPECT_EQ(field(message, http::field::content_length), "7");
  EXPECT_EQ(field(message, "X-Extra"), "1");
  EXPECT_TRUE(message.keep_alive());
  EXPECT_EQ(message.body(), "leader\n");
}

TEST(http_wire_response, head_keeps_the_length_and_drops_the_body) {
  baton::http_response response;
  response.body = std::string(1234, 'x');
  const auto message = make_wire_response(response, 11, true, true);
  EXPECT_EQ(field(message, http::field::content_length), "1234");
  EXPECT_TRUE(message.body().empty());
}

TEST(http_wire_response, close_is_announced) {
  const auto message = make_wire_response({}, 11, false, false);
  EXPECT_FALSE(message.keep_alive());
  EXPECT_EQ(field(message, http::field::connection), "close");
  const auto old = make_wire_response({}, 10, true, false);
  EXPECT_EQ(old.version(), 10u);
  EXPECT_TRUE(old.keep_alive());
}

TEST(http_wire_response, invalid_status_becomes_500) {
  for (const unsigned status : {0u, 99u, 600u, 1000u, 123456u}) {
    baton::http_response response;
    response.status = status;
    EXPECT_EQ(make_wire_response(response, 11, true, false).result_int(), 500u) << status;
  }
}

TEST(http_wire_response, drops_headers_that_would_break_framing) {
  baton::http_response response;
  response.body = "x";
  response.headers = {{"X-Evil", "a\r\nSet-Cookie: x=1"},
                      {"Bad Name", "v"},
                      {"", "v"},
                      {"content-length", "99"},
                      {"Connection", "keep-alive"},
                      {"Transfer-Encoding", "chunked"},
                      {"Allow", "GET, HEAD"}};
  response.content_type = "text/plain\r\nX-Injected: 1";
  const auto message = make_wire_response(response, 11, false, false);
  EXPECT_EQ(field(message, "X-Evil"), "<absent>");
  EXPECT_EQ(field(message, "Set-Cookie"), "<absent>");
  EXPECT_EQ(field(message, "X-Injected"), "<absent>");
  EXPECT_EQ(field(message, http::field::content_length), "1");
  EXPECT_EQ(field(message, http::field::connection), "close");
  EXPECT_EQ(field(message, http::field::transfer_encoding), "<absent>");
  EXPECT_EQ(field(message, "Allow"), "GET, HEAD");
  EXPECT_EQ(field(message, http::field::content_type), "application/octet-stream");
}

}  // namespace
