// Parser, overlap checker and polling helpers for test_worker's event log
// (see event_log.hpp for the format and what an interval means).

#include "support/event_log.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>
#include <thread>

namespace baton::testing {
namespace {

// Splits off the next space-separated word of `rest` (leading spaces skipped).
std::string_view next_word(std::string_view& rest) {
  const auto begin = rest.find_first_not_of(' ');
  if (begin == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(begin);
  const auto end = rest.find(' ');
  const std::string_view word = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  return word;
}

template <typename Int>
bool parse_number(std::string_view text, Int& out) {
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end && !text.empty();
}

event_kind kind_of(std::string_view word) {
  if (word == "start") return event_kind::start;
  if (word == "env") return event_kind::env;
  if (word == "tick") return event_kind::tick;
  if (word == "term") return event_kind::term;
  if (word == "stop") return event_kind::stop;
  if (word == "exit") return event_kind::exit;
  return event_kind::other;
}

// `key=value` among the words of `details`, "" if absent.
std::string field(std::string_view details, std::string_view key) {
  std::string_view rest = details;
  for (std::string_view word = next_word(rest); !word.empty(); word = next_word(rest)) {
    if (word.size() > key.size() && word.substr(0, key.size()) == key &&
        word[key.size()] == '=') {
      return std::string(word.substr(key.size() + 1));
    }
  }
  return {};
}

std::string read_small_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool same_file_name(const std::filesystem::path& a, const std::filesystem::path& b) {
  if (a == b) return true;
  std::error_code ec_a;
  std::error_code ec_b;
  const auto canon_a = std::filesystem::weakly_canonical(a, ec_a);
  const auto canon_b = std::filesystem::weakly_canonical(b, ec_b);
  return !ec_a && !ec_b && canon_a == canon_b;
}

// Is `pid` a live test_worker writing to `log_file`? Zombies have an empty
// cmdline, so they answer false too.
bool is_worker_of(pid_t pid, const std::filesystem::path& log_file) {
  return is_app_of(pid, log_file, "test_worker");
}

std::string ns_as_ms_text(std::int64_t ns) {
  std::ostringstream out;
  out << ns / 1'000'000 << '.';
  const auto frac = (ns % 1'000'000) / 1000;
  out << (frac < 100 ? "0" : "") << (frac < 10 ? "0" : "") << frac << " ms";
  return out.str();
}

}  // namespace

bool is_app_of(pid_t pid, const std::filesystem::path& log_file, std::string_view program) {
  const std::string cmdline =
      read_small_file(std::filesystem::path("/proc") / std::to_string(pid) / "cmdline");
  std::vector<std::string> argv;
  std::string_view rest = cmdline;
  while (!rest.empty()) {
    const auto end = rest.find('\0');
    argv.emplace_back(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  if (argv.empty() || std::filesystem::path(argv[0]).filename() != program) return false;
  for (std::size_t i = 1; i + 1 < argv.size(); ++i) {
    if (argv[i] == "--log") return same_file_name(argv[i + 1], log_file);
  }
  return false;
}

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  const std::string stat =
      read_small_file(std::filesystem::path("/proc") / std::to_string(pid) / "stat");
  // The state letter follows the command name, which is in parentheses and
  // may itself contain ") ".
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  const char state = stat[paren + 2];
  return state != 'Z' && state != 'X' && state != 'x';
}

event_log::event_log(std::filesystem::path file) : file_(std::move(file)) {}

event_log event_log::parse(std::string_view text) {
  event_log log;
  log.feed(text);
  if (!log.partial_.empty()) {
    const std::string last = std::move(log.partial_);
    log.partial_.clear();
    log.add_line(last);
  }
  return log;
}

event_log event_log::read(const std::filesystem::path& file) {
  event_log log(file);
  log.refresh();
  return log;
}

bool event_log::refresh() {
  if (file_.empty()) return false;
  const int fd = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::size_t before = events_.size() + bad_lines_.size();
  std::array<char, 64 * 1024> buffer{};
  for (;;) {
    const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(offset_));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    offset_ += static_cast<std::uintmax_t>(n);
    feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
  }
  ::close(fd);
  return events_.size() + bad_lines_.size() != before;
}

void event_log::feed(std::string_view text) {
  partial_.append(text);
  std::size_t begin = 0;
  for (auto newline = partial_.find('\n'); newline != std::string::npos;
       newline = partial_.find('\n', begin)) {
    add_line(std::string_view(partial_).substr(begin, newline - begin));
    begin = newline + 1;
  }
  partial_.erase(0, begin);
}

void event_log::add_line(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  std::string_view rest = line;
  const std::string_view ns_text = next_word(rest);
  const std::string_view name = next_word(rest);
  const std::string_view pid_text = next_word(rest);
  const std::string_view word = next_word(rest);
  event ev;
  if (word.empty() || !parse_number(ns_text, ev.ns) || !parse_number(pid_text, ev.pid) ||
      ev.pid <= 0) {
    bad_lines_.emplace_back(line);
    return;
  }
  ev.name = std::string(name);
  ev.kind = kind_of(word);
  ev.word = std::string(word);
  const auto details_begin = rest.find_first_not_of(' ');
  ev.details = details_begin == std::string_view::npos ? "" : std::string(rest.substr(details_begin));

  const auto key = std::make_pair(ev.name, ev.pid);
  if (ev.kind == event_kind::start) {
    interval fresh;
    fresh.name = ev.name;
    fresh.pid = ev.pid;
    fresh.start_ns = ev.ns;
    fresh.end_ns = ev.ns;
    latest_[key] = intervals_.size();
    intervals_.push_back(std::move(fresh));
    events_.push_back(std::move(ev));
    return;
  }
  const auto found = latest_.find(key);
  if (found == latest_.end()) {
    bad_lines_.emplace_back(line);
    return;
  }
  interval& current = intervals_[found->second];
  switch (ev.kind) {
    case event_kind::tick:
      ++current.ticks;
      current.end_ns = std::max(current.end_ns, ev.ns);
      break;
    case event_kind::stop:
    case event_kind::exit:
      current.ended = true;
      current.end_ns = std::max(current.end_ns, ev.ns);
      break;
    case event_kind::term:
      ++current.terms;
      if (!current.first_term_ns) current.first_term_ns = ev.ns;
      break;
    case event_kind::env:
      current.token = field(ev.details, "token");
      current.node_id = field(ev.details, "node");
      break;
    case event_kind::start:
    case event_kind::other:
      break;
  }
  events_.push_back(std::move(ev));
}

std::size_t event_log::start_count(std::string_view name) const {
  return static_cast<std::size_t>(std::count_if(
      intervals_.begin(), intervals_.end(), [&](const interval& i) { return i.name == name; }));
}

std::size_t event_log::end_count() const {
  return static_cast<std::size_t>(
      std::count_if(intervals_.begin(), intervals_.end(), [](const interval& i) { return i.ended; }));
}

std::vector<interval> event_log::open_intervals() const {
  std::vector<interval> open;
  std::copy_if(intervals_.begin(), intervals_.end(), std::back_inserter(open),
               [](const interval& i) { return !i.ended; });
  return open;
}

std::vector<interval> event_log::live_workers(const std::function<bool(pid_t)>& alive) const {
  std::vector<interval> live = open_intervals();
  std::erase_if(live, [&](const interval& i) {
    if (alive) return !alive(i.pid);
    return file_.empty() ? !process_alive(i.pid) : !is_worker_of(i.pid, file_);
  });
  return live;
}

std::optional<interval> event_log::current_worker(const std::function<bool(pid_t)>& alive) const {
  const std::vector<interval> live = live_workers(alive);
  if (live.empty()) return std::nullopt;
  return *std::max_element(live.begin(), live.end(), [](const interval& a, const interval& b) {
    return a.start_ns < b.start_ns;
  });
}

std::vector<overlap> event_log::overlaps() const { return find_overlaps(intervals_); }

std::vector<handover> event_log::handovers() const {
  std::vector<interval> sorted = intervals_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const interval& a, const interval& b) { return a.start_ns < b.start_ns; });
  std::vector<handover> result;
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    result.push_back({sorted[i - 1], sorted[i], sorted[i].start_ns - sorted[i - 1].end_ns});
  }
  return result;
}

std::optional<std::int64_t> event_log::last_ns() const {
  if (events_.empty()) return std::nullopt;
  return std::max_element(events_.begin(), events_.end(),
                          [](const event& a, const event& b) { return a.ns < b.ns; })
      ->ns;
}

std::vector<overlap> find_overlaps(const std::vector<interval>& intervals) {
  std::vector<overlap> result;
  for (std::size_t i = 0; i < intervals.size(); ++i) {
    for (std::size_t j = i + 1; j < intervals.size(); ++j) {
      const interval& a = intervals[i];
      const interval& b = intervals[j];
      if (a.pid == b.pid) continue;
      const std::int64_t from = std::max(a.start_ns, b.start_ns);
      const std::int64_t to = std::min(a.end_ns, b.end_ns);
      if (from > to) continue;
      const bool a_first = a.start_ns <= b.start_ns;
      result.push_back({a_first ? a : b, a_first ? b : a, to - from});
    }
  }
  return result;
}

std::string to_string(const interval& i) {
  std::ostringstream out;
  out << i.name << " (pid " << i.pid << ") [" << ns_as_ms_text(i.start_ns) << ", "
      << ns_as_ms_text(i.end_ns) << "] ticks=" << i.ticks << (i.ended ? " ended" : " open")
      << " token=" << i.token << " node=" << i.node_id;
  return out.str();
}

std::string to_string(const overlap& o) {
  return to_string(o.first) + " overlaps " + to_string(o.second) + " by " +
         ns_as_ms_text(o.overlap_ns);
}

std::string to_string(const std::vector<overlap>& overlaps) {
  std::string text;
  for (const overlap& o : overlaps) {
    text += to_string(o);
    text += '\n';
  }
  return text;
}

bool wait_until(const std::function<bool()>& predicate, std::chrono::milliseconds timeout,
                std::chrono::milliseconds poll) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (predicate()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(poll, deadline - now));
  }
}

bool wait_for(event_log& log, const std::function<bool(const event_log&)>& predicate,
              std::chrono::milliseconds timeout) {
  return wait_until(
      [&] {
        log.refresh();
        return predicate(log);
      },
      timeout);
}

bool wait_for(const std::filesystem::path& file,
              const std::function<bool(const event_log&)>& predicate,
              std::chrono::milliseconds timeout) {
  event_log log(file);
  return wait_for(log, predicate, timeout);
}

std::size_t kill_leftover_workers(const event_log& log) {
  if (log.file().empty()) return 0;
  std::size_t killed = 0;
  for (const interval& i : log.open_intervals()) {
    if (is_worker_of(i.pid, log.file()) && ::kill(i.pid, SIGKILL) == 0) ++killed;
  }
  return killed;
}

}  // namespace baton::testing
