// One option's value, read and written through the table by its kind: parsed
// from text as a person typed it (the same for a variable, a flag and a YAML
// scalar, so every source accepts the same syntax and fails the same way), and
// shown as check-config prints it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "option_spec.hpp"

namespace baton {

/// Parses `text` into the option's field of `cfg`. Throws config_error naming
/// spec.key (the caller adds where the text came from).
void parse_option_text(const option_spec& spec, config& cfg, const std::string& text);

/// A boolean option's value as a person types it: true/yes/on/1 or
/// false/no/off/0, any case; nullopt for anything else.
std::optional<bool> parse_boolean_word(std::string_view text);

/// What a YAML value of the wrong shape is told ("must be a single string").
const char* expected_yaml_shape(const option_spec& spec);

/// The option's value as check-config prints it: YAML that loads back to the
/// same value (a URL is redacted). Secret options are never passed here.
std::string shown_option_value(const option_spec& spec, const config& cfg);

/// True for an empty string or list (a secret that is not set); false for
/// every kind that cannot be empty.
bool option_is_empty(const option_spec& spec, const config& cfg);

/// Copies the option's field from `from` into `to`.
void copy_option_value(const option_spec& spec, const config& from, config& to);

}  // namespace baton
