// Parsing the keeper's report line; see keeper_report.hpp.
#include "keeper_report.hpp"

#include <charconv>

#include "baton/keeper.hpp"

namespace baton::process {

namespace {

// The longest report is "killed 64" / "exited 255"; some slack for a newer keeper.
constexpr std::size_t max_report_bytes = 64;

// The whole of `text` as a number in [low, high], else nullopt.
std::optional<int> number_in(std::string_view text, int low, int high) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty() || value < low ||
      value > high) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<exit_status> parse_keeper_report(std::string_view line) {
  auto space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view word = line.substr(0, space);
  const std::string_view value = line.substr(space + 1);
  exit_status status;
  if (word == keeper_exited_report) {
    auto code = number_in(value, 0, 255);
    if (!code) return std::nullopt;
    status.code = *code;
    return status;
  }
  if (word == keeper_killed_report) {
    // Signal numbers on Linux run 1-64 (the real-time ones included).
    auto signal = number_in(value, 1, 64);
    if (!signal) return std::nullopt;
    status.signal = *signal;
    return status;
  }
  return std::nullopt;
}

std::optional<exit_status> keeper_report_reader::feed(std::string_view bytes) {
  for (char c : bytes) {
    if (c != '\n') {
      if (line_.size() < max_report_bytes) {
        line_.push_back(c);
      } else {
        overlong_ = true;
      }
      continue;
    }
    std::optional<exit_status> report;
    if (!overlong_) report = parse_keeper_report(line_);
    line_.clear();
    overlong_ = false;
    if (report) return report;
  }
  return std::nullopt;
}

}  // namespace baton::process
