// Logs go to stderr, where container runtimes and systemd collect them. The
// timestamp is the wall clock in UTC because operators correlate it with
// other hosts; durations inside messages come from the monotonic clock.
//
// Under journald the timestamp is dropped (the journal adds its own) and the
// level travels as the "<N>" prefix that journald turns into PRIORITY=.
// JSON lines are built by nlohmann::json so that any message, including
// quotes, newlines and invalid UTF-8 from child processes, stays one valid
// object per line.
#include "baton/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace baton {
namespace {

constexpr const char* text_pattern = "%Y-%m-%dT%H:%M:%S.%eZ %& %v";
// '*' is the journal priority flag below.
constexpr const char* journal_text_pattern = "%*%& %v";

// sd-daemon.h priorities (syslog's).
char journal_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical: return '2';
    case spdlog::level::err: return '3';
    case spdlog::level::warn: return '4';
    case spdlog::level::info: return '6';
    default: return '7';
  }
}

class journal_priority_flag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm& /*time*/,
              spdlog::memory_buf_t& dest) override {
    const char prefix[] = {'<', journal_priority(msg.level), '>'};
    dest.append(prefix, prefix + sizeof(prefix));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<journal_priority_flag>();
  }
};

// The level as log.level spells it (spdlog's own names say "warning" for
// what the option calls warn).
std::string_view level_name(spdlog::level::level_enum level) {
  if (level == spdlog::level::warn) return "warn";
  const auto name = spdlog::level::to_string_view(level);
  return {name.data(), name.size()};
}

class level_name_flag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm& /*time*/,
              spdlog::memory_buf_t& dest) override {
    const auto name = level_name(msg.level);
    dest.append(name.data(), name.data() + name.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<level_name_flag>();
  }
};

// 2026-01-02T03:04:05.678Z, the same clock and shape as the text format.
std::string utc_timestamp(spdlog::log_clock::time_point time) {
  const auto since_epoch = time.time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds).count();
  const std::time_t whole = static_cast<std::time_t>(seconds.count());
  std::tm utc{};
  ::gmtime_r(&whole, &utc);
  char buffer[40];
  const std::size_t length = std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &utc);
  std::string stamp(buffer, length);
  const auto ms = static_cast<unsigned>(millis);
  stamp += '.';
  stamp += static_cast<char>('0' + ms / 100);
  stamp += static_cast<char>('0' + ms / 10 % 10);
  stamp += static_cast<char>('0' + ms % 10);
  stamp += 'Z';
  return stamp;
}

// One daemon, one thread: the context the driver last set.
log_context& current_context() {
  static log_context context;
  return context;
}

class json_formatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto level = level_name(msg.level);
    nlohmann::ordered_json record;
    record["time"] = utc_timestamp(msg.time);
    record["level"] = std::string(level.data(), level.size());
    record["message"] = std::string(msg.payload.data(), msg.payload.size());
    const auto& context = current_context();
    if (!context.election.empty()) {
      record["election"] = context.election;
      record["node_id"] = context.node_id;
      record["state"] = context.state;
      record["token"] = context.token;
    }
    // replace: a log line must never throw over bytes that are not UTF-8.
    const std::string line =
        record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(line.data(), line.data() + line.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<json_formatter>();
  }
};

std::unique_ptr<spdlog::formatter> make_formatter(log_format format, bool journal) {
  if (format == log_format::json) return std::make_unique<json_formatter>();
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  if (journal) {
    formatter->add_flag<journal_priority_flag>('*');
    formatter->add_flag<level_name_flag>('&').set_pattern(journal_text_pattern);
  } else {
    formatter->add_flag<level_name_flag>('&').set_pattern(text_pattern);
  }
  return formatter;
}

spdlog::level::level_enum parse_level(const std::string& level) {
  const auto parsed = spdlog::level::from_str(level);
  // from_str answers "off" for anything it does not know.
  if (parsed == spdlog::level::off && level != "off") {
    throw std::invalid_argument("log.level: \"" + level +
                                "\" is not allowed: trace, debug, info, warn, error, critical "
                                "or off");
  }
  return parsed;
}

// A decimal unsigned number filling all of `text`.
bool parse_whole(std::string_view text, std::uintmax_t& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  return !text.empty() && error == std::errc() && stop == end;
}

}  // namespace

bool stderr_is_journal(const environment& env) {
  const auto stream = env("JOURNAL_STREAM");
  if (!stream) {
    return false;
  }
  const std::string_view value = *stream;
  const auto colon = value.find(':');
  std::uintmax_t device = 0;
  std::uintmax_t inode = 0;
  if (colon == std::string_view::npos || !parse_whole(value.substr(0, colon), device) ||
      !parse_whole(value.substr(colon + 1), inode)) {
    return false;
  }
  struct stat status {};
  if (::fstat(STDERR_FILENO, &status) != 0) {
    return false;
  }
  return static_cast<std::uintmax_t>(status.st_dev) == device &&
         static_cast<std::uintmax_t>(status.st_ino) == inode;
}

void setup_logging(const log_config& cfg, const environment& env) {
  auto formatter = make_formatter(cfg.format, stderr_is_journal(env));
  const auto level = parse_level(cfg.level);
  // The _mt sink: a record is written whole even if a helper thread logs.
  auto logger =
      std::make_shared<spdlog::logger>("baton", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_formatter(std::move(formatter));
  logger->set_level(level);
  logger->flush_on(spdlog::level::trace);
  // Replaces any earlier default (registering the same name twice would throw).
  spdlog::set_default_logger(std::move(logger));
}

void set_log_context(log_context context) { current_context() = std::move(context); }

void set_log_level(const std::string& level) { spdlog::default_logger()->set_level(parse_level(level)); }

}  // namespace baton
