#include "startup_pages.hpp"

#include <sys/mman.h>

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>

namespace baton {
// Named, not anonymous: unity builds put this file in one translation unit
// with others of the daemon component.
namespace startup_pages_detail {

std::string_view next_token(std::string_view& rest) {
  const auto begin = rest.find_first_not_of(' ');
  if (begin == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(begin);
  const auto end = rest.find(' ');
  const auto token = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  return token;
}

template <typename Number>
std::optional<Number> number(std::string_view text, int base) {
  Number value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// One mapping as smaps describes it: its header line and the fields that
// decide whether its pages are all the file's.
struct mapping {
  clean_mapping range;
  bool candidate = false;  // private, read-only, backed by a file
  std::size_t own_kb = 0;  // Anonymous + Private_Dirty + Shared_Dirty
  bool locked = false;     // VmFlags "lo": madvise would refuse it
};

// "start-end perms offset dev inode [path]"; nullopt when the line is not a
// mapping's header.
std::optional<mapping> header(std::string_view line) {
  auto rest = line;
  const auto range = next_token(rest);
  const auto dash = range.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const auto start = number<std::uintptr_t>(range.substr(0, dash), 16);
  const auto end = number<std::uintptr_t>(range.substr(dash + 1), 16);
  const auto perms = next_token(rest);
  next_token(rest);  // offset
  next_token(rest);  // device
  const auto inode = number<unsigned long>(next_token(rest), 10);
  if (!start || !end || *end <= *start || perms.size() != 4 || !inode) return std::nullopt;
  const auto path_at = rest.find_first_not_of(' ');
  const bool file_backed = *inode != 0 && path_at != std::string_view::npos && rest[path_at] == '/';
  mapping m;
  m.range.start = *start;
  m.range.end = *end;
  m.candidate = file_backed && perms[1] != 'w' && perms[3] == 'p';
  return m;
}

// "Name:   123 kB" -> 123 when the line is field `name`.
std::optional<std::size_t> field_kb(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line.substr(0, name.size()) != name || line[name.size()] != ':')
    return std::nullopt;
  auto rest = line.substr(name.size() + 1);
  const auto value = number<std::size_t>(next_token(rest), 10);
  if (!value || next_token(rest) != "kB") return std::nullopt;
  return value;
}

bool droppable(const mapping& m) {
  return m.candidate && !m.locked && m.own_kb == 0 && m.range.resident_kb > 0;
}

}  // namespace startup_pages_detail

std::vector<clean_mapping> clean_read_only_mappings(std::string_view smaps) {
  using namespace startup_pages_detail;
  std::vector<clean_mapping> out;
  std::optional<mapping> current;
  auto finish = [&] {
    if (current && droppable(*current)) out.push_back(current->range);
  };
  while (!smaps.empty()) {
    const auto newline = smaps.find('\n');
    const auto line = smaps.substr(0, newline);
    smaps.remove_prefix(newline == std::string_view::npos ? smaps.size() : newline + 1);
    if (auto next = header(line)) {
      finish();
      current = next;
      continue;
    }
    if (!current) continue;
    if (auto kb = field_kb(line, "Rss")) {
      current->range.resident_kb = *kb;
    } else if (auto own = field_kb(line, "Anonymous")) {
      current->own_kb += *own;
    } else if (auto dirty = field_kb(line, "Private_Dirty")) {
      current->own_kb += *dirty;
    } else if (auto shared_dirty = field_kb(line, "Shared_Dirty")) {
      current->own_kb += *shared_dirty;
    } else if (line.starts_with("VmFlags:")) {
      auto flags = line.substr(8);
      for (auto flag = next_token(flags); !flag.empty(); flag = next_token(flags))
        if (flag == "lo") current->locked = true;
    }
  }
  finish();
  return out;
}

given_back_pages give_back_startup_pages() {
  given_back_pages result;
  std::ifstream file("/proc/self/smaps");
  std::ostringstream text;
  if (!file || !(text << file.rdbuf())) {
    result.error = "cannot read /proc/self/smaps";
    return result;
  }
  for (const auto& m : clean_read_only_mappings(text.str())) {
    if (::madvise(reinterpret_cast<void*>(m.start), m.end - m.start, MADV_DONTNEED) != 0) {
      ++result.refused;
      continue;
    }
    ++result.mappings;
    result.resident_kb += m.resident_kb;
  }
  return result;
}

}  // namespace baton
