// The store-neutral parts of the port: the store_errc condition category and
// the names used in status output and metrics labels.
#include "baton/lease_store.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace baton {
namespace {

class store_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "baton.store"; }
  std::string message(int value) const override {
    switch (static_cast<store_errc>(value)) {
      case store_errc::unavailable: return "store unavailable";
      case store_errc::timeout: return "store timed out";
      case store_errc::auth: return "store refused the credentials";
      case store_errc::protocol: return "store answered something unexpected";
      case store_errc::no_quorum: return "store quorum not reached";
      case store_errc::refused: return "store refused the command";
    }
    return "unknown store error";
  }
};

constexpr std::array<const char*, 7> kinds{"unavailable", "timeout", "auth",  "protocol",
                                           "no_quorum",   "refused", "other"};

}  // namespace

const std::error_category& store_category() noexcept {
  static const store_category_impl category;
  return category;
}

std::error_condition make_error_condition(store_errc e) noexcept {
  return {static_cast<int>(e), store_category()};
}

const char* store_error_kind(std::error_code ec) {
  for (int i = 1; i <= static_cast<int>(store_errc::refused); ++i) {
    if (ec == static_cast<store_errc>(i)) return kinds[static_cast<std::size_t>(i - 1)];
  }
  return "other";
}

std::span<const char* const> store_error_kinds() { return kinds; }

const char* to_string(link_state s) {
  switch (s) {
    case link_state::connected: return "connected";
    case link_state::connecting: return "connecting";
    case link_state::disconnected: return "disconnected";
  }
  return "disconnected";
}

const char* to_string(wakeup_state s) {
  switch (s) {
    case wakeup_state::off: return "off";
    case wakeup_state::connecting: return "connecting";
    case wakeup_state::subscribed: return "subscribed";
    case wakeup_state::disconnected: return "disconnected";
  }
  return "off";
}

void require_valid_identity(const store_identity& identity, const char* store) {
  const std::string name(store);
  if (identity.election.empty()) throw std::invalid_argument(name + ": election is empty");
  if (identity.node_id.empty()) throw std::invalid_argument(name + ": node_id is empty");
  if (identity.ttl <= milliseconds::zero()) {
    throw std::invalid_argument(name + ": ttl must be positive, got " +
                                std::to_string(identity.ttl.count()) + " ms");
  }
}

}  // namespace baton
