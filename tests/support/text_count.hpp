// Counting what a log or a command's output says: how often one line was
// written is what a test of "said once, not twice" asserts.
#pragma once

#include <cstddef>
#include <string_view>

namespace baton::testing {

/// How many times `needle` stands in `text`, overlapping ones included.
inline std::size_t count_occurrences(std::string_view text, std::string_view needle) {
  if (needle.empty()) return 0;
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace baton::testing
