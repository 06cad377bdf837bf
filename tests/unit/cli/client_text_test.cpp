// The small formatting helpers behind the client's text.
#include "../../../src/cli/client_text.hpp"

#include <gtest/gtest.h>

namespace baton::cli {
namespace {

TEST(client_text, human_durations) {
  EXPECT_EQ(human_duration(-5), "0ms");
  EXPECT_EQ(human_duration(0), "0ms");
  EXPECT_EQ(human_duration(999), "999ms");
  EXPECT_EQ(human_duration(1000), "1.0s");
  EXPECT_EQ(human_duration(12'345), "12.3s");
  EXPECT_EQ(human_duration(59'949), "59.9s");
  EXPECT_EQ(human_duration(59'950), "1m00s");
  EXPECT_EQ(human_duration(125'000), "2m05s");
  EXPECT_EQ(human_duration(3'600'000), "1h00m");
  EXPECT_EQ(human_duration(3'725'000), "1h02m");
}

TEST(client_text, fields_of_the_wrong_type_are_absent) {
  const nlohmann::json j = {{"s", "x"}, {"i", 5},    {"u", 18446744073709551615ull},
                            {"f", 2.9}, {"b", true}, {"n", nullptr}};
  EXPECT_EQ(string_field(j, "s"), "x");
  EXPECT_FALSE(string_field(j, "i"));
  EXPECT_EQ(int_field(j, "i"), 5);
  EXPECT_EQ(int_field(j, "u"), INT64_MAX);
  EXPECT_EQ(int_field(j, "f"), 2);
  EXPECT_FALSE(int_field(j, "s"));
  EXPECT_EQ(bool_field(j, "b"), true);
  EXPECT_FALSE(bool_field(j, "n"));
  EXPECT_FALSE(string_field(nlohmann::json::array(), "s"));
  EXPECT_FALSE(int_field(j, "missing"));
}

TEST(client_text, printable_replaces_control_characters) {
  EXPECT_EQ(printable("a\nb\x1b[0m\x7f"), "a?b?[0m?");
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");
}

TEST(client_text, other_messages_are_shown_plainly) {
  EXPECT_EQ(event_text({{"type", "error"}, {"error", "boom"}}), "error: boom");
  EXPECT_EQ(event_text({{"type", "pong"}}), "message {\"type\":\"pong\"}");
  EXPECT_EQ(event_text({{"type", "event"}}), "?");
}

}  // namespace
}  // namespace baton::cli
