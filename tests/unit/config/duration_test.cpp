// Duration parsing and formatting: units, decimals, and the refusal of bare
// numbers and unknown units.
#include <gtest/gtest.h>

#include "baton/config.hpp"
#include "baton/duration.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

TEST(duration, parses_each_unit) {
  EXPECT_EQ(try_parse_duration("250ms"), milliseconds{250});
  EXPECT_EQ(try_parse_duration("10s"), milliseconds{10000});
  EXPECT_EQ(try_parse_duration("2m"), milliseconds{120000});
  EXPECT_EQ(try_parse_duration("1h"), milliseconds{3600000});
  EXPECT_EQ(try_parse_duration("0s"), milliseconds{0});
  EXPECT_EQ(try_parse_duration("0ms"), milliseconds{0});
}

TEST(duration, parses_decimals_exactly) {
  EXPECT_EQ(try_parse_duration("1.5s"), milliseconds{1500});
  EXPECT_EQ(try_parse_duration("0.3s"), milliseconds{300});
  EXPECT_EQ(try_parse_duration("0.1h"), milliseconds{360000});
  EXPECT_EQ(try_parse_duration("1.25m"), milliseconds{75000});
  EXPECT_EQ(try_parse_duration("2.5ms"), milliseconds{3});  // rounds to nearest
  EXPECT_EQ(try_parse_duration("0.0004s"), milliseconds{0});
  EXPECT_EQ(try_parse_duration("1.0000000000001s"), milliseconds{1000});
}

TEST(duration, ignores_surrounding_blanks) {
  EXPECT_EQ(try_parse_duration("  10s\t"), milliseconds{10000});
}

TEST(duration, bare_number_asks_for_a_unit) {
  std::string why;
  EXPECT_FALSE(try_parse_duration("10", &why));
  EXPECT_NE(why.find("add a unit"), std::string::npos) << why;
  EXPECT_NE(why.find("10s"), std::string::npos) << why;
}

TEST(duration, rejects_bad_text) {
  for (const char* bad : {"", " ", "s", "ms", "10x", "10 s", "10sec", "1.s", ".5s", "-1s", "+1s",
                          "1e3ms", "10S", "1,5s", "10s10ms", "0x10s", "nan s", "inf", "10us",
                          "1..5s", "１s"}) {
    std::string why;
    EXPECT_FALSE(try_parse_duration(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(duration, unknown_unit_names_the_units) {
  std::string why;
  EXPECT_FALSE(try_parse_duration("5us", &why));
  EXPECT_NE(why.find("ms, s, m and h"), std::string::npos) << why;
}

TEST(duration, rejects_values_above_the_cap_without_overflow) {
  EXPECT_EQ(try_parse_duration("8760h"), max_config_duration);
  EXPECT_FALSE(try_parse_duration("8761h"));
  EXPECT_FALSE(try_parse_duration("99999999999999999999999999h"));
  EXPECT_FALSE(try_parse_duration("9223372036854775807ms"));
  EXPECT_EQ(try_parse_duration("000000000000000000001s"), milliseconds{1000});
}

TEST(duration, parse_duration_throws_config_error_naming_the_option) {
  EXPECT_EQ(parse_duration("lease.ttl", "3s"), milliseconds{3000});
  try {
    parse_duration("lease.ttl", "3");
    FAIL() << "expected config_error";
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "lease.ttl");
    EXPECT_EQ(std::string(e.what()).rfind("lease.ttl: 3 is not allowed: ", 0), 0u) << e.what();
  }
}

TEST(duration, formats_with_the_largest_whole_unit) {
  EXPECT_EQ(format_duration(10s), "10s");
  EXPECT_EQ(format_duration(3333ms), "3333ms");
  EXPECT_EQ(format_duration(2min), "2m");
  EXPECT_EQ(format_duration(1h), "1h");
  EXPECT_EQ(format_duration(90s), "90s");
  EXPECT_EQ(format_duration(0ms), "0s");
  EXPECT_EQ(format_duration(1500ms), "1500ms");
  EXPECT_EQ(format_duration(-5s), "-5s");
}

TEST(duration, format_round_trips) {
  for (long long ms : {0LL, 1LL, 999LL, 1000LL, 1001LL, 59999LL, 60000LL, 3600000LL, 3599999LL,
                       7200000LL, 31536000000LL}) {
    const milliseconds d{ms};
    EXPECT_EQ(try_parse_duration(format_duration(d)), d) << ms;
  }
}

}  // namespace
}  // namespace baton
