#include "config_reload.hpp"

#include <yaml-cpp/yaml.h>

#include <array>
#include <map>
#include <string_view>

#include "baton/command_line.hpp"

namespace baton {

namespace {

// Options that take effect without a restart: hooks are read when they next
// run, stop and cool-down times when the next stop begins, and the level on
// the next log line.
constexpr std::array<std::string_view, 6> reloadable = {
    "hooks.on_start", "hooks.on_stop",        "hooks.timeout",
    "child.stop_timeout", "lease.resign_cooldown", "log.level"};

bool is_reloadable(std::string_view option) {
  for (auto name : reloadable) {
    if (name == option) return true;
  }
  return false;
}

// describe_config's YAML, flattened to "section.key" -> value as written.
std::map<std::string, std::string> flatten(const config& cfg) {
  std::map<std::string, std::string> out;
  YAML::Node root = YAML::Load(describe_config(cfg));
  for (const auto& entry : root) {
    auto key = entry.first.as<std::string>();
    if (entry.second.IsMap()) {
      for (const auto& inner : entry.second) {
        YAML::Emitter text;
        text << YAML::Flow << inner.second;
        out[key + "." + inner.first.as<std::string>()] = text.c_str();
      }
    } else {
      YAML::Emitter text;
      text << YAML::Flow << entry.second;
      out[key] = text.c_str();
    }
  }
  return out;
}

}  // namespace

reload_plan plan_reload(const config& running, const config& fresh) {
  reload_plan plan;
  const auto before = flatten(running);
  const auto after = flatten(fresh);
  for (const auto& [option, old_value] : before) {
    auto it = after.find(option);
    const std::string new_value = it == after.end() ? "(unset)" : it->second;
    if (new_value == old_value) continue;
    auto line = option + ": " + old_value + " -> " + new_value;
    (is_reloadable(option) ? plan.changes : plan.refused).push_back(std::move(line));
  }
  plan.next = running;
  plan.next.hooks = fresh.hooks;
  plan.next.child.stop_timeout = fresh.child.stop_timeout;
  plan.next.lease.resign_cooldown = fresh.lease.resign_cooldown;
  plan.next.log.level = fresh.log.level;
  return plan;
}

}  // namespace baton
