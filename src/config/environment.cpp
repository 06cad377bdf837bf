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

#include <unistd.h>

#include <vector>

#include "baton/config_load.hpp"

namespace baton {

std::vector<std::string> environment_variable_names() {
  std::vector<std::string> names;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    names.emplace_back(text.substr(0, text.find('=')));  // never the value
  }
  return names;
}

}  // namespace baton
