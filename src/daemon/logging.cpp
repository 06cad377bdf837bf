// Logs go to stderr, where container runtimes and systemd collect them. The
// timestamp is the wall clock in UTC because operators correlate it with
// other hosts; durations inside messages come from the monotonic clock.
#include "baton/logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace baton {

void setup_logging(const std::string& level) {
  auto logger = spdlog::stderr_logger_st("baton");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

}  // namespace baton
