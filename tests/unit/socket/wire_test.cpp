// Request decoding and reply encoding without sockets.
#include "../../../src/socket/wire.hpp"

#include <string>

#include <gtest/gtest.h>

namespace {

using namespace baton::socket_detail;
using json = nlohmann::json;

TEST(wire, parses_a_request) {
  const auto parsed = parse_request(R"({"cmd":"status","id":1})");
  EXPECT_TRUE(parsed.error.empty());
  EXPECT_EQ(parsed.cmd, "status");
  EXPECT_EQ(parsed.request["id"], 1);
}

TEST(wire, rejects_what_is_not_a_request) {
  EXPECT_EQ(parse_request("nope").error.rfind("invalid JSON: ", 0), 0u);
  EXPECT_EQ(parse_request("").error.rfind("invalid JSON: ", 0), 0u);
  EXPECT_EQ(parse_request("{} {}").error.rfind("invalid JSON: ", 0), 0u);
  EXPECT_EQ(parse_request("null").error, "request must be a JSON object");
  const auto no_cmd = parse_request(R"({"id":"x"})");
  EXPECT_EQ(no_cmd.error, "request has no \"cmd\" string");
  EXPECT_EQ(no_cmd.request["id"], "x");  // kept, so the id can be echoed
}

TEST(wire, keeps_error_messages_short) {
  const auto parsed = parse_request("\"" + std::string(10000, 'a'));
  EXPECT_LT(parsed.error.size(), 300u);
}

TEST(wire, echoes_only_scalar_ids) {
  json reply{{"type", "pong"}};
  echo_id(json{{"id", 1}}, reply);
  EXPECT_EQ(reply["id"], 1);
  json other{{"type", "pong"}};
  echo_id(json{{"id", json::array({1})}}, other);
  EXPECT_FALSE(other.contains("id"));
}

TEST(wire, encodes_one_line_and_survives_invalid_utf8) {
  EXPECT_EQ(encode_line(json{{"a", "b\nc"}}), "{\"a\":\"b\\nc\"}\n");
  const std::string line = encode_line(json{{"a", std::string("\xff")}});
  EXPECT_EQ(line, "{\"a\":\"\xEF\xBF\xBD\"}\n");
}

TEST(wire, clips_without_splitting_utf8) {
  EXPECT_EQ(clip("short"), "short");
  EXPECT_EQ(clip("abcdef", 3), "abc...");
  EXPECT_EQ(clip("a\xC3\xA9", 2), "a...");
}

}  // namespace
