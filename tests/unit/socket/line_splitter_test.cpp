// line_splitter on its own: framing, CRLF, the length cap and its boundary.
#include "../../../src/socket/line_splitter.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using baton::socket_detail::line_splitter;
using status = line_splitter::status;

std::vector<std::string> drain(line_splitter& splitter) {
  std::vector<std::string> lines;
  std::string line;
  while (splitter.next(line) == status::line) lines.push_back(line);
  return lines;
}

TEST(line_splitter, splits_lines_across_and_within_chunks) {
  line_splitter splitter(100);
  splitter.feed("a\nbb");
  EXPECT_EQ(drain(splitter), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(splitter.has_partial());
  splitter.feed("b\r\n\nccc\n");
  EXPECT_EQ(drain(splitter), (std::vector<std::string>{"bbb", "", "ccc"}));
  EXPECT_FALSE(splitter.has_partial());
}

TEST(line_splitter, accepts_a_line_at_the_limit) {
  line_splitter splitter(8);
  splitter.feed("12345678");
  std::string line;
  EXPECT_EQ(splitter.next(line), status::need_more);
  splitter.feed("\r");
  EXPECT_EQ(splitter.next(line), status::need_more);
  splitter.feed("\n");
  ASSERT_EQ(splitter.next(line), status::line);
  EXPECT_EQ(line, "12345678");
}

TEST(line_splitter, rejects_a_complete_line_over_the_limit) {
  line_splitter splitter(8);
  splitter.feed("ok\n123456789\nlater\n");
  std::string line;
  ASSERT_EQ(splitter.next(line), status::line);
  EXPECT_EQ(line, "ok");
  EXPECT_EQ(splitter.next(line), status::too_long);
  EXPECT_EQ(splitter.next(line), status::too_long);
}

TEST(line_splitter, rejects_an_unfinished_line_over_the_limit) {
  line_splitter splitter(8);
  std::string line;
  for (int i = 0; i < 9; ++i) {
    splitter.feed("x");
    ASSERT_EQ(splitter.next(line), status::need_more) << i;
  }
  splitter.feed("x");  // 10 bytes: past the limit plus the '\r' allowance
  EXPECT_EQ(splitter.next(line), status::too_long);
  splitter.feed("\n");
  EXPECT_EQ(splitter.next(line), status::too_long);
}

}  // namespace
