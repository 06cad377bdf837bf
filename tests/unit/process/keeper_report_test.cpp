// The keeper's report of the command's end as the daemon reads it: which
// lines count, and how a reader joins the pieces the socket hands out.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "process/keeper_report.hpp"

namespace baton::process {
namespace {

struct report_case {
  std::string line;
  std::optional<exit_status> expected;  // nullopt: not a report
};

exit_status exited(int code) {
  return exit_status{code, 0};
}
exit_status killed(int signal) {
  return exit_status{0, signal};
}

TEST(keeper_report, lines_and_what_they_report) {
  const std::vector<report_case> cases = {
      {"exited 0", exited(0)},
      {"exited 3", exited(3)},
      {"exited 255", exited(255)},
      {"killed 15", killed(15)},
      {"killed 9", killed(9)},
      {"killed 1", killed(1)},
      {"killed 64", killed(64)},
      // Out of range: no exit code or signal looks like this.
      {"exited 256", std::nullopt},
      {"exited -1", std::nullopt},
      {"killed 0", std::nullopt},
      {"killed 65", std::nullopt},
      // Malformed.
      {"exited", std::nullopt},
      {"exited ", std::nullopt},
      {"exited 3 ", std::nullopt},
      {"exited 3x", std::nullopt},
      {"exited  3", std::nullopt},
      {"exited 99999999999999999999", std::nullopt},
      {"EXITED 3", std::nullopt},
      {"exited\t3", std::nullopt},
      // Not a report at all (the daemon's own deadline line, say).
      {"deadline 123", std::nullopt},
      {"", std::nullopt},
  };
  for (const auto& c : cases) {
    auto got = parse_keeper_report(c.line);
    ASSERT_EQ(got.has_value(), c.expected.has_value()) << "line: '" << c.line << "'";
    if (got) {
      EXPECT_EQ(got->code, c.expected->code) << "line: '" << c.line << "'";
      EXPECT_EQ(got->signal, c.expected->signal) << "line: '" << c.line << "'";
    }
  }
}

struct reader_case {
  const char* name;
  std::vector<std::string> pieces;  // fed one after another
  int reported_after;               // index of the piece that completes the report; -1: never
  exit_status expected;
};

TEST(keeper_report, a_reader_reports_once_a_whole_line_arrived) {
  const std::vector<reader_case> cases = {
      {"one piece", {"exited 7\n"}, 0, exited(7)},
      {"split in the word", {"exi", "ted 7\n"}, 1, exited(7)},
      {"split before the newline", {"killed 15", "\n"}, 1, killed(15)},
      {"byte by byte", {"k", "i", "l", "l", "e", "d", " ", "9", "\n"}, 8, killed(9)},
      {"no newline yet", {"exited 7"}, -1, {}},
      {"an unknown line first", {"hello there\nexited 2\n"}, 0, exited(2)},
      {"a malformed report first", {"exited x\n", "exited 4\n"}, 1, exited(4)},
      {"an overlong line is skipped whole",
       {std::string(100, 'a') + " exited 1\n", "exited 5\n"},
       1,
       exited(5)},
      {"an overlong line of blanks", {std::string(200, ' ') + "\n"}, -1, {}},
      {"the first of two reports", {"exited 1\nexited 2\n"}, 0, exited(1)},
  };
  for (const auto& c : cases) {
    keeper_report_reader reader;
    int reported_at = -1;
    exit_status got;
    for (std::size_t i = 0; i < c.pieces.size(); ++i) {
      if (auto status = reader.feed(c.pieces[i])) {
        reported_at = static_cast<int>(i);
        got = *status;
        break;
      }
    }
    EXPECT_EQ(reported_at, c.reported_after) << c.name;
    if (reported_at >= 0) {
      EXPECT_EQ(got.code, c.expected.code) << c.name;
      EXPECT_EQ(got.signal, c.expected.signal) << c.name;
    }
  }
}

}  // namespace
}  // namespace baton::process
