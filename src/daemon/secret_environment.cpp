// See secret_environment.hpp.
#include "secret_environment.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "baton/secret_variables.hpp"

namespace baton {

namespace {

// The environment block the kernel copied at exec, which /proc/PID/environ
// shows whatever `environ` says now: fields 50 and 51 of /proc/self/stat
// (Linux 3.5 and later). Empty when they cannot be read.
std::span<char> start_up_block() {
  std::ifstream in("/proc/self/stat");
  std::string stat;
  std::getline(in, stat);
  // The command name (field 2) may hold spaces and parentheses: count from
  // the last ')'. Field 3 is the first after it.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  std::uintptr_t start = 0, end = 0;
  for (int number = 3; number <= 51 && fields >> field; ++number) {
    if (number == 50) start = std::strtoull(field.c_str(), nullptr, 10);
    if (number == 51) end = std::strtoull(field.c_str(), nullptr, 10);
  }
  if (start == 0 || end <= start) return {};
  return {reinterpret_cast<char*>(start), end - start};
}

// Zero bytes over the value, not over the name: /proc/PID/environ (for root)
// still shows which variable was there. `entry` is "NAME=value", in the
// start-up block or, for a variable set since, in the heap; both writable.
void overwrite_value(char* entry, std::size_t name_size) {
  // volatile: stores the compiler sees no later read of may be dropped.
  volatile char* value = entry + name_size + 1;
  for (std::size_t i = 0; value[i] != '\0'; ++i) value[i] = '\0';
}

class secret_scrubber {
 public:
  explicit secret_scrubber(std::span<const std::string_view> also) : also_(also) {}

  // One "NAME=value" entry: overwritten when it is a secret.
  void visit(char* entry) {
    const std::string_view text(entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) return;
    const auto name = text.substr(0, equals);
    if (!is_secret(name, text.substr(equals + 1))) return;
    if (std::find(names_.begin(), names_.end(), name) == names_.end()) names_.emplace_back(name);
    overwrite_value(entry, name.size());
  }

  const std::vector<std::string>& names() const { return names_; }

 private:
  bool is_secret(std::string_view name, std::string_view value) const {
    return is_secret_variable(name, value) ||
           std::find(also_.begin(), also_.end(), name) != also_.end() ||
           // Already judged on its value (a URL with a password), which an
           // earlier visit of the same bytes has overwritten.
           std::find(names_.begin(), names_.end(), name) != names_.end();
  }

  std::span<const std::string_view> also_;
  std::vector<std::string> names_;
};

}  // namespace

std::vector<std::string> scrub_secret_environment(std::span<const std::string_view> also) {
  secret_scrubber scrubber(also);
  // The start-up block first: a variable set again since (setenv) has its
  // new value in the heap and its old one only there.
  const auto block = start_up_block();
  for (std::size_t at = 0; at < block.size();) {
    char* entry = block.data() + at;
    const auto size = ::strnlen(entry, block.size() - at);
    if (size < block.size() - at) scrubber.visit(entry);  // NUL-terminated inside
    at += size + 1;
  }
  // Then `environ`, which may hold entries of its own (and may list one
  // variable twice; unsetenv removes every copy).
  for (char** entry = ::environ; entry != nullptr && *entry != nullptr; ++entry) {
    scrubber.visit(*entry);
  }
  for (const auto& name : scrubber.names()) ::unsetenv(name.c_str());
  return scrubber.names();
}

}  // namespace baton
