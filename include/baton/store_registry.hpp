// The registry of store kinds: every kind this build knows, one line each
// (src/store_kinds/registry.cpp). It stands above the kinds it lists; what
// asks every kind (the option table, validation, the daemon's store,
// `check-store`) asks it, and no kind does.
#pragma once

#include <span>
#include <string_view>

#include "baton/config.hpp"
#include "baton/store_kind.hpp"

namespace baton {

/// Every kind this build knows, in the order messages list them.
std::span<const store_kind* const> store_kinds();

/// The kind a config uses when nothing names one (store.kind's default):
/// the first listed.
const store_kind& default_store_kind();

/// The kind named `name`, or nullptr.
const store_kind* find_store_kind(std::string_view name);

/// The kind cfg.store.kind names. Throws config_error naming store.kind,
/// its value and the kinds this build knows when there is none.
const store_kind& store_kind_of(const config& cfg);

}  // namespace baton
