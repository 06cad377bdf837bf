// libFuzzer target for everything that turns untrusted text into a config:
// the YAML loader, the BATON_* environment and the command line. Bad input must
// end in config_error (or, for parse_invocation, exit code 2 and a message),
// never in a crash, a hang or another exception. A config that is accepted
// must also survive describe_config(): its output is documented to load again.
//
// Input layout: YAML text, then optional NUL-separated words. A word
// "BATON_NAME=value" is an environment variable, any other word an argument
// after "baton" (e.g. "run", "--ttl", "5s", "--", "cmd").
//
// The input never chooses a file to read: BATON_REDIS_PASSWORD is always set,
// so redis.password_file is never opened, BATON_CONFIG names a private file
// holding the YAML text, and -c/--config words are dropped (a path such as a
// FIFO would hang the run, and reading files is not what is fuzzed here).
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/command_line.hpp"
#include "baton/config.hpp"
#include "baton/config_load.hpp"
#include "baton/environment.hpp"

namespace {

struct fuzz_input {
  std::string yaml;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
};

fuzz_input split_input(std::string_view bytes) {
  fuzz_input in;
  std::size_t end = bytes.find('\0');
  in.yaml = std::string(bytes.substr(0, end));
  while (end != std::string_view::npos) {
    const std::size_t start = end + 1;
    end = bytes.find('\0', start);
    const std::string word(bytes.substr(start, end == std::string_view::npos ? end : end - start));
    const std::size_t equals = word.find('=');
    if (word.rfind("BATON_", 0) == 0 && equals != std::string::npos) {
      in.env[word.substr(0, equals)] = word.substr(equals + 1);
    } else if (word.rfind("-c", 0) != 0 && word.rfind("--c", 0) != 0) {
      in.args.push_back(word);
    }
  }
  return in;
}

// The file BATON_CONFIG names: rewritten with each input's YAML. It lives in
// $TMPDIR (scripts/fuzz.sh gives each run a directory of its own).
class config_file {
 public:
  config_file() {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/fuzz_config.XXXXXX";
    fd_ = ::mkstemp(path_.data());
    if (fd_ < 0) {
      std::perror("fuzz_config: mkstemp");
      std::abort();
    }
  }
  ~config_file() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  config_file(const config_file&) = delete;
  config_file& operator=(const config_file&) = delete;

  void write(const std::string& text) {
    if (::ftruncate(fd_, 0) != 0 ||
        ::pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      std::perror("fuzz_config: writing the config file");
      std::abort();
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

config_file& shared_file() {
  static config_file file;
  return file;
}

baton::environment make_environment(const std::map<std::string, std::string>& vars) {
  return [&vars](const std::string& name) -> std::optional<std::string> {
    if (name == "BATON_REDIS_PASSWORD") return std::string("fuzz-password");
    if (name == "BATON_CONFIG") return shared_file().path();
    const auto found = vars.find(name);
    if (found == vars.end()) return std::nullopt;
    return found->second;
  };
}

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_config: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// describe_config promises YAML that loads again; a config that validated
// once must validate again from it.
void check_round_trip(const baton::config& cfg, const baton::environment& env) {
  const std::string text = baton::describe_config(cfg);
  try {
    baton::config_loader again(env);
    again.load_yaml(text, "describe_config output");
    (void)again.finish();
  } catch (const baton::config_error& e) {
    fail("describe_config output does not load again",
         std::string(e.what()) + "\n--- output:\n" + text);
  }
}

void fuzz_loader(const fuzz_input& in, const baton::environment& env) {
  try {
    baton::config_loader loader(env);
    loader.load_yaml(in.yaml, "fuzz.yaml");
    loader.load_environment();
    check_round_trip(loader.finish(), env);
  } catch (const baton::config_error& e) {
    // The documented failure; its message names an option.
    if (std::string_view(e.what()).empty()) fail("config_error without a message", in.yaml);
  }
}

void fuzz_command_line(const fuzz_input& in, const baton::environment& env) {
  // Without words there is no subcommand, and parse_invocation stops before
  // reading anything: not worth the time of a run.
  if (in.args.empty()) return;
  shared_file().write(in.yaml);
  std::vector<const char*> argv{"baton"};
  for (const std::string& word : in.args) argv.push_back(word.c_str());
  argv.push_back(nullptr);
  // parse_invocation never throws: an exception escaping it is a finding.
  const baton::invocation result =
      baton::parse_invocation(static_cast<int>(argv.size() - 1), argv.data(), env);
  switch (result.what) {
    case baton::invocation::verb::exit_now:
      if (result.exit_code != 0 && result.exit_code != 2)
        fail("exit code not 0 or 2", result.message);
      if (result.message.empty()) fail("exit_now without a message", in.yaml);
      break;
    case baton::invocation::verb::version:
      break;
    case baton::invocation::verb::run:
    case baton::invocation::verb::check_config:
    case baton::invocation::verb::init_store:
    case baton::invocation::verb::check_store:
      check_round_trip(result.cfg, env);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz_input in = split_input(std::string_view(reinterpret_cast<const char*>(data), size));
  const baton::environment env = make_environment(in.env);
  fuzz_loader(in, env);
  fuzz_command_line(in, env);
  return 0;
}
