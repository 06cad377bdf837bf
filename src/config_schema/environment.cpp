// The real process environment behind the injectable `environment`.
#include <cstdlib>

#include "baton/environment.hpp"

namespace baton {

environment process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    // Read at each call rather than snapshotting, so a test or a wrapper that
    // sets a variable before parsing is honoured.
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

}  // namespace baton
