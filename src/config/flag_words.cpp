// See flag_words.hpp. The option table is the one list of flags, so a new
// option is joined and suggested without touching this file.
#include "flag_words.hpp"

#include <algorithm>
#include <cctype>

#include "loader_messages.hpp"
#include "option_table.hpp"
#include "config_schema/option_value.hpp"

namespace baton {
namespace {

// A secret has no flag: argv is visible to every user of the host.
bool has_flag(const option_spec& spec) { return !spec.flag.empty() && !spec.secret; }

// Each spelling of the option's flag: "-t,--ttl" -> "-t", "--ttl".
std::vector<std::string> spellings(const option_spec& spec) {
  std::vector<std::string> out;
  std::string_view names = spec.flag;
  while (!names.empty()) {
    const auto comma = names.find(',');
    out.emplace_back(names.substr(0, comma));
    names = comma == std::string_view::npos ? std::string_view{} : names.substr(comma + 1);
  }
  return out;
}

// "--Lease.TTL=3s" and "lease.ttl" both -> "lease-ttl": how a YAML name is
// typed as a flag, whichever separators and case were used.
std::string flag_shape(std::string_view text) {
  text = text.substr(0, text.find('='));
  while (text.starts_with('-')) text.remove_prefix(1);
  std::string out;
  for (char c : text) {
    const auto lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += (lower == '.' || lower == '_') ? '-' : lower;
  }
  return out;
}

// Only printable ASCII of what was typed reaches the message.
std::string printable(std::string_view text) {
  std::string out(text.substr(0, text.find('=')));
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

}  // namespace

std::vector<std::string> join_boolean_flag_values(std::vector<std::string> args) {
  const auto is_boolean_flag = [](const std::string& word) {
    for (const auto& spec : option_table()) {
      if (!has_flag(spec) || spec.kind() != value_kind::boolean) continue;
      for (const auto& spelling : spellings(spec)) {
        if (word == spelling) return true;
      }
    }
    return false;
  };
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (is_boolean_flag(args[i]) && parse_boolean_word(args[i + 1])) {
      args[i] += "=" + args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
  }
  return args;
}

std::optional<std::string> first_unknown_flag(const std::vector<std::string>& args,
                                              const std::vector<std::string>& others) {
  for (const auto& word : args) {
    if (word.size() < 3 || !word.starts_with("--")) continue;
    const std::string name = word.substr(0, word.find('='));
    bool known = std::find(others.begin(), others.end(), name) != others.end();
    for (const auto& spec : option_table()) {
      if (!has_flag(spec)) continue;
      for (const auto& spelling : spellings(spec)) known = known || spelling == name;
    }
    if (!known) return word;
  }
  return std::nullopt;
}

std::string unknown_flag_message(std::string_view word, const std::vector<std::string>& others) {
  const std::string shape = flag_shape(word);
  std::string message = "unknown flag " + printable(word);
  // A YAML name typed as a flag: its option's flag, whatever the distance.
  for (const auto& spec : option_table()) {
    if (has_flag(spec) && flag_shape(spec.key) == shape) {
      return message + " (did you mean " + std::string(spec.flag_name()) + ", the flag of " +
             std::string(spec.key) + "?)";
    }
  }
  // Else the nearest spelling: a flag, or a YAML name standing for its flag.
  std::vector<std::string> candidates;
  std::vector<std::string> meant;
  for (const auto& other : others) {
    candidates.push_back(flag_shape(other));
    meant.push_back(other);
  }
  for (const auto& spec : option_table()) {
    if (!has_flag(spec)) continue;
    for (const auto& spelling : spellings(spec)) {
      candidates.push_back(flag_shape(spelling));
      meant.emplace_back(spec.flag_name());
    }
    candidates.push_back(flag_shape(spec.key));
    meant.emplace_back(spec.flag_name());
  }
  const std::string best = nearest_name(shape, candidates);
  if (best.empty()) return message;
  const auto at = std::find(candidates.begin(), candidates.end(), best) - candidates.begin();
  return message + " (did you mean " + meant[static_cast<std::size_t>(at)] + "?)";
}

}  // namespace baton
