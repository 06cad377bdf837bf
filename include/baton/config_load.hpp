// Building a `config` from its sources: defaults, then a YAML file, then
// BATON_* environment variables, then single options (command-line flags);
// each later source wins. `finish` fills in the derived defaults, resolves the
// password, and validates. parse_invocation (command_line.hpp) is the usual
// entry point; this header is for it, for tests, and for tools.
#pragma once

#include <string>
#include <vector>

#include "baton/config.hpp"
#include "baton/environment.hpp"
#include "baton/option_origins.hpp"
#include "baton/option_text.hpp"

namespace baton {

/// A config with every default: store.kind is the registry's default kind
/// (baton/store_registry.hpp), each kind's settings their own defaults.
config default_config();

/// Accumulates sources over default_config(). Every method throws
/// config_error, naming the option, on bad input.
class config_loader {
 public:
  /// `env` is consulted by load_environment() and finish() (the password).
  explicit config_loader(environment env);

  /// Reads the YAML file at `path` (see config/baton.yaml for the keys).
  /// An empty file is fine. Errors name the option; an unreadable or
  /// malformed file is a config_error for option "config".
  void load_file(const std::string& path);

  /// As load_file, from text; `source` names it in messages.
  void load_yaml(const std::string& text, const std::string& source);

  /// Applies the BATON_* variables of the option table (BATON_LEASE_TTL for
  /// lease.ttl, ...). Other BATON_* variables are ignored here (see
  /// note_variable_names). BATON_CONFIG and the secrets' variables are not
  /// handled here (see parse_invocation and finish()).
  void load_environment();

  /// Given the names of the variables in the environment, adds a warning to
  /// warnings() for each BATON_* name that baton does not know (with "did you
  /// mean ...?" for a near miss). Names baton itself sets for hooks and apps
  /// (BATON_EVENT, BATON_TOKEN, ...) and the project's test and build
  /// variables are not warned about. Never logs: the caller prints.
  void note_variable_names(const std::vector<std::string>& names);

  /// Warnings collected so far, one line each, without a prefix.
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }

  /// Sets one option by its dotted name from text as a person typed it:
  /// durations with units, argv lists as a JSON array of strings or else
  /// split on whitespace, socket.mode in octal. `source` is for messages.
  void set(const std::string& option, const std::string& text, const std::string& source);

  /// Sets child.command (the words after `--`).
  void set_child_command(std::vector<std::string> argv, const std::string& source);

  /// Fills derived defaults (see fill_derived_defaults), validates, checks
  /// that every command can be executed (a bare name is searched in the PATH
  /// of the environment, as execvp would), resolves the secrets of the kind in
  /// use (its store_kind::resolve_secrets: a password from its variable, its
  /// file or its URL; more than one is an error), and returns the result.
  config finish();

  /// The config as accumulated so far (no derived values yet).
  const config& current() const noexcept { return cfg_; }

 private:
  environment env_;
  config cfg_;
  option_origins origins_;
  std::vector<std::string> warnings_;
};

/// Replaces each 0 that means "derived" with its value: renew_interval =
/// ttl/3; renew_deadline = ttl*2/3; retry_interval = min(1s,
/// renew_interval); command_timeout = min(1s, renew_interval/2); an empty
/// node_id = default_node_id(cfg). Records "default: ..." in `origins` if given.
void fill_derived_defaults(config& cfg, option_origins* origins = nullptr);

/// Checks every rule (see config/baton.yaml); throws config_error naming the
/// first bad option. Expects derived defaults to be filled in. `origins`
/// only improves the messages.
void validate_config(const config& cfg, const option_origins& origins = {});

/// hostname (characters outside [A-Za-z0-9._@-] replaced by '-') + "-" +
/// 6 hex digits of a hash of what tells apart batons on one host: election,
/// socket.path, http.listen and the effective uid. Stable across restarts
/// (so metric series keep their labels); at most 128 characters.
std::string default_node_id(const config& cfg);

/// The names of the variables in this process's environment.
std::vector<std::string> environment_variable_names();

}  // namespace baton
