// Unknown options are errors (a typo silently ignored would leave a default
// in force); the message suggests the nearest real option so the typo is
// quick to fix. Secrets are never suggested: a suggestion to write one in a
// file would be refused in turn.
#include "loader_messages.hpp"

#include <algorithm>
#include <set>
#include <string_view>
#include <vector>

#include "option_table.hpp"

namespace baton {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 3;  // suggest only near misses
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

config_error unknown_option(const std::string& name, const std::string& source) {
  if (const option_spec* spec = find_option(name); spec != nullptr && spec->secret) {
    return config_error::with_message(
        name, name + " is not accepted in a config file; " + std::string(spec->help) + " (in " +
                  source + ")");
  }
  std::set<std::string> candidates;
  for (const auto& spec : option_table()) {
    if (spec.secret) continue;
    candidates.emplace(spec.key);
    if (!spec.section().empty()) candidates.emplace(spec.section());
  }
  const std::string best = nearest_name(name, {candidates.begin(), candidates.end()});
  std::string message = "unknown option " + name;
  if (!best.empty()) message += " (did you mean " + best + "?)";
  return config_error::with_message(name, message + " in " + source);
}

config_error with_source(const config_error& e, const std::string& source) {
  return config_error::with_message(e.option(), std::string(e.what()) + " (from " + source + ")");
}

}  // namespace baton
