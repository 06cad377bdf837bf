// Parsing and showing option values by kind. Parsing is strict (a bare number
// is not a duration, "0680" is not a mode) because a value misread by a factor
// of 1000 or 8 breaks a lease or a permission silently. Showing writes JSON
// strings, which are valid YAML double-quoted scalars, so any value (spaces,
// colons, '#') loads back as it was.
#include "option_value.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "baton/option_text.hpp"
#include "baton/duration.hpp"
#include "text_chars.hpp"

namespace baton {
namespace {

using text::trim;

std::optional<double> parse_number(std::string_view text) {
  text = trim(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// Always octal, with or without a leading 0 or 0o: "0660", "660", "0o660".
std::optional<unsigned> parse_mode(std::string_view text) {
  text = trim(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'o' || text[1] == 'O')) text.remove_prefix(2);
  if (text.empty() || text.size() > 6) return std::nullopt;
  unsigned value = 0;
  for (char c : text) {
    if (c < '0' || c > '7') return std::nullopt;
    value = value * 8 + static_cast<unsigned>(c - '0');
  }
  return value;
}

std::optional<bool> parse_switch(std::string_view text) {
  text = trim(text);
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "true" || lower == "yes" || lower == "on" || lower == "1") return true;
  if (lower == "false" || lower == "no" || lower == "off" || lower == "0") return false;
  return std::nullopt;
}

// uid_t is 32 bits and (uid_t)-1 means "no uid", so the largest real uid is
// 2^32 - 2.
constexpr unsigned long long max_uid = 4294967294ULL;

// Decimal uids separated by commas and/or blanks; "" is the empty list.
std::optional<std::vector<unsigned>> parse_uid_list(std::string_view text) {
  std::vector<unsigned> uids;
  std::size_t i = 0;
  const auto separator = [](char c) {
    return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
  };
  while (i < text.size()) {
    while (i < text.size() && separator(text[i])) ++i;
    const std::size_t begin = i;
    while (i < text.size() && !separator(text[i])) ++i;
    if (i == begin) break;
    const std::string_view word = text.substr(begin, i - begin);
    unsigned long long value = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (ec != std::errc{} || end != word.data() + word.size() || value > max_uid) {
      return std::nullopt;
    }
    uids.push_back(static_cast<unsigned>(value));
  }
  return uids;
}

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string number_text(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string octal(unsigned mode) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + (mode & 7u)));
    mode >>= 3;
  } while (mode != 0);
  return "\"0" + digits + "\"";
}

struct text_parser {
  const option_spec& spec;
  config& cfg;
  const std::string& text;

  std::string key() const { return std::string(spec.key); }

  void operator()(text_field f) const { f.get(cfg) = text; }
  void operator()(secret_text_field f) const { f.get(cfg) = text; }
  void operator()(duration_field f) const {
    // 0 needs no unit where it means "derived" (renew_interval: 0).
    if (spec.zero_derives && trim(text) == "0") {
      f.get(cfg) = milliseconds{0};
      return;
    }
    std::string why;
    const auto d = try_parse_duration(text, &why);
    if (!d) throw config_error(key(), text, why);
    f.get(cfg) = *d;
  }
  void operator()(number_field f) const {
    const auto n = parse_number(text);
    if (!n) throw config_error(key(), text, expected_yaml_shape(spec));
    f.get(cfg) = *n;
  }
  // Read as a number first, so that "1e3" and "5.0" are the whole numbers
  // they spell; the bounds are the rules' (validate.cpp).
  void operator()(integer_field f) const {
    const auto n = parse_number(text);
    if (!n) throw config_error(key(), text, expected_yaml_shape(spec));
    if (*n != std::trunc(*n) || *n < std::numeric_limits<int>::min() ||
        *n > std::numeric_limits<int>::max()) {
      throw config_error(key(), number_text(*n), f.allowed());
    }
    f.get(cfg) = static_cast<int>(*n);
  }
  void operator()(argv_field f) const { f.get(cfg) = parse_argv_text(key(), text); }
  // Words as for argv, and a word may hold several URLs separated by commas.
  void operator()(url_list_field f) const { f.get(cfg) = url_list(parse_argv_text(key(), text)); }
  void operator()(file_mode_field f) const {
    const auto m = parse_mode(text);
    if (!m) throw config_error(key(), text, "must be an octal file mode such as 0660");
    f.get(cfg) = *m;
  }
  void operator()(boolean_field f) const {
    const auto b = parse_switch(text);
    if (!b) throw config_error(key(), text, "must be true or false");
    f.get(cfg) = *b;
  }
  void operator()(uid_list_field f) const {
    const auto uids = parse_uid_list(text);
    if (!uids) {
      throw config_error(key(), text, "must be numeric uids from 0 to 4294967294, separated by commas");
    }
    f.get(cfg) = *uids;
  }
  // Exactly as written (no trimming): the row's words.
  void operator()(word_field f) const {
    if (!f.read(cfg, text)) throw config_error(key(), text, std::string(f.allowed));
  }
  void operator()(log_format_field f) const {
    const auto format = parse_log_format(text);
    if (!format) throw config_error(key(), text, "must be text or json");
    f.get(cfg) = *format;
  }
  void operator()(exit_policy_field f) const {
    const std::string_view t = trim(text);
    if (t == "compete") {
      f.get(cfg) = child_exit_policy::compete;
    } else if (t == "exit") {
      f.get(cfg) = child_exit_policy::exit;
    } else {
      throw config_error(key(), text,
                         "must be compete (release the lease and compete again) or exit "
                         "(release and exit with the command's status)");
    }
  }
};

struct shower {
  config& cfg;

  std::string operator()(text_field f) const { return json_string(f.get(cfg)); }
  std::string operator()(secret_text_field f) const { return json_string(f.redacted(f.get(cfg))); }
  std::string operator()(duration_field f) const { return format_duration(f.get(cfg)); }
  std::string operator()(number_field f) const { return number_text(f.get(cfg)); }
  std::string operator()(integer_field f) const { return std::to_string(f.get(cfg)); }
  std::string operator()(argv_field f) const {
    return nlohmann::json(f.get(cfg)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string operator()(url_list_field f) const {
    return nlohmann::json(f.get(cfg)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string operator()(file_mode_field f) const { return octal(f.get(cfg)); }
  std::string operator()(exit_policy_field f) const {
    return f.get(cfg) == child_exit_policy::exit ? "exit" : "compete";
  }
  std::string operator()(boolean_field f) const { return f.get(cfg) ? "true" : "false"; }
  std::string operator()(uid_list_field f) const { return nlohmann::json(f.get(cfg)).dump(); }
  // Quoted as the text options are: words read back as strings.
  std::string operator()(word_field f) const { return json_string(f.spelled(cfg)); }
  std::string operator()(log_format_field f) const { return json_string(to_string(f.get(cfg))); }
};

}  // namespace

namespace {

using text::is_blank;

// POSIX shell word splitting without expansions: '...' is literal, "..."
// takes backslash escapes of " \ $ ` only (others stay as typed), a
// backslash outside quotes escapes any character. Quotes may form part of a
// word (--msg='a b' is one word) and '' is an empty word.
std::vector<std::string> split_words(const std::string& option, const std::string& text,
                                     std::string_view t) {
  const auto fail = [&](const char* why) {
    return config_error(option, text,
                        std::string(why) + "; write words as a shell would (quotes and backslashes, "
                                           "no variables) or a JSON array of strings such as "
                                           "[\"/usr/local/bin/notify\", \"hello world\"]");
  };
  std::vector<std::string> argv;
  std::size_t i = 0;
  while (i < t.size()) {
    while (i < t.size() && is_blank(t[i])) ++i;
    if (i >= t.size()) break;
    std::string word;
    while (i < t.size() && !is_blank(t[i])) {
      const char c = t[i];
      if (c == '\'') {
        const auto close = t.find('\'', i + 1);
        if (close == std::string_view::npos) throw fail("a single quote is not closed");
        word.append(t.substr(i + 1, close - i - 1));
        i = close + 1;
      } else if (c == '"') {
        ++i;
        bool closed = false;
        while (i < t.size()) {
          if (t[i] == '"') {
            closed = true;
            ++i;
            break;
          }
          if (t[i] == '\\' && i + 1 < t.size() &&
              (t[i + 1] == '"' || t[i + 1] == '\\' || t[i + 1] == '$' || t[i + 1] == '`')) {
            word += t[i + 1];
            i += 2;
            continue;
          }
          word += t[i++];
        }
        if (!closed) throw fail("a double quote is not closed");
      } else if (c == '\\') {
        if (i + 1 >= t.size()) throw fail("a backslash ends the text");
        word += t[i + 1];
        i += 2;
      } else {
        word += c;
        ++i;
      }
    }
    argv.push_back(std::move(word));
  }
  return argv;
}

}  // namespace

std::vector<std::string> parse_argv_text(const std::string& option, const std::string& text) {
  const std::string_view t = trim(text);
  std::vector<std::string> argv;
  if (!t.empty() && t.front() == '[') {
    const auto json = nlohmann::json::parse(t, nullptr, /*allow_exceptions=*/false);
    const char* expected = "a JSON array of strings such as [\"/usr/local/bin/promote\", \"--fast\"], "
                           "or words separated by spaces";
    if (json.is_discarded() || !json.is_array()) {
      throw config_error(option, text, expected);
    }
    for (const auto& element : json) {
      if (!element.is_string()) throw config_error(option, text, expected);
      argv.push_back(element.get<std::string>());
    }
    return argv;
  }
  return split_words(option, text, t);
}

std::optional<bool> parse_boolean_word(std::string_view text) { return parse_switch(text); }

void parse_option_text(const option_spec& spec, config& cfg, const std::string& text) {
  std::visit(text_parser{spec, cfg, text}, spec.field);
}

const char* expected_yaml_shape(const option_spec& spec) {
  switch (spec.kind()) {
    case value_kind::text:
    case value_kind::secret_text:
    case value_kind::word:
    case value_kind::log_format:
      return "must be a single string";
    case value_kind::duration:
      return "must be a duration with a unit, such as 250ms, 10s, 1.5s, 2m or 1h";
    case value_kind::number:
    case value_kind::integer:  // worded as for number, as it was when priority was one
      return "must be a number such as 0.01";
    case value_kind::url_list:
      return "must be a list of addresses, such as [\"host1:2181\", \"host2:2181\"], or one string "
             "of them separated by commas";
    case value_kind::argv:
      return "must be a list of strings (program and arguments, no shell), such as "
             "[\"/usr/local/bin/promote\", \"--fast\"]";
    case value_kind::file_mode:
      return "must be an octal file mode such as \"0660\"";
    case value_kind::exit_policy:
      return "must be compete or exit";
    case value_kind::boolean:
      return "must be true or false";
    case value_kind::uid_list:
      return "must be a list of numeric uids such as [0, 1000] (or \"0,1000\")";
  }
  return "has the wrong type";
}

std::string shown_option_value(const option_spec& spec, const config& cfg) {
  if (spec.secret) return "\"***\"";  // callers skip secrets; this is the backstop
  // The accessors only form a reference; nothing is written through it.
  return std::visit(shower{const_cast<config&>(cfg)}, spec.field);
}

bool option_is_empty(const option_spec& spec, const config& cfg) {
  return std::visit(
      [&](const auto& f) {
        if constexpr (requires { f.get(const_cast<config&>(cfg)).empty(); }) {
          return f.get(const_cast<config&>(cfg)).empty();
        } else {
          return false;  // a number, a word, ...: never empty
        }
      },
      spec.field);
}

void copy_option_value(const option_spec& spec, const config& from, config& to) {
  std::visit(
      [&](const auto& f) {
        if constexpr (std::is_same_v<std::decay_t<decltype(f)>, word_field>) {
          f.copy(from, to);
        } else {
          f.get(to) = f.get(const_cast<config&>(from));
        }
      },
      spec.field);
}

const char* to_string(log_format f) { return f == log_format::json ? "json" : "text"; }

std::optional<log_format> parse_log_format(std::string_view text) {
  if (text == "text") return log_format::text;
  if (text == "json") return log_format::json;
  return std::nullopt;
}

const char* to_string(failsafe_mode m) { return m == failsafe_mode::peers ? "peers" : "off"; }

std::optional<failsafe_mode> parse_failsafe_mode(std::string_view text) {
  if (text == "off") return failsafe_mode::off;
  if (text == "peers") return failsafe_mode::peers;
  return std::nullopt;
}

}  // namespace baton
