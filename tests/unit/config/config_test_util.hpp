// Helpers shared by the config unit tests: a fake environment built from a
// map, a scratch directory for config and password files, and the two ways
// the tests load a config (YAML text through config_loader, an argv list
// through parse_invocation), both reading only the fake environment. Error
// helpers that a single file shapes on purpose stay in that file.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "baton/environment.hpp"

namespace baton::config_test_util {

/// An environment that knows exactly `vars` and nothing of the process's own.
inline environment fake_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

/// A scratch directory under the system temp directory, removed with
/// everything in it when the object goes.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "baton-config-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  /// Writes `content` to the file `name` in the directory; returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    const auto file = path_ / name;
    std::ofstream(file) << content;
    return file.string();
  }
  /// The path of `name` in the directory, whether it exists or not.
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Loads YAML text with election preset to "jobs", then the variables in
/// `env`, and returns the finished config; throws config_error.
inline config from_yaml(const std::string& yaml, std::map<std::string, std::string> env = {}) {
  config_loader loader(fake_env(std::move(env)));
  loader.set("election", "jobs", "test");
  loader.load_yaml(yaml, "test.yaml");
  loader.load_environment();
  return loader.finish();
}

/// Parses `args` as typed after the program name ("baton" is put in front)
/// with the variables in `env`.
inline invocation parse(std::vector<std::string> args,
                        std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "baton");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  return parse_invocation(static_cast<int>(args.size()), argv.data(), fake_env(std::move(env)));
}

}  // namespace baton::config_test_util
