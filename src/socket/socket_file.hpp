// The socket file on disk: claiming the path (replacing a stale socket left by
// a crashed daemon, refusing a live one or anything that is not a socket),
// binding with the configured mode and no window where it is wider, and on
// close removing the file only if it is still the one we created.
#pragma once

#include <sys/types.h>

#include <string>
#include <system_error>

namespace baton::socket_detail {

/// Identifies the file bind() created, so close() never removes a successor's.
struct file_identity {
  dev_t dev = 0;
  ino_t ino = 0;
  bool valid = false;
};

/// A listening, non-blocking, close-on-exec Unix socket bound at `path` with
/// file mode `mode`. Returns the descriptor, or -1 with `ec` set and `message`
/// naming the path.
int listen_at(const std::string& path, unsigned mode, file_identity& identity,
              std::error_code& ec, std::string& message);

/// Unlink `path` if it is still the socket described by `identity`.
void remove_if_ours(const std::string& path, const file_identity& identity);

}  // namespace baton::socket_detail
