// See executable_check.hpp. Mirrors execvp: the first directory of PATH that
// holds an executable regular file wins; a hit that is not executable (or a
// directory) only matters when nothing later in PATH is found.
#include "executable_check.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "option_table.hpp"

namespace baton {
namespace {

constexpr const char* default_path = "/bin:/usr/bin";  // glibc's execvp default

// "" if `path` is an executable regular file, else why not.
std::string file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return errno == ENOENT || errno == ENOTDIR ? "no such file" : "cannot be read";
  }
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (::access(path.c_str(), X_OK) != 0) return "not executable";
  return {};
}

}  // namespace

std::string executable_problem(const std::string& program,
                               const std::optional<std::string>& path_variable) {
  if (program.empty()) return "no such file";
  if (program.find('/') != std::string::npos) return file_problem(program);
  const std::string path = path_variable ? *path_variable : std::string(default_path);
  std::string_view rest = path;
  std::string found_but;  // why the first hit that exists cannot be run
  while (true) {
    const auto colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    const std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + program;
    const std::string why = file_problem(candidate);
    if (why.empty()) return {};
    if (why != "no such file" && found_but.empty()) found_but = candidate + " " + why;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  if (!found_but.empty()) return "found in PATH but " + found_but;
  return "not found in PATH (" + path + ")";
}

void check_executables(const config& cfg, const std::optional<std::string>& path_variable,
                       const option_origins& origins) {
  const auto check = [&](const std::vector<std::string>& argv) {
    if (argv.empty()) return;
    const std::string why = executable_problem(argv.front(), path_variable);
    if (why.empty()) return;
    const std::string option = option_name(cfg, argv);
    std::string message = option + ": cannot execute " + argv.front() + ": " + why;
    if (const auto it = origins.find(option); it != origins.end()) message += " (" + it->second + ")";
    throw config_error::with_message(option, message);
  };
  check(cfg.child.command);
  check(cfg.hooks.on_start);
  check(cfg.hooks.on_stop);
}

}  // namespace baton
