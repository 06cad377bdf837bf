// Error codes of the Redlock store's own verdicts; failures of one master
// keep that master's redis_errc. The category maps each onto a store-neutral
// condition (store_errc).
#pragma once

#include <system_error>

#include "baton/lease_store.hpp"

namespace baton {

enum class redlock_errc {
  /// Fewer than a majority of masters gave a usable answer (failures of
  /// different kinds; when every master failed alike, that kind is used).
  no_quorum = 1,
  /// A majority granted or renewed, but only after the lease's validity was
  /// spent: nothing was won (an acquire is released again).
  validity_spent,
};

/// "baton.redlock": no_quorum is store_errc::no_quorum, validity_spent is
/// store_errc::timeout.
const std::error_category& redlock_category() noexcept;
std::error_code make_error_code(redlock_errc e) noexcept;

}  // namespace baton

template <>
struct std::is_error_code_enum<baton::redlock_errc> : std::true_type {};
