// Log set-up: spdlog to stderr, one line per record, level from log.level.
#pragma once

#include <string>

namespace baton {

/// Install the default logger (stderr) at `level` (trace ... off).
void setup_logging(const std::string& level);

}  // namespace baton
