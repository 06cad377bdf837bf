// The leader's list of peers: every list the store's record may hold
// (docs/safety.md, F1 and F2).
#include <algorithm>

#include "baton/failsafe_leader.hpp"

namespace baton::failsafe {

void peer_list::sent(std::uint64_t seq, std::vector<std::string> candidates) {
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::erase(candidates, self_);
  // Writes during an outage repeat one list many times: one entry for a run
  // of them, so the list stays as long as the number of distinct lists.
  if (!lists_.empty() && lists_.back().peers == candidates && seq > lists_.back().last_seq) {
    lists_.back().last_seq = seq;
    return;
  }
  if (!lists_.empty() && seq <= lists_.back().last_seq) {
    // Numbers rise within a term; one that does not is kept apart, never
    // merged, so that no list the record may hold is lost.
    lists_.push_back({seq, seq, std::move(candidates)});
    std::stable_sort(lists_.begin(), lists_.end(),
                     [](const written& a, const written& b) { return a.first_seq < b.first_seq; });
    return;
  }
  lists_.push_back({seq, seq, std::move(candidates)});
}

void peer_list::acknowledged(std::uint64_t seq) {
  // The record holds the list of `seq` or of a later write: the runs that
  // ended before it are gone, and the run holding it starts at it.
  std::erase_if(lists_, [seq](const written& w) { return w.last_seq < seq; });
  for (auto& w : lists_) {
    if (w.first_seq < seq) w.first_seq = seq;
  }
}

std::vector<std::string> peer_list::peers() const {
  std::vector<std::string> all;
  for (const auto& w : lists_) all.insert(all.end(), w.peers.begin(), w.peers.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

bool peer_list::may_run_on_confirmations() const {
  return !lists_.empty() && std::none_of(lists_.begin(), lists_.end(),
                                         [](const written& w) { return w.peers.empty(); });
}

}  // namespace baton::failsafe
