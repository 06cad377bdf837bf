// announcement_merge: see announcements.hpp.
#include "announcements.hpp"

#include <algorithm>
#include <charconv>

namespace baton::redlock_detail {

bool announcement_merge::released(std::string_view message) {
  // "released <value> <token>": the node id, without the nonce, and the
  // token of the term it ended (or the master's counter, from a releaser
  // that did not know it).
  const auto last_space = message.rfind(' ');
  if (last_space == std::string_view::npos) return false;
  const auto value_text = message.substr(0, last_space);
  const auto first_space = value_text.find(' ');
  if (first_space == std::string_view::npos) return false;
  const auto releaser = holder_from_value(value_text.substr(first_space + 1));
  if (releaser == last_release_told_) return false;
  last_release_told_ = releaser;
  std::uint64_t token = 0;
  const auto digits = message.substr(last_space + 1);
  std::from_chars(digits.data(), digits.data() + digits.size(), token);
  // The newest term told, if larger: a later copy of an older term is not
  // news either.
  release_told_token_ = std::max(token, last_told_token_);
  if (known_ && known_->holder == releaser) known_.reset();
  return true;
}

bool announcement_merge::acquired(const announced_term& term) {
  if (term.token <= last_told_token_) return false;
  last_told_token_ = term.token;
  // Each master's copies arrive on its own subscription: a term can come in
  // through one master after its release came through another. That term
  // is old news; a newer one of that node makes its next release news again.
  if (term.holder == last_release_told_) {
    if (term.token <= release_told_token_) return false;
    last_release_told_.clear();
  }
  known_ = known_term{term.holder, term.token};
  return true;
}

announcement_merge::watch_news announcement_merge::watches(std::size_t subscribed) {
  watch_news out;
  out.trusted = subscribed >= majority_of(masters_);
  if (out.trusted == trusted_) return out;
  trusted_ = out.trusted;
  out.trust_changed = true;
  out.wake = out.trusted && ever_trusted_;
  if (out.trusted) ever_trusted_ = true;
  return out;
}

}  // namespace baton::redlock_detail
