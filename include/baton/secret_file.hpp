// A secret kept in a file (a password, a token): its first line. Read at
// start-up by the config loader to check it, and again by the stores on every
// connection attempt, so that a secret rotated in place (managed services
// rotate them, some tokens live an hour) is used from the next reconnect on.
#pragma once

#include <stdexcept>
#include <string>

namespace baton {

/// The first line of the file at `path`, without its line ending. Throws
/// std::runtime_error saying why not ("cannot open it: Permission denied",
/// "its first line is empty"), never showing the file's contents.
std::string read_secret_file(const std::string& path);

}  // namespace baton
