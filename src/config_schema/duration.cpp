// Duration text <-> milliseconds. The arithmetic is exact decimal (no
// floating point), so "0.3s" is 300ms and not 299ms.
#include <cstdint>
#include <string>

#include "baton/config.hpp"
#include "baton/duration.hpp"
#include "text_chars.hpp"

namespace baton {
namespace {

using text::is_digit;
using text::trim;

constexpr const char* examples = "a duration with a unit, such as 250ms, 10s, 1.5s, 2m or 1h";

}  // namespace

std::optional<milliseconds> try_parse_duration(std::string_view text, std::string* why) {
  auto fail = [why](std::string reason) -> std::optional<milliseconds> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  const std::string_view s = trim(text);
  if (s.empty()) return fail(examples);
  if (s.front() == '-') return fail(std::string("must not be negative; expected ") + examples);
  if (s.front() == '+') return fail(examples);

  std::size_t i = 0;
  const std::size_t int_begin = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  const std::string_view int_digits = s.substr(int_begin, i - int_begin);
  std::string_view frac_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const std::size_t frac_begin = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    frac_digits = s.substr(frac_begin, i - frac_begin);
    if (frac_digits.empty()) return fail(examples);
  }
  if (int_digits.empty()) return fail(examples);

  const std::string_view unit = s.substr(i);
  if (unit.empty()) {
    const std::string n(s);
    return fail("a bare number is ambiguous; add a unit: " + n + "s, " + n + "ms, " + n + "m or " +
                n + "h");
  }
  std::int64_t unit_ms = 0;
  if (unit == "ms") {
    unit_ms = 1;
  } else if (unit == "s") {
    unit_ms = 1000;
  } else if (unit == "m") {
    unit_ms = 60 * 1000;
  } else if (unit == "h") {
    unit_ms = 3600 * 1000;
  } else {
    return fail("unknown unit \"" + std::string(unit) + "\"; units are ms, s, m and h (e.g. 10s)");
  }

  // Leading zeros aside, more than 12 integer digits exceeds the cap in any
  // unit; checking first keeps the multiplication below from overflowing.
  std::string_view significant = int_digits;
  while (significant.size() > 1 && significant.front() == '0') significant.remove_prefix(1);
  const std::string too_large = "must be at most " + format_duration(max_config_duration);
  if (significant.size() > 12) return fail(too_large);
  std::int64_t whole = 0;
  for (char c : significant) whole = whole * 10 + (c - '0');

  // Digits past the ninth cannot change the rounded millisecond count by
  // more than the rounding itself, even in hours.
  std::int64_t frac = 0;
  std::int64_t scale = 1;
  for (std::size_t k = 0; k < frac_digits.size() && k < 9; ++k) {
    frac = frac * 10 + (frac_digits[k] - '0');
    scale *= 10;
  }
  const std::int64_t total = whole * unit_ms + (frac * unit_ms + scale / 2) / scale;
  if (total > max_config_duration.count()) return fail(too_large);
  return milliseconds{total};
}

milliseconds parse_duration(const std::string& option, std::string_view text) {
  std::string why;
  if (auto d = try_parse_duration(text, &why)) return *d;
  throw config_error(option, std::string(text), why);
}

std::string format_duration(milliseconds d) {
  std::int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string sign;
  if (ms < 0) {
    sign = "-";
    // Negating the most negative value overflows; nothing in a config gets
    // near it, so show it in ms via unsigned arithmetic.
    if (ms == INT64_MIN) return "-" + std::to_string(static_cast<std::uint64_t>(INT64_MAX) + 1) + "ms";
    ms = -ms;
  }
  if (ms % (3600 * 1000) == 0) return sign + std::to_string(ms / (3600 * 1000)) + "h";
  if (ms % (60 * 1000) == 0) return sign + std::to_string(ms / (60 * 1000)) + "m";
  if (ms % 1000 == 0) return sign + std::to_string(ms / 1000) + "s";
  return sign + std::to_string(ms) + "ms";
}

}  // namespace baton
