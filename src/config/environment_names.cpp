// The names (never the values) of this process's environment, for the
// loader's warnings about unknown BATON_* variables.
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
