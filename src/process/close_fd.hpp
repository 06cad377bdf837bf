// Closing a descriptor held in a variable, and marking the variable closed,
// so a second close cannot hit a descriptor reused in the meantime.
#pragma once

#include <unistd.h>

namespace baton::process {

/// Closes `fd` if open and sets it to -1.
inline void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace baton::process
