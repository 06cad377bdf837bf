// See secret_variables.hpp. The option table is the only list consulted, so
// a variable is secret exactly when its option says so.
#include "baton/secret_variables.hpp"

#include "option_table.hpp"

namespace baton {

bool is_secret_variable(std::string_view name, std::string_view value) {
  if (name.empty()) return false;
  for (const auto& spec : option_table()) {
    if (spec.env == name) return spec.value_is_secret(value);
  }
  return false;
}

std::vector<std::string> secret_variables_in(char* const* entries) {
  std::vector<std::string> names;
  for (auto entry = entries; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    if (is_secret_variable(text.substr(0, equals), text.substr(equals + 1))) {
      names.emplace_back(text.substr(0, equals));
    }
  }
  return names;
}

}  // namespace baton
