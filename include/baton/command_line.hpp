// The command line: `baton run [options] [-- CMD ARGS...]`, `baton
// check-config [options]`, `baton version` / `baton --version`. Turns argv
// plus the environment plus the config file into one validated config, or
// into a message and an exit code. Never throws.
#pragma once

#include <string>
#include <vector>

#include "baton/config.hpp"
#include "baton/environment.hpp"

namespace baton {

/// What main() should do.
struct invocation {
  enum class verb { run, check_config, init_store, check_store, version, exit_now };
  verb what = verb::exit_now;
  /// Effective, validated config (run, check_config).
  config cfg;
  /// exit_now: the code to exit with (0 for --help, 2 for usage or config
  /// errors).
  int exit_code = 0;
  /// exit_now: text to print: help for stdout when exit_code == 0, else the
  /// error (`baton: ...`, one line, or usage help) for stderr. version: the
  /// version line ("baton 0.1.0").
  std::string message;
  /// run, check_config: things worth saying that do not stop baton (an
  /// unknown BATON_* variable), one line each without a prefix; main prints
  /// each to stderr as `baton: warning: ...`.
  std::vector<std::string> warnings;
  /// init_store: --print, only print the schema the store needs.
  bool print_schema = false;
};

/// Parses argv (argv[0] is the program name) over BATON_* from `env`, over
/// the config file named by --config or BATON_CONFIG. `variable_names` are
/// the names in the environment (environment_variable_names() for the real
/// one): unknown BATON_* names among them become warnings. A flag whose name
/// holds "password" (other than --redis-password-file) is refused before
/// anything else, and its value is never repeated. Never throws.
invocation parse_invocation(int argc, const char* const* argv, const environment& env,
                            const std::vector<std::string>& variable_names = {});

/// The effective config as YAML that loads again: every option of the
/// option table, in its order. A secret (the password) is never printed: a
/// comment says `password: "***"` when one is set, and the URL is redacted.
std::string describe_config(const config& cfg);

}  // namespace baton
