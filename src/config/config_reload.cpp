// plan_reload: compares every option of the table that the store in use
// reads, as check-config shows it, and sorts each difference by the option's
// `reloadable` flag, so a new option is refused or applied on SIGHUP without
// touching this file.
#include "baton/config_reload.hpp"

#include <map>

#include <yaml-cpp/yaml.h>

#include "option_table.hpp"
#include "config_schema/option_value.hpp"

namespace baton {
namespace {

// A value as the log line shows it: check-config's YAML, re-emitted in flow
// style, so strings lose their JSON quotes ("jobs" -> jobs) and lists stay
// on one line.
std::string log_text(const option_spec& spec, const config& cfg) {
  YAML::Emitter text;
  text << YAML::Flow << YAML::Load(shown_option_value(spec, cfg));
  return text.c_str();
}

}  // namespace

reload_plan plan_reload(const config& running, const config& fresh) {
  reload_plan plan;
  plan.next = running;
  // By option name, so the log lists them in a stable, findable order.
  std::map<std::string_view, std::string> changes;
  std::map<std::string_view, std::string> refused;
  for (const auto& spec : option_table()) {
    if (spec.secret) continue;
    // Another store's section is never read: a ttl that moves its derived
    // timeouts (another kind's command_timeout) changes nothing that runs,
    // and naming it would send the operator looking for it.
    if (!store_reads_section(running.store.kind, spec.section()) &&
        !store_reads_section(fresh.store.kind, spec.section())) {
      continue;
    }
    if (spec.reloadable) copy_option_value(spec, fresh, plan.next);
    const std::string before = log_text(spec, running);
    const std::string after = log_text(spec, fresh);
    if (before == after) continue;
    (spec.reloadable ? changes : refused)[spec.key] =
        std::string(spec.key) + ": " + before + " -> " + after;
  }
  for (auto& [key, line] : changes) plan.changes.push_back(std::move(line));
  for (auto& [key, line] : refused) plan.refused.push_back(std::move(line));
  return plan;
}

}  // namespace baton
