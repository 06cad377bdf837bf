// The shrinker: delta debugging (Zeller's ddmin) over a failing schedule,
// down to a list of faults from which no single fault can be removed and
// still fail, within a bound on tries. Each try is a real campaign run in
// the tool, a predicate call here: pure, so the unit tier drives it with a
// made-up predicate.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "campaign/fault_schedule.hpp"

namespace baton::campaign {

struct shrink_result {
  /// The smallest failing schedule found (the input when nothing smaller failed).
  std::vector<fault> faults;
  /// Predicate calls made.
  int tries = 0;
  /// The bound on tries ended the search before it was done.
  bool exhausted = false;
};

/// Shrinks `failing` (which is taken to fail) with at most `max_tries` calls
/// of `fails`, which runs a candidate schedule and says whether it failed.
/// Subsets keep the faults' order and times.
shrink_result shrink_schedule(const std::vector<fault>& failing,
                              const std::function<bool(const std::vector<fault>&)>& fails,
                              int max_tries);

}  // namespace baton::campaign
