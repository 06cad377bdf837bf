// config_loader: applies the YAML file (config_yaml.cpp), BATON_* variables
// and single options over the defaults, all through the option table, so
// that every source parses a value the same way and every error names the
// dotted option and where its value came from.
#include "baton/config_load.hpp"
#include "loader_messages.hpp"
#include "option_table.hpp"
#include "config_schema/option_value.hpp"
#include "executable_check.hpp"
#include "baton/store_registry.hpp"
#include "config_schema/text_chars.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace baton {

config default_config() {
  config cfg;
  // The registry's, so that the config layer names no kind.
  cfg.store.kind = default_store_kind().name;
  return cfg;
}

config_loader::config_loader(environment env) : env_(std::move(env)), cfg_(default_config()) {}

void config_loader::load_environment() {
  if (!env_) return;
  for (const auto& spec : option_table()) {
    // Secrets are resolved by finish(), which knows their own order of sources.
    if (spec.env.empty() || spec.secret) continue;
    const std::string name(spec.env);
    const auto value = env_(name);
    if (!value) continue;
    const std::string key(spec.key);
    // An empty variable clears what the file set: on purpose it is the way
    // to undo a file's setting (so it is not refused), but a variable left
    // empty by a template (`BATON_..._PASSWORD_FILE=`) would silently drop
    // the file's password file, so it is said.
    if (const auto origin = origins_.find(key); text::trim(*value).empty() &&
                                                 origin != origins_.end() &&
                                                 !option_is_empty(spec, cfg_)) {
      warnings_.push_back(name + " is set but empty: it clears " + key + ", which the file set (" +
                          origin->second + "); unset the variable to keep the file's value");
    }
    set(key, *value, name);
  }
}

namespace {

// BATON_* variables that are not options but are not typos either: the one
// baton reads elsewhere (BATON_CONFIG; a secret's variable is its row's),
// the ones it sets for hooks and apps (a baton started by a hook inherits
// them), and the project's test, bench and build scripts' own.
constexpr std::array<std::string_view, 18> known_variables = {
    "BATON_CONFIG",        "BATON_EVENT",          "BATON_REASON",       "BATON_TOKEN",
    "BATON_NODE_ID",       "BATON_ELECTION",       "BATON_LEASE_TTL_MS", "BATON_BINARY",
    "BATON_QUICK",         "BATON_SANITIZE",       "BATON_SANITIZE_CXX", "BATON_FUZZ",
    "BATON_CLIENT_COMMANDS", "BATON_SOURCE_DIR",   "BATON_VERSION",      "BATON_TEST_WORKER",
    "BATON_TEST_JOBS",     "BATON_CCACHE"};
constexpr std::array<std::string_view, 6> known_prefixes = {
    "BATON_TEST_", "BATON_FAULT_", "BATON_BENCH_", "BATON_PROPERTY_", "BATON_FUZZ_", "BATON_BUILD_"};

}  // namespace

void config_loader::note_variable_names(const std::vector<std::string>& names) {
  // Suggested for a near miss: BATON_CONFIG and every option's variable,
  // the secrets' too.
  std::vector<std::string> candidates(known_variables.begin(), known_variables.begin() + 1);
  for (const auto& spec : option_table()) {
    if (!spec.env.empty()) candidates.emplace_back(spec.env);
  }
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (const auto& name : sorted) {
    if (name.rfind("BATON_", 0) != 0) continue;
    if (std::find(candidates.begin(), candidates.end(), name) != candidates.end()) continue;
    if (std::find(known_variables.begin(), known_variables.end(), name) != known_variables.end()) {
      continue;
    }
    if (std::any_of(known_prefixes.begin(), known_prefixes.end(),
                    [&](std::string_view p) { return name.rfind(p, 0) == 0; })) {
      continue;
    }
    std::string line = "unknown environment variable " + name + " is ignored";
    if (const std::string best = nearest_name(name, candidates); !best.empty()) {
      line += " (did you mean " + best + "?)";
    }
    warnings_.push_back(std::move(line));
  }
}

void config_loader::set(const std::string& option, const std::string& text,
                        const std::string& source) {
  const option_spec* spec = find_option(option);
  if (spec == nullptr || spec->secret) throw unknown_option(option, source);
  try {
    parse_option_text(*spec, cfg_, text);
  } catch (const config_error& e) {
    throw with_source(e, source);
  }
  origins_[option] = "from " + source;
}

void config_loader::set_child_command(std::vector<std::string> argv, const std::string& source) {
  cfg_.child.command = std::move(argv);
  origins_[option_name(cfg_, cfg_.child.command)] = "from " + source;
}

config config_loader::finish() {
  config cfg = cfg_;
  option_origins origins = origins_;
  fill_derived_defaults(cfg, &origins);
  validate_config(cfg, origins);
  check_executables(cfg, env_ ? env_("PATH") : std::nullopt, origins);
  // Only the kind in use: another kind's secrets are never read (and
  // reading one may load the kind's client library, which costs memory).
  store_kind_of(cfg).resolve_secrets(cfg, env_, origins);
  return cfg;
}

}  // namespace baton
