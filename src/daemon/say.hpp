// Writes narration's lines (narration.hpp) to the log: the one place where a
// line's loudness meets the logger's levels.
#pragma once

#include <spdlog/spdlog.h>

#include "narration.hpp"

namespace baton {

inline spdlog::level::level_enum level_of(loudness l) {
  switch (l) {
    case loudness::debug:
      return spdlog::level::debug;
    case loudness::info:
      return spdlog::level::info;
    case loudness::warn:
      return spdlog::level::warn;
    case loudness::error:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

inline void say(const log_line& line) {
  spdlog::log(level_of(line.level), "{}", line.text);
}

}  // namespace baton
