// The environment hooks and the supervised child run with: the daemon's own
// environment, minus every store's secrets (secret_variables.hpp), plus BATON_* variables describing the term.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "baton/app_controller.hpp"

namespace baton::process {

/// "NAME=value" entries: the current environment without secrets and without
/// stale BATON_* term variables, plus BATON_EVENT (`event`: start or stop),
/// BATON_NODE_ID, BATON_ELECTION, BATON_REASON, BATON_LEASE_TTL_MS and
/// BATON_TOKEN from `context`.
std::vector<std::string> app_environment(const app_context& context, std::string_view event);

}  // namespace baton::process
