// Errors that every source of the loader (file, variables, flags) words the
// same way, so a user sees one style whichever source was wrong.
#pragma once

#include <string>

#include "baton/config.hpp"

namespace baton {

/// For a name that is not an option (with "did you mean ...?" for a near
/// miss), or a secret option given where secrets are not accepted.
config_error unknown_option(const std::string& name, const std::string& source);

/// `e` with where the value came from appended: "... (from --ttl)".
config_error with_source(const config_error& e, const std::string& source);

}  // namespace baton
