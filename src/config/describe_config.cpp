// describe_config: the effective configuration as YAML, for check-config and
// the start-up log, written from the option table so that a new option is
// shown without touching this file. Each value is written by its kind
// (option_value.cpp) as YAML that loads again. A secret is never written: a
// comment says whether one is set.
#include <sstream>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "option_table.hpp"
#include "config_schema/option_value.hpp"

namespace baton {

std::string describe_config(const config& cfg) {
  std::ostringstream out;
  std::string_view section;
  for (const auto& spec : option_table()) {
    if (spec.section() != section) {
      section = spec.section();
      if (!section.empty()) out << section << ":\n";
    }
    const char* indent = section.empty() ? "" : "  ";
    if (spec.secret) {
      out << indent << "# " << spec.name() << ": "
          << (option_is_empty(spec, cfg) ? "none" : "\"***\"") << "\n";
      continue;
    }
    out << indent << spec.name() << ": " << shown_option_value(spec, cfg);
    if (!spec.empty_note.empty() && option_is_empty(spec, cfg)) out << "  # " << spec.empty_note;
    // The daemon never lets a stop run past what the lease still covers; a
    // longer stop_timeout would otherwise look like it is honoured.
    if (spec.key == option_name(cfg, cfg.child.stop_timeout)) {
      const milliseconds validity = cfg.lease.ttl - lease_drift(cfg.lease);
      if (cfg.child.stop_timeout > validity) {
        out << "  # capped at " << validity.count() << "ms by the lease's validity (ttl - drift)";
      }
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace baton
