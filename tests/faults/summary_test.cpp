// The bookends of a ctest run of the fault suite: `fault_summary.reset`
// empties the records file before the scenarios, `fault_summary.report`
// prints the summary of all of them afterwards and fails if any overlap was
// found (see CMakeLists.txt: a fixture setup and cleanup). Both are skipped
// when the binary runs outside ctest, where the Environment in
// fault_summary.cpp reports instead. Also unit tests of the summary itself.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "fault_summary.hpp"

namespace baton::testing::summary_test {
namespace {

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

TEST(fault_summary, reset) {
  const std::string path = env_or_empty("BATON_FAULT_RECORDS");
  if (path.empty()) GTEST_SKIP() << "BATON_FAULT_RECORDS is not set (not run by ctest)";
  std::error_code ec;
  std::filesystem::remove(path, ec);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(fault_summary, report) {
  const std::string path = env_or_empty("BATON_FAULT_RECORDS");
  if (path.empty()) GTEST_SKIP() << "BATON_FAULT_RECORDS is not set (not run by ctest)";
  const auto records = read_fault_records(path);
  ASSERT_FALSE(records.empty()) << "no scenario recorded anything in " << path;
  const std::string text = format_fault_summary(records);
  std::printf("%s", text.c_str());
  const std::string written =
      write_fault_summary(text, env_or_empty("BATON_FAULT_SUMMARY_DEFAULT"));
  if (!written.empty()) std::printf("summary written to %s\n", written.c_str());
  std::size_t overlaps = 0;
  // A round that measures a documented window asserts its own overlaps.
  for (const auto& r : records) {
    if (!r.window) overlaps += r.overlaps;
  }
  EXPECT_EQ(overlaps, 0u) << text;
}

TEST(fault_summary_format, overlaps_in_a_documented_window_are_counted_apart) {
  fault_record window{"partition, ack off", 1, 1, 6000.0, 4000.0, std::nullopt};
  window.window = true;
  const std::vector<fault_record> records = {window, {"kill", 1, 0, 10.0, 2000.0, std::nullopt}};
  const std::string text = format_fault_summary(records);
  EXPECT_NE(text.find("0 overlaps found (and 1 measured in windows docs/safety.md names"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| partition, ack off | 1 | 1 (a documented window) |"), std::string::npos)
      << text;
}

TEST(fault_summary_format, groups_and_sorts_by_kind_with_min_median_max) {
  std::vector<fault_record> records = {{"kill", 1, 0, 10.0, 2000.0, std::nullopt},
                                       {"kill", 1, 0, 30.0, 2100.0, std::nullopt},
                                       {"kill", 1, 0, 20.0, 1900.0, std::nullopt},
                                       {"socket", 1000, 0, std::nullopt, std::nullopt, 4.0, true},
                                       {"hook", 1, 0, std::nullopt, 9.0, std::nullopt}};
  const std::string text = format_fault_summary(records);
  EXPECT_NE(text.find("1004 faults injected in 5 rounds, 0 overlaps found"), std::string::npos)
      << text;
  EXPECT_NE(text.find("| kill | 3 | 0 | 10 / 20 / 30 | 1900 / 2000 / 2100 | — |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| socket | 1000 | 0 | kept working | — | 4 / 4 / 4 |"), std::string::npos)
      << text;
  EXPECT_NE(text.find("| hook | 1 | 0 | — | 9 / 9 / 9 | — |"), std::string::npos) << text;
  EXPECT_LT(text.find("| hook |"), text.find("| kill |"));
  EXPECT_LT(text.find("| kill |"), text.find("| socket |"));
}

}  // namespace
}  // namespace baton::testing::summary_test
