// config_error: one line that names the option, shows what was given, and
// says what would have been accepted. Values come from users and files, so
// they are escaped and shortened to keep the message on one readable line.
#include <cstdio>
#include <string>

#include "baton/config.hpp"

namespace baton {
namespace {

constexpr std::size_t max_shown_value = 120;

// Control characters would split the line or garble a terminal.
std::string one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(u));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string shown_value(const std::string& value) {
  if (value.empty()) return "\"\"";
  std::string v = value;
  if (v.size() > max_shown_value) v = v.substr(0, max_shown_value) + "...";
  return one_line(v);
}

}  // namespace

config_error::config_error(const std::string& option, const std::string& value,
                           const std::string& allowed)
    : std::runtime_error(one_line(option) + ": " + shown_value(value) +
                         " is not allowed: " + one_line(allowed)),
      option_(option) {}

config_error::config_error(const std::string& option, const std::string& message, whole_message)
    : std::runtime_error(one_line(message)), option_(option) {}

config_error config_error::with_message(const std::string& option, const std::string& message) {
  return config_error(option, message, whole_message{});
}

}  // namespace baton
