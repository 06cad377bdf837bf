// Errors shown to people never carry the JSON library's internal text
// ("[json.exception.parse_error.101] parse error at line 1, column 1: ..."):
// not the client's own messages, not the daemon's error replies (decoded by
// src/socket/wire.cpp), and not an older daemon's replies that still do.
#include "../../../src/cli/client_text.hpp"

#include "cli_test_util.hpp"
#include "socket/wire.hpp"

namespace baton::cli_test {
namespace {

using socket_detail::parse_request;

TEST(plain_errors, the_daemon_words_invalid_json_itself) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"nope", "invalid JSON: syntax error at byte 2"},
      {"", "invalid JSON: the line is empty"},
      {"   ", "invalid JSON: the line is empty"},
      {"{} {}", "invalid JSON: more text follows the JSON value at byte 4"},
      {"{\"cmd\":", "invalid JSON: the line ends before the JSON value does"},
      {std::string(1000, '['), "invalid JSON: the line ends before the JSON value does"},
      {std::string("{\"cmd\":\"\xff\xfe\"}"), "invalid JSON: not valid UTF-8 at byte 9"},
  };
  for (const auto& [line, expected] : cases) {
    const auto parsed = parse_request(line);
    EXPECT_EQ(parsed.error, expected) << line.substr(0, 20);
    EXPECT_EQ(parsed.error.find("json.exception"), std::string::npos) << parsed.error;
  }
}

TEST(plain_errors, an_older_daemons_parser_text_is_cleaned_up) {
  using cli::plain_error;
  EXPECT_EQ(plain_error("invalid JSON: [json.exception.parse_error.101] parse error at line 1, "
                        "column 1: syntax error while parsing value - invalid literal; last read: "
                        "'n'"),
            "invalid JSON");
  EXPECT_EQ(plain_error("[json.exception.parse_error.101] parse error at line 1"),
            "the line is not valid JSON");
  EXPECT_EQ(plain_error("[json.exception.type_error.302] type must be number, but is string"),
            "type must be number, but is string");
  EXPECT_EQ(plain_error("not the leader"), "not the leader");
  EXPECT_EQ(cli::daemon_error_text({{"type", "error"}}), "an error without a message");
}

using plain_error_test = cli_test;

TEST_F(plain_error_test, a_handler_tripping_over_a_field_gets_a_plain_reply) {
  fake_daemon daemon(socket_path());
  daemon.set_resign([](const json& request) -> json {
    return {{"cooldown_ms", request.at("no such field").get<int>()}};
  });
  auto r = run_cli({"resign", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "baton: the daemon refused to resign: command 'resign': a field of the request is "
            "missing or has the wrong type\n");
}

TEST_F(plain_error_test, a_daemon_error_reply_with_parser_text_is_shown_plainly) {
  raw_server old_daemon(socket_path(),
                        "{\"type\":\"error\",\"error\":\"invalid JSON: "
                        "[json.exception.parse_error.101] parse error at line 1\"}\n");
  auto r = run_cli({"status", "--socket", socket_path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "baton: the daemon answered: invalid JSON\n");
}

}  // namespace
}  // namespace baton::cli_test
