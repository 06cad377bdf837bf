// What the Redlock store knows of one master, as status() shows it: whether
// it holds our lease, its last error and its reset fence. Status shows the
// master as it is now: an error is dropped at the master's next answer, and
// a fence once it has ended (it lasts one ttl from when it was raised) or
// the master was seen granting. Pure: the store feeds in what happened and
// the time.
#pragma once

#include <string>

#include "baton/time.hpp"

namespace baton::redlock_detail {

class member_state {
 public:
  /// The master answered (a reply, not a transport failure): its last
  /// error, if any, is over.
  void answered() { last_error_.clear(); }
  /// A transport error or an unusable reply: shown until the next answer.
  void failed(std::string error);
  /// The master raised its reset fence (`why`) about `now`: it holds every
  /// grant back for `ttl` from then.
  void fenced(std::string why, time_point now, milliseconds ttl);
  /// It granted, renewed or was taken: not fenced now.
  void unfenced() { fence_.clear(); }
  void holds_lease(bool holds) { holds_lease_ = holds; }

  bool holds_lease() const { return holds_lease_; }
  const std::string& last_error() const { return last_error_; }
  /// Why it holds grants back at `now`; "" when it does not (or not any
  /// more, as far as this node knows).
  std::string fence_at(time_point now) const;

 private:
  bool holds_lease_ = false;
  std::string last_error_;
  std::string fence_;
  time_point fence_ends_{};
};

}  // namespace baton::redlock_detail
