// See label_set.hpp.
#include "label_set.hpp"

#include <utility>

namespace baton {

label_set::label_set(std::vector<std::string> known, std::size_t limit)
    : known_(std::move(known)), limit_(limit), seen_(known_.begin(), known_.end()) {}

std::string label_set::admit(std::string_view value) {
  std::lock_guard lock(mutex_);
  if (seen_.find(value) != seen_.end()) {
    return std::string(value);
  }
  if (value == overflow || seen_.size() >= limit_) {
    return std::string(overflow);
  }
  return *seen_.emplace(value).first;
}

}  // namespace baton
