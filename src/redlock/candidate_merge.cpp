// merge_candidates: see candidate_merge.hpp.
#include "candidate_merge.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace baton::redlock_detail {

std::vector<candidate_info> merge_candidates(
    const std::vector<std::vector<registered_candidate>>& per_master) {
  struct merged {
    candidate_info info;
    milliseconds left{0};
  };
  std::map<std::string, merged> by_node;
  for (const auto& registry : per_master) {
    for (const auto& r : registry) {
      auto [at, first] = by_node.try_emplace(r.info.node, merged{r.info, r.left});
      if (first) continue;
      auto& m = at->second;
      m.info.live_for = std::max(m.info.live_for, r.info.live_for);
      if (r.left > m.left) {
        m.left = r.left;
        m.info.priority = r.info.priority;
      }
    }
  }
  std::vector<candidate_info> out;
  out.reserve(by_node.size());
  for (auto& [node, m] : by_node) out.push_back(std::move(m.info));
  return out;
}

}  // namespace baton::redlock_detail
