// config_loader: applies the YAML file, BATON_* variables and single options
// over the defaults, through one table of options, so that every source
// parses a value the same way and every error names the dotted option and
// where its value came from.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "baton/config_load.hpp"
#include "baton/duration.hpp"
#include "baton/redis_url.hpp"

namespace baton {
namespace {

using text_field = std::string& (*)(config&);
using duration_field = milliseconds& (*)(config&);
using number_field = double& (*)(config&);
using argv_field = std::vector<std::string>& (*)(config&);
using mode_field = unsigned& (*)(config&);
using policy_field = child_exit_policy& (*)(config&);
using switch_field = bool& (*)(config&);
using uid_list_field = std::vector<unsigned>& (*)(config&);
using field = std::variant<text_field, duration_field, number_field, argv_field, mode_field,
                           policy_field, switch_field, uid_list_field>;

struct option_spec {
  std::string_view key;  ///< dotted name, also the YAML path
  std::string_view env;  ///< BATON_* variable ("" = none)
  field target;
};

// Every option a file, the environment or a flag can set. The password is
// absent on purpose: it comes only from BATON_REDIS_PASSWORD, a file, or the URL.
const option_spec option_table[] = {
    {"election", "BATON_ELECTION", text_field{[](config& c) -> std::string& { return c.election; }}},
    {"node_id", "BATON_NODE_ID", text_field{[](config& c) -> std::string& { return c.node_id; }}},
    {"redis.url", "BATON_REDIS_URL",
     text_field{[](config& c) -> std::string& { return c.redis.url; }}},
    {"redis.password_file", "BATON_REDIS_PASSWORD_FILE",
     text_field{[](config& c) -> std::string& { return c.redis.password_file; }}},
    {"redis.connect_timeout", "BATON_REDIS_CONNECT_TIMEOUT",
     duration_field{[](config& c) -> milliseconds& { return c.redis.connect_timeout; }}},
    {"redis.command_timeout", "BATON_REDIS_COMMAND_TIMEOUT",
     duration_field{[](config& c) -> milliseconds& { return c.redis.command_timeout; }}},
    {"lease.ttl", "BATON_LEASE_TTL",
     duration_field{[](config& c) -> milliseconds& { return c.lease.ttl; }}},
    {"lease.renew_interval", "BATON_LEASE_RENEW_INTERVAL",
     duration_field{[](config& c) -> milliseconds& { return c.lease.renew_interval; }}},
    {"lease.renew_deadline", "BATON_LEASE_RENEW_DEADLINE",
     duration_field{[](config& c) -> milliseconds& { return c.lease.renew_deadline; }}},
    {"lease.retry_interval", "BATON_LEASE_RETRY_INTERVAL",
     duration_field{[](config& c) -> milliseconds& { return c.lease.retry_interval; }}},
    {"lease.drift_factor", "BATON_LEASE_DRIFT_FACTOR",
     number_field{[](config& c) -> double& { return c.lease.drift_factor; }}},
    {"hooks.on_start", "BATON_HOOKS_ON_START",
     argv_field{[](config& c) -> std::vector<std::string>& { return c.hooks.on_start; }}},
    {"hooks.on_stop", "BATON_HOOKS_ON_STOP",
     argv_field{[](config& c) -> std::vector<std::string>& { return c.hooks.on_stop; }}},
    {"hooks.timeout", "BATON_HOOKS_TIMEOUT",
     duration_field{[](config& c) -> milliseconds& { return c.hooks.timeout; }}},
    {"child.command", "",
     argv_field{[](config& c) -> std::vector<std::string>& { return c.child.command; }}},
    {"child.stop_timeout", "BATON_CHILD_STOP_TIMEOUT",
     duration_field{[](config& c) -> milliseconds& { return c.child.stop_timeout; }}},
    {"child.on_exit", "BATON_CHILD_ON_EXIT",
     policy_field{[](config& c) -> child_exit_policy& { return c.child.on_exit; }}},
    {"socket.path", "BATON_SOCKET_PATH",
     text_field{[](config& c) -> std::string& { return c.socket.path; }}},
    {"socket.mode", "BATON_SOCKET_MODE",
     mode_field{[](config& c) -> unsigned& { return c.socket.mode; }}},
    {"socket.require_ack", "BATON_SOCKET_REQUIRE_ACK",
     switch_field{[](config& c) -> bool& { return c.socket.require_ack; }}},
    {"socket.allowed_uids", "BATON_SOCKET_ALLOWED_UIDS",
     uid_list_field{[](config& c) -> std::vector<unsigned>& { return c.socket.allowed_uids; }}},
    {"lease.resign_cooldown", "BATON_LEASE_RESIGN_COOLDOWN",
     duration_field{[](config& c) -> milliseconds& { return c.lease.resign_cooldown; }}},
    {"http.listen", "BATON_HTTP_LISTEN",
     text_field{[](config& c) -> std::string& { return c.http.listen; }}},
    {"log.level", "BATON_LOG_LEVEL", text_field{[](config& c) -> std::string& { return c.log.level; }}},
    {"log.format", "BATON_LOG_FORMAT",
     text_field{[](config& c) -> std::string& { return c.log.format; }}},
};

const option_spec* find_option(std::string_view key) {
  for (const auto& spec : option_table) {
    if (spec.key == key) return &spec;
  }
  return nullptr;
}

bool is_section(std::string_view name) {
  for (const auto& spec : option_table) {
    if (spec.key.size() > name.size() && spec.key.substr(0, name.size()) == name &&
        spec.key[name.size()] == '.') {
      return true;
    }
  }
  return false;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string unknown_option_message(const std::string& name, const std::string& source) {
  if (name == "redis.password") {
    return "redis.password is not accepted in a config file; use BATON_REDIS_PASSWORD or "
           "redis.password_file (in " + source + ")";
  }
  std::string best;
  std::size_t best_distance = 3;  // suggest only near misses
  std::set<std::string> candidates;
  for (const auto& spec : option_table) {
    candidates.emplace(spec.key);
    const auto dot = spec.key.find('.');
    if (dot != std::string_view::npos) candidates.emplace(spec.key.substr(0, dot));
  }
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  std::string message = "unknown option " + name;
  if (!best.empty()) message += " (did you mean " + best + "?)";
  return message + " in " + source;
}

// Adds where the value came from at the end of the message, e.g. "(from --ttl)".
config_error with_source(const config_error& e, const std::string& source) {
  return config_error::with_message(e.option(), std::string(e.what()) + " (from " + source + ")");
}

std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<double> parse_number(std::string_view text) {
  text = trim(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// Always octal, with or without a leading 0 or 0o: "0660", "660", "0o660".
std::optional<unsigned> parse_mode(std::string_view text) {
  text = trim(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'o' || text[1] == 'O')) text.remove_prefix(2);
  if (text.empty() || text.size() > 6) return std::nullopt;
  unsigned value = 0;
  for (char c : text) {
    if (c < '0' || c > '7') return std::nullopt;
    value = value * 8 + static_cast<unsigned>(c - '0');
  }
  return value;
}

std::optional<bool> parse_switch(std::string_view text) {
  text = trim(text);
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "true" || lower == "yes" || lower == "on" || lower == "1") return true;
  if (lower == "false" || lower == "no" || lower == "off" || lower == "0") return false;
  return std::nullopt;
}

// uid_t is 32 bits and (uid_t)-1 means "no uid", so the largest real uid is
// 2^32 - 2.
constexpr unsigned long long max_uid = 4294967294ULL;

// Decimal uids separated by commas and/or blanks; "" is the empty list.
std::optional<std::vector<unsigned>> parse_uid_list(std::string_view text) {
  std::vector<unsigned> uids;
  std::size_t i = 0;
  const auto separator = [](char c) {
    return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
  };
  while (i < text.size()) {
    while (i < text.size() && separator(text[i])) ++i;
    const std::size_t begin = i;
    while (i < text.size() && !separator(text[i])) ++i;
    if (i == begin) break;
    const std::string_view word = text.substr(begin, i - begin);
    unsigned long long value = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (ec != std::errc{} || end != word.data() + word.size() || value > max_uid) {
      return std::nullopt;
    }
    uids.push_back(static_cast<unsigned>(value));
  }
  return uids;
}

std::vector<std::string> parse_argv(const std::string& option, const std::string& text) {
  const std::string_view t = trim(text);
  std::vector<std::string> argv;
  if (!t.empty() && t.front() == '[') {
    const auto json = nlohmann::json::parse(t, nullptr, /*allow_exceptions=*/false);
    const char* expected = "a JSON array of strings such as [\"/usr/local/bin/promote\", \"--fast\"], "
                           "or words separated by spaces";
    if (json.is_discarded() || !json.is_array()) {
      throw config_error(option, text, expected);
    }
    for (const auto& element : json) {
      if (!element.is_string()) throw config_error(option, text, expected);
      argv.push_back(element.get<std::string>());
    }
    return argv;
  }
  std::size_t i = 0;
  while (i < t.size()) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
    const std::size_t begin = i;
    while (i < t.size() && !(t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
    if (i > begin) argv.emplace_back(t.substr(begin, i - begin));
  }
  return argv;
}

const char* yaml_kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "null";
    default:
      return "a value";
  }
}

const char* expected_for(const field& target) {
  struct visitor {
    const char* operator()(text_field) const { return "must be a single string"; }
    const char* operator()(duration_field) const {
      return "must be a duration with a unit, such as 250ms, 10s, 1.5s, 2m or 1h";
    }
    const char* operator()(number_field) const { return "must be a number such as 0.01"; }
    const char* operator()(argv_field) const {
      return "must be a list of strings (program and arguments, no shell), such as "
             "[\"/usr/local/bin/promote\", \"--fast\"]";
    }
    const char* operator()(mode_field) const { return "must be an octal file mode such as \"0660\""; }
    const char* operator()(policy_field) const { return "must be compete or exit"; }
    const char* operator()(switch_field) const { return "must be true or false"; }
    const char* operator()(uid_list_field) const {
      return "must be a list of numeric uids such as [0, 1000] (or \"0,1000\")";
    }
  };
  return std::visit(visitor{}, target);
}

// Reads at most the first line, without keeping more of the file around than
// needed: the file holds a secret.
std::string read_password_file(const std::string& path, const std::string& shown) {
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (file == nullptr) {
    throw config_error("redis.password_file", shown,
                       std::string("cannot open it: ") + std::strerror(errno));
  }
  std::string line;
  bool failed = false;
  int error = 0;
  for (;;) {
    const int c = std::fgetc(file);
    if (c == EOF) {
      if (std::ferror(file) != 0) {
        failed = true;
        error = errno;
      }
      break;
    }
    if (c == '\n') break;
    line += static_cast<char>(c);
    if (line.size() > 4096) break;
  }
  std::fclose(file);
  if (failed) {
    throw config_error("redis.password_file", shown,
                       std::string("cannot read it: ") + std::strerror(error));
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) throw config_error("redis.password_file", shown, "its first line is empty");
  return line;
}


}  // namespace

std::vector<std::string> parse_argv_text(const std::string& option, const std::string& text) {
  return parse_argv(option, text);
}

config_loader::config_loader(environment env) : env_(std::move(env)) {}

void config_loader::load_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (file == nullptr) {
    throw config_error::with_message(
        "config", "cannot open config file " + path + ": " + std::strerror(errno));
  }
  std::string text;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
    text.append(buffer, n);
    if (text.size() > 1024 * 1024) {
      std::fclose(file);
      throw config_error::with_message("config", "config file " + path + " is larger than 1 MiB");
    }
  }
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  std::fclose(file);
  if (failed) {
    throw config_error::with_message(
        "config", "cannot read config file " + path + ": " + std::strerror(error));
  }
  load_yaml(text, path);
}

void config_loader::load_yaml(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::string where;
    if (!e.mark.is_null()) {
      where = "line " + std::to_string(e.mark.line + 1) + ", column " +
              std::to_string(e.mark.column + 1) + ": ";
    }
    throw config_error::with_message("config", source + ": " + where + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) return;
  if (!root.IsMap()) {
    throw config_error::with_message(
        "config", source + ": must be a map of options, such as `election: jobs` and `lease: {ttl: 10s}`");
  }

  // yaml-cpp keeps duplicate keys; a silent "last one wins" would hide typos.
  std::set<std::string> seen;
  const auto walk = [&](const auto& self, const YAML::Node& map, const std::string& prefix) -> void {
    for (const auto& entry : map) {
      if (!entry.first.IsScalar()) {
        throw config_error::with_message("config", source + ": option names must be plain strings" +
                                                       (prefix.empty() ? "" : " under " + prefix));
      }
      const std::string name = prefix + entry.first.Scalar();
      const YAML::Node& value = entry.second;
      if (!seen.insert(name).second) {
        throw config_error::with_message(name, "option " + name + " is given twice in " + source);
      }
      if (is_section(name)) {
        if (value.IsNull()) continue;
        if (!value.IsMap()) {
          throw with_source(config_error(name, yaml_kind(value),
                                         "must be a map of options such as " + name + ": {...}"),
                            source);
        }
        self(self, value, name + ".");
        continue;
      }
      const option_spec* spec = find_option(name);
      if (spec == nullptr) throw config_error::with_message(name, unknown_option_message(name, source));
      // An option written with no value (`ttl:`) leaves the earlier value.
      if (value.IsNull()) continue;
      if (std::holds_alternative<argv_field>(spec->target)) {
        if (!value.IsSequence()) {
          const std::string shown = value.IsScalar() ? value.Scalar() : yaml_kind(value);
          throw with_source(config_error(name, shown, expected_for(spec->target)), source);
        }
        std::vector<std::string> argv;
        for (const auto& element : value) {
          if (!element.IsScalar()) {
            throw with_source(config_error(name, std::string("a list holding ") + yaml_kind(element),
                                           expected_for(spec->target)),
                              source);
          }
          argv.push_back(element.Scalar());
        }
        std::get<argv_field>(spec->target)(cfg_) = std::move(argv);
        origins_[name] = "from " + source;
        continue;
      }
      if (std::holds_alternative<uid_list_field>(spec->target) && value.IsSequence()) {
        std::string joined;
        for (const auto& element : value) {
          if (!element.IsScalar()) {
            throw with_source(config_error(name, std::string("a list holding ") + yaml_kind(element),
                                           expected_for(spec->target)),
                              source);
          }
          // A comma inside one element would pass as two uids.
          if (element.Scalar().find_first_of(", \t") != std::string::npos || element.Scalar().empty()) {
            throw with_source(config_error(name, element.Scalar(), expected_for(spec->target)), source);
          }
          joined += (joined.empty() ? "" : ",") + element.Scalar();
        }
        set(name, joined, source);
        continue;
      }
      if (!value.IsScalar()) {
        throw with_source(config_error(name, yaml_kind(value), expected_for(spec->target)), source);
      }
      set(name, value.Scalar(), source);
    }
  };
  try {
    walk(walk, root, "");
  } catch (const YAML::Exception& e) {
    throw config_error::with_message("config", source + ": " + e.what());
  }
}

void config_loader::load_environment() {
  if (!env_) return;
  for (const auto& spec : option_table) {
    if (spec.env.empty()) continue;
    const std::string name(spec.env);
    if (auto value = env_(name)) set(std::string(spec.key), *value, name);
  }
}

void config_loader::set(const std::string& option, const std::string& text,
                        const std::string& source) {
  const option_spec* spec = find_option(option);
  if (spec == nullptr) throw config_error::with_message(option, unknown_option_message(option, source));
  struct visitor {
    config& c;
    const std::string& option;
    const std::string& text;
    const field& target;

    void operator()(text_field f) const { f(c) = text; }
    void operator()(duration_field f) const {
      std::string why;
      const auto d = try_parse_duration(text, &why);
      if (!d) throw config_error(option, text, why);
      f(c) = *d;
    }
    void operator()(number_field f) const {
      const auto n = parse_number(text);
      if (!n) throw config_error(option, text, expected_for(target));
      f(c) = *n;
    }
    void operator()(argv_field f) const { f(c) = parse_argv(option, text); }
    void operator()(mode_field f) const {
      const auto m = parse_mode(text);
      if (!m) throw config_error(option, text, "must be an octal file mode such as 0660");
      f(c) = *m;
    }
    void operator()(switch_field f) const {
      const auto b = parse_switch(text);
      if (!b) throw config_error(option, text, "must be true or false");
      f(c) = *b;
    }
    void operator()(uid_list_field f) const {
      const auto uids = parse_uid_list(text);
      if (!uids) {
        throw config_error(option, text,
                           "must be numeric uids from 0 to 4294967294, separated by commas");
      }
      f(c) = *uids;
    }
    void operator()(policy_field f) const {
      const std::string_view t = trim(text);
      if (t == "compete") {
        f(c) = child_exit_policy::compete;
      } else if (t == "exit") {
        f(c) = child_exit_policy::exit;
      } else {
        throw config_error(option, text,
                           "must be compete (release the lease and compete again) or exit "
                           "(release and exit with the command's status)");
      }
    }
  };
  try {
    std::visit(visitor{cfg_, option, text, spec->target}, spec->target);
  } catch (const config_error& e) {
    throw with_source(e, source);
  }
  origins_[option] = "from " + source;
}

void config_loader::set_child_command(std::vector<std::string> argv, const std::string& source) {
  cfg_.child.command = std::move(argv);
  origins_["child.command"] = "from " + source;
}

config config_loader::finish() {
  config cfg = cfg_;
  option_origins origins = origins_;
  fill_derived_defaults(cfg, &origins);
  validate_config(cfg, origins);

  std::optional<std::string> env_password;
  if (env_) env_password = env_("BATON_REDIS_PASSWORD");
  if (env_password && !env_password->empty()) {
    cfg.redis.password = *env_password;
  } else if (!cfg.redis.password_file.empty()) {
    try {
      cfg.redis.password = read_password_file(cfg.redis.password_file, cfg.redis.password_file);
    } catch (const config_error& e) {
      const auto it = origins.find("redis.password_file");
      if (it == origins.end()) throw;
      throw config_error::with_message(e.option(), std::string(e.what()) + " (" + it->second + ")");
    }
  } else {
    // validate_config has already parsed the URL, so this cannot throw.
    cfg.redis.password = parse_redis_url(cfg.redis.url).password;
  }
  return cfg;
}

}  // namespace baton
