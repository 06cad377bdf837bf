// merge_candidates: see candidate_merge.hpp.
#include "candidate_merge.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace baton::redlock_detail {

std::vector<candidate_info> merge_candidates(
    const std::vector<std::vector<registered_candidate>>& per_master) {
  // Per node, its most recent registration first.
  std::map<std::string, const registered_candidate*> latest;
  for (const auto& registry : per_master) {
    for (const auto& r : registry) {
      auto [at, first] = latest.try_emplace(r.info.node, &r);
      if (!first && r.left > at->second->left) at->second = &r;
    }
  }
  std::map<std::string, candidate_info> by_node;
  for (const auto& [node, r] : latest) by_node.emplace(node, r->info);
  for (const auto& registry : per_master) {
    for (const auto& r : registry) {
      auto& m = by_node.at(r.info.node);
      if (r.nonce == latest.at(r.info.node)->nonce) {
        m.live_for = std::max(m.live_for, r.info.live_for);
        m.cooling_down_for = std::max(m.cooling_down_for, r.info.cooling_down_for);
      }
    }
  }
  std::vector<candidate_info> out;
  out.reserve(by_node.size());
  for (auto& [node, info] : by_node) out.push_back(std::move(info));
  return out;
}

}  // namespace baton::redlock_detail
