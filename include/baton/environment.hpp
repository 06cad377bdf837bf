// Access to environment variables, injectable so that tests do not touch the
// real process environment.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace baton {

/// Looks up one environment variable: nullopt when it is not set (set but
/// empty gives "").
using environment = std::function<std::optional<std::string>(const std::string& name)>;

/// The real environment, read with getenv at each call.
environment process_environment();

}  // namespace baton
