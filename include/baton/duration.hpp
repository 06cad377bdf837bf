// Durations as people write them in config files and flags ("250ms", "10s",
// "1.5s", "2m", "1h"), and back. A bare number is refused: "10" could mean
// seconds or milliseconds, and guessing wrong by 1000x breaks a lease.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "baton/time.hpp"

namespace baton {

/// Longest duration accepted anywhere in the config: 8760h (one year).
inline constexpr milliseconds max_config_duration{8760LL * 3600 * 1000};

/// Parses `<number><unit>` where unit is ms, s, m or h and the number is
/// non-negative with optional decimals ("1.5s" = 1500ms); surrounding blanks
/// are ignored; the result is rounded to the nearest millisecond. Returns
/// nullopt on bad input and, if `why` is given, stores there what would have
/// been accepted (e.g. "add a unit: 10s, 10ms, 10m or 10h").
std::optional<milliseconds> try_parse_duration(std::string_view text, std::string* why = nullptr);

/// As try_parse_duration, but throws config_error naming `option` on bad input.
milliseconds parse_duration(const std::string& option, std::string_view text);

/// Formats for people and for config files, exactly (parse_duration of the
/// result gives `d` back): the largest whole unit among h, m, s ("10s",
/// "2m"), else milliseconds ("3333ms"); zero is "0s". Negative values get a "-".
std::string format_duration(milliseconds d);

}  // namespace baton
