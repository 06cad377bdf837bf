// The last word of `baton once` (see one_term_lines.hpp).
#include "one_term_lines.hpp"

#include <spdlog/fmt/fmt.h>

#include <string>

namespace baton {

namespace {

// Who keeps the job from running here, as the last acquire heard it.
std::string holder_words(const election_machine& m, time_point now) {
  const auto& hold = m.store_held_back();
  const std::string& holder = m.observed_holder();
  if (!hold.why.empty()) {
    return fmt::format("the store holds the lease back ({}){}", hold.why,
                       holder.empty() ? std::string()
                                      : fmt::format("; {} holds a lease", holder));
  }
  if (const auto reserved = m.reserved_for(now); !reserved.empty()) {
    return fmt::format("the lease is reserved for {} by a switchover", reserved);
  }
  if (holder.empty()) return "another node holds the lease";
  if (m.token() == 0) return fmt::format("the lease is held by {}", holder);
  return fmt::format("the lease is held by {} (token {})", holder, m.token());
}

}  // namespace

std::optional<log_line> one_term_line(const election_machine& m, int code, time_point now) {
  switch (m.one_term_ending()) {
    case one_term_end::none:
      return std::nullopt;
    case one_term_end::held:
      return log_line{loudness::info,
                      fmt::format("once: not running the command: {}; exit {}",
                                  holder_words(m, now), code)};
    case one_term_end::unavailable:
      return log_line{loudness::error,
                      fmt::format("once: not running the command: the store gave no lease before "
                                  "the wait ran out (the lines above say why); exit {}",
                                  code)};
    case one_term_end::ran:
      if (m.app_blocked()) {
        return log_line{loudness::error,
                        fmt::format("once: the command could not be executed; exit {}", code)};
      }
      return log_line{loudness::info,
                      fmt::format("once: the command ran with token {} and ended with status {}; "
                                  "exit {}",
                                  m.term_token(), code, code)};
    case one_term_end::cut_short:
      return log_line{loudness::warn,
                      fmt::format("once: the command did not run to its end with token {} (the "
                                  "stop above says why); exit {}",
                                  m.term_token(), code)};
    case one_term_end::interrupted:
      return log_line{loudness::info,
                      fmt::format("once: interrupted by a signal; the command, if it ran, was "
                                  "stopped before the lease was released; exit {}",
                                  code)};
  }
  return std::nullopt;
}

}  // namespace baton
