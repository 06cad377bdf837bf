// Text built and written without allocation, locks or stdio: what the
// keeper's forked command process may call between fork and exec (and the
// keeper itself, which is single-threaded). Every function here is
// async-signal-safe. Private to src/process/.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <system_error>

namespace baton::process {

// Writes all of `data` to `fd`; false if it could not. Async-signal-safe.
inline bool write_all(int fd, const void* data, std::size_t size) {
  const char* next = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, next, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    next += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Appends `text` to the line being built in `line` (of `capacity` bytes),
// cutting it short rather than overflowing. Async-signal-safe.
inline void append(char* line, std::size_t capacity, std::size_t& used, const char* text) {
  for (; *text != '\0' && used < capacity; ++text) line[used++] = *text;
}

// Appends `value` in decimal (async-signal-safe, as append).
inline void append_number(char* line, std::size_t capacity, std::size_t& used, std::int64_t value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits - 1, value);
  *end = '\0';
  append(line, capacity, used, ec == std::errc{} ? digits : "?");
}

// "NAME=value" into `buffer` (of `capacity` bytes), cut short rather than
// overflowing. Async-signal-safe.
inline char* environment_entry(char* buffer, std::size_t capacity, const char* name, const char* value) {
  std::size_t used = 0;
  append(buffer, capacity - 1, used, name);
  append(buffer, capacity - 1, used, "=");
  append(buffer, capacity - 1, used, value);
  buffer[used] = '\0';
  return buffer;
}

}  // namespace baton::process
