// Keeps the values of one metric label to a bounded set, so that whatever
// strings the daemon passes in, the registry cannot grow without limit.
#pragma once

#include <cstddef>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

class label_set {
 public:
  /// The value that stands for everything beyond the set.
  static constexpr std::string_view overflow = "other";

  /// `known` are always accepted; further values are accepted until `limit`
  /// distinct values (known ones included) have been seen. A limit at or
  /// below known.size() makes the set closed.
  label_set(std::vector<std::string> known, std::size_t limit);

  /// `value` if it is known or admitted now, else "other".
  std::string admit(std::string_view value);

  /// The values given at construction, in their order.
  const std::vector<std::string>& known() const { return known_; }

 private:
  std::vector<std::string> known_;
  std::size_t limit_;
  std::mutex mutex_;
  std::set<std::string, std::less<>> seen_;
};

}  // namespace baton
