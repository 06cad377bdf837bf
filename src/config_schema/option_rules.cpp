// Rule helpers shared by the generic rules and the store kinds' rules.
#include "option_rules.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "baton/duration.hpp"

namespace baton {
namespace {

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_utf8(std::string_view text) {
  static constexpr std::uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
  for (std::size_t i = 0; i < text.size();) {
    auto lead = static_cast<unsigned char>(text[i]);
    std::size_t extra = 0;
    std::uint32_t code = lead;
    if (lead >= 0x80) {
      if ((lead & 0xE0) == 0xC0) {
        extra = 1;
        code = lead & 0x1Fu;
      } else if ((lead & 0xF0) == 0xE0) {
        extra = 2;
        code = lead & 0x0Fu;
      } else if ((lead & 0xF8) == 0xF0) {
        extra = 3;
        code = lead & 0x07u;
      } else {
        return false;
      }
    }
    if (text.size() - i <= extra) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3Fu);
    }
    if (code < smallest[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

}  // namespace

void require_positive(std::string_view option, const milliseconds& value) {
  if (value.count() <= 0) {
    throw config_error(std::string(option), format_duration(value), "must be greater than 0");
  }
}

// Options are written back by describe_config as YAML, which holds only
// UTF-8: any other byte would come back as U+FFFD, a different value.
// A string option, or every word of an argv option.
void require_utf8(std::string_view option, const std::string& value) {
  if (!is_utf8(value)) throw config_error(std::string(option), value, "must be valid UTF-8");
}
void require_utf8(std::string_view option, const std::vector<std::string>& argv) {
  for (const auto& word : argv) {
    if (!is_utf8(word)) throw config_error(std::string(option), word, "must be valid UTF-8");
  }
}

void require_readable(std::string_view option, const std::string& path, bool directory) {
  if (path.empty()) return;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    throw config_error(std::string(option), path, "the path does not exist");
  }
  if (directory != std::filesystem::is_directory(status)) {
    throw config_error(std::string(option), path,
                       directory ? "must be a directory" : "must be a file, not a directory");
  }
  if (::access(path.c_str(), R_OK) != 0) {
    throw config_error(std::string(option), path,
                       std::string("cannot read it: ") + std::strerror(errno));
  }
}

void require_one_word(std::string_view option, const std::string& value) {
  for (char c : value) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      throw config_error(std::string(option), value, "must hold no spaces or control characters");
    }
  }
}

}  // namespace baton
