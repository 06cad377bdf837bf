// member_state: see member_state.hpp.
#include "member_state.hpp"

#include <utility>

namespace baton::redlock_detail {

void member_state::failed(std::string error) {
  last_error_ = std::move(error);
  // Not known any more: shown as not held.
  holds_lease_ = false;
}

void member_state::fenced(std::string why, time_point now, milliseconds ttl) {
  fence_ = std::move(why);
  fence_ends_ = now + ttl;
  // A master that lost its data lost our lease with it.
  holds_lease_ = false;
}

std::string member_state::fence_at(time_point now) const {
  return now < fence_ends_ ? fence_ : std::string();
}

}  // namespace baton::redlock_detail
