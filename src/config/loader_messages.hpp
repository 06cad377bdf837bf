// Errors that every source of the loader (file, variables, flags) words the
// same way, so a user sees one style whichever source was wrong.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "baton/config.hpp"

namespace baton {

/// For a name that is not an option (with "did you mean ...?" for a near
/// miss), or a secret option given where secrets are not accepted.
config_error unknown_option(const std::string& name, const std::string& source);

/// The candidate nearest to `name` by edit distance when it is a near miss
/// (fewer than 3 edits), else "".
std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates);

/// `e` with where the value came from appended: "... (from --ttl)".
config_error with_source(const config_error& e, const std::string& source);

}  // namespace baton
