// ddmin over the schedule (see shrink.hpp): split the failing list into n
// chunks; if one chunk alone fails, keep it (n = 2); else if the list
// without one chunk fails, keep that (n - 1); else split finer (2n), until
// chunks are single faults. A fault subset that was tried is not tried
// again (runs are expensive, and a flaky failure is re-run only by the
// caller's choice).
#include "campaign/shrink.hpp"

#include <algorithm>
#include <set>

namespace baton::campaign {

namespace {

using subset = std::vector<std::size_t>;  // indexes into the original list

std::vector<fault> pick(const std::vector<fault>& all, const subset& s) {
  std::vector<fault> out;
  for (const auto i : s) out.push_back(all[i]);
  return out;
}

}  // namespace

shrink_result shrink_schedule(const std::vector<fault>& failing,
                              const std::function<bool(const std::vector<fault>&)>& fails,
                              int max_tries) {
  shrink_result r;
  subset current(failing.size());
  for (std::size_t i = 0; i < current.size(); ++i) current[i] = i;
  std::set<subset> tried;
  const auto test = [&](const subset& s) {
    if (tried.count(s) != 0) return false;
    if (r.tries >= max_tries) {
      r.exhausted = true;
      return false;
    }
    tried.insert(s);
    ++r.tries;
    return fails(pick(failing, s));
  };
  std::size_t n = 2;
  // Bounded: every round either shrinks `current` or doubles n up to its size.
  while (current.size() >= 2 && !r.exhausted) {
    n = std::min(n, current.size());
    std::vector<subset> chunks(n);
    for (std::size_t i = 0; i < current.size(); ++i)
      chunks[i * n / current.size()].push_back(current[i]);
    bool reduced = false;
    for (const auto& chunk : chunks) {
      if (test(chunk)) {
        current = chunk;
        n = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced && n > 2) {
      for (std::size_t skip = 0; skip < n && !reduced; ++skip) {
        subset rest;
        for (std::size_t c = 0; c < n; ++c) {
          if (c != skip) rest.insert(rest.end(), chunks[c].begin(), chunks[c].end());
        }
        std::sort(rest.begin(), rest.end());
        if (test(rest)) {
          current = rest;
          n = std::max<std::size_t>(n - 1, 2);
          reduced = true;
        }
      }
    }
    if (!reduced) {
      if (n >= current.size()) break;  // single faults, none removable: 1-minimal
      n = std::min(current.size(), n * 2);
    }
  }
  // A single fault may still be removable: the empty schedule is worth a try
  // only when one fault is left (a run without faults that fails is news).
  if (current.size() == 1 && !r.exhausted && test({})) current.clear();
  r.faults = pick(failing, current);
  return r;
}

}  // namespace baton::campaign
