// The one list of configuration options. It exists so that the ways to set or
// see an option cannot drift apart: the YAML keys (config_loader), the BATON_*
// variables (load_environment), the flags (parse_invocation), check-config's
// output (describe_config), the option names in validation messages
// (option_name), and what SIGHUP may change (plan_reload) all read it. Adding
// an option is one entry in option_table.cpp plus its rule in validate.cpp;
// a store kind's options are entries in its own folder (its descriptor's
// options, baton/store_kind.hpp) with their rules in its descriptor.
// The table stands above the registry it reads: internal to the config
// component, the commands that print it (man page, completion) and their
// tests. A kind declares rows (config_schema/option_spec.hpp) but never
// reads the table; its rules name its own rows (option_rules.hpp).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "config_schema/option_spec.hpp"

namespace baton {

/// Every option, in the order check-config prints them; a section's options
/// are contiguous.
std::span<const option_spec> option_table();

/// The option with dotted name `key`, or nullptr.
const option_spec* find_option(std::string_view key);

/// True when `name` is a section holding options ("lease").
bool is_option_section(std::string_view name);

/// False when `section` holds the options of another store than `kind`
/// (only other kinds read it): a store kind reads the sections its
/// descriptor lists (store_kind.hpp); a section no kind lists ("lease") is
/// read by all.
bool store_reads_section(std::string_view kind, std::string_view section);

/// The option stored at `field` inside `cfg`, among every row of the table.
/// Throws std::logic_error when the field is not an option (a bug).
template <class T>
const option_spec& option_at(const config& cfg, const T& field) {
  return row_at({option_table}, cfg, field);
}

/// The dotted name of the option at `field` in `cfg` (cfg.lease.ttl -> "lease.ttl").
template <class T>
std::string option_name(const config& cfg, const T& field) {
  return std::string(option_at(cfg, field).key);
}

}  // namespace baton
