// Lists of URLs as a person writes them: see baton/option_text.hpp.
#include "baton/option_text.hpp"

#include <algorithm>

namespace baton {

std::vector<std::string> url_list(const std::vector<std::string>& entries) {
  std::vector<std::string> urls;
  for (const auto& entry : entries) {
    std::size_t from = 0;
    while (from <= entry.size()) {
      const auto comma = std::min(entry.find(',', from), entry.size());
      auto piece = entry.substr(from, comma - from);
      piece.erase(0, piece.find_first_not_of(" \t"));
      piece.erase(piece.find_last_not_of(" \t") + 1);
      if (!piece.empty()) urls.push_back(std::move(piece));
      from = comma + 1;
    }
  }
  return urls;
}

}  // namespace baton
