// config_loader: applies the YAML file (config_yaml.cpp), BATON_* variables
// and single options over the defaults, all through the option table, so
// that every source parses a value the same way and every error names the
// dotted option and where its value came from.
#include "baton/config_load.hpp"
#include "loader_messages.hpp"
#include "option_table.hpp"
#include "option_value.hpp"
#include "redis_password.hpp"

namespace baton {

config_loader::config_loader(environment env) : env_(std::move(env)) {}

void config_loader::load_environment() {
  if (!env_) return;
  for (const auto& spec : option_table()) {
    // Secrets are resolved by finish(), which knows their own order of sources.
    if (spec.env.empty() || spec.secret) continue;
    const std::string name(spec.env);
    if (auto value = env_(name)) set(std::string(spec.key), *value, name);
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
  cfg.redis.password = resolve_redis_password(cfg, env_, origins);
  return cfg;
}

}  // namespace baton
