// The exception a failed system call becomes in the test harness: its errno
// and what was being done.
#pragma once

#include <cerrno>
#include <string>
#include <system_error>

namespace baton::testing {

inline std::system_error errno_error(int code, const std::string& what) {
  return {code, std::generic_category(), what};
}

inline std::system_error errno_error(const std::string& what) {
  return errno_error(errno, what);
}

}  // namespace baton::testing
