// Which BATON_* variables hold a secret, by one rule read off the option
// table: every option marked secret (passwords), and every option that names
// servers by URL when its value carries credentials. The rule knows no store
// kind, so a secret option a new kind declares is covered by declaring it.
// Hooks and the supervised child never see such a variable, whatever
// store.kind is in use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace baton {

/// True when the variable `name`, holding `value`, must not be handed on:
/// a secret option's variable (set at all), or a URL option's variable whose
/// value carries a user-info part or a password keyword.
bool is_secret_variable(std::string_view name, std::string_view value);

/// The names of the `entries` ("NAME=value", null-terminated,
/// as `environ`) for which is_secret_variable holds.
std::vector<std::string> secret_variables_in(char* const* entries);

}  // namespace baton
