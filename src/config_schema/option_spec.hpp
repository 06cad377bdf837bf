// One row of the option table and the types an option's value may have: the
// schema every option is declared in, by the table's own rows
// (src/config/option_table.cpp) and by each store kind's, in its folder. The
// rows are data; the table that puts them together stands above the kinds
// (src/config/option_table.hpp).
#pragma once

#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "baton/config.hpp"

namespace baton {

/// How an option's value is typed, parsed, checked for type in YAML, shown
/// by check-config and offered as a flag.
enum class value_kind {
  text,         ///< any string
  redis_url,    ///< a string that may carry a password: shown redacted, refused in a flag
  postgres_url, ///< a libpq string or URI, the same rules as redis_url
  duration,     ///< "250ms", "10s": a unit is required (a bare 0 if zero_derives)
  number,       ///< a finite decimal
  integer,      ///< a whole number, within the row's bounds
  argv,         ///< program and arguments; a YAML list, or JSON/words in text
  file_mode,    ///< always octal
  exit_policy,  ///< compete or exit
  boolean,      ///< true/false (yes/no, on/off, 1/0); a bare flag means true
  uid_list,     ///< numeric uids; a repeatable flag, comma lists
  replica_ack,  ///< off, all or a number of replicas from 1 to 64
  tls_verify,   ///< full, ca or none
  log_format,   ///< text or json
  url_list,     ///< URLs, one per element; a YAML list, or separated by commas or spaces in text
};

/// Where in a `config` an option lives: a function from the config to the
/// field, tagged with the kind so that std::visit dispatches on the kind.
template <class T, value_kind K>
struct field_of {
  using value_type = T;
  static constexpr value_kind kind = K;
  T& (*get)(config&);
};

using text_field = field_of<std::string, value_kind::text>;
using redis_url_field = field_of<std::string, value_kind::redis_url>;
using postgres_url_field = field_of<std::string, value_kind::postgres_url>;
using duration_field = field_of<milliseconds, value_kind::duration>;
using number_field = field_of<double, value_kind::number>;
/// A whole number from `min` to `max`: text that is not a number, or not a
/// whole one, is refused as it is read; the bounds are checked with the
/// other rules (validate.cpp), so that a missing required option is still
/// named first.
struct integer_field {
  using value_type = int;
  static constexpr value_kind kind = value_kind::integer;
  int& (*get)(config&);
  int min;
  int max;
  /// "must be a whole number from -1000 to 1000".
  std::string allowed() const {
    return "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  }
};
using argv_field = field_of<std::vector<std::string>, value_kind::argv>;
using file_mode_field = field_of<unsigned, value_kind::file_mode>;
using exit_policy_field = field_of<child_exit_policy, value_kind::exit_policy>;
using boolean_field = field_of<bool, value_kind::boolean>;
using uid_list_field = field_of<std::vector<unsigned>, value_kind::uid_list>;
using replica_ack_field = field_of<replica_ack_setting, value_kind::replica_ack>;
using tls_verify_field = field_of<tls_verify, value_kind::tls_verify>;
using log_format_field = field_of<log_format, value_kind::log_format>;
using url_list_field = field_of<std::vector<std::string>, value_kind::url_list>;
using option_field = std::variant<text_field, redis_url_field, postgres_url_field, duration_field, number_field,
                                  integer_field,
                                  argv_field, file_mode_field, exit_policy_field, boolean_field,
                                  uid_list_field, replica_ack_field, tls_verify_field, log_format_field,
                                  url_list_field>;

struct option_spec {
  /// Dotted name, also the YAML path: lease.ttl is `lease: {ttl: ...}`.
  std::string_view key = {};
  /// BATON_* variable ("" = none).
  std::string_view env = {};
  /// Flag spelling(s) as CLI11 takes them, "--ttl" or "-t,--ttl"; messages
  /// name the last. "" = none.
  std::string_view flag = {};
  /// What the flag takes, for --help ("DURATION").
  std::string_view placeholder = {};
  /// One line for --help. For a secret: where to set it instead.
  std::string_view help = {};
  option_field field;
  /// SIGHUP may change it in a running daemon.
  bool reloadable = false;
  /// Never shown, never taken from a file or a flag; resolved by
  /// config_loader::finish() from its variable.
  bool secret = false;
  /// The value names servers by URL and may carry a user and password in
  /// them (the URL kinds always may): handed on only without either.
  bool may_carry_credentials = false;
  /// The comment check-config adds after an empty value ("off").
  std::string_view empty_note = {};
  /// A duration whose 0 means "derive it from the other options": a bare
  /// `0` (no unit) is accepted for it, as the example config writes it.
  bool zero_derives = false;

  /// True when the variable's `value` must not reach the app or a hook:
  /// a secret, or servers named with credentials (user-info or a libpq
  /// password keyword). Judged on the text, so an unparseable value that
  /// might hold one counts too.
  bool value_is_secret(std::string_view value) const;

  value_kind kind() const {
    return std::visit([](const auto& f) { return f.kind; }, field);
  }
  /// "lease" for lease.ttl, "" for a top-level option.
  std::string_view section() const {
    const auto dot = key.find('.');
    return dot == std::string_view::npos ? std::string_view{} : key.substr(0, dot);
  }
  /// "ttl" for lease.ttl.
  std::string_view name() const { return key.substr(key.find('.') + 1); }
  /// The flag spelling named in messages: the last of `flag`.
  std::string_view flag_name() const { return flag.substr(flag.rfind(',') + 1); }
};

/// A function that gives a set of rows: a kind's own (redis_option_rows), or
/// the whole table (option_table).
using option_rows = std::span<const option_spec> (*)();

/// The row among `rows` stored at `field` inside `cfg`, or nullptr: rules
/// name options by the field they check, so a message always uses the row's
/// name. The type must match too (&cfg.lease is also the address of
/// cfg.lease.ttl).
template <class T>
const option_spec* find_row_at(std::span<const option_spec> rows, const config& cfg, const T& field) {
  // The accessors only form a reference; nothing is written through it.
  auto& target = const_cast<config&>(cfg);
  for (const auto& spec : rows) {
    const bool match = std::visit(
        [&](const auto& f) {
          if constexpr (std::is_same_v<typename std::decay_t<decltype(f)>::value_type, T>) {
            return &f.get(target) == &field;
          } else {
            return false;
          }
        },
        spec.field);
    if (match) return &spec;
  }
  return nullptr;
}

/// As find_row_at, over several sets of rows. Throws std::logic_error when
/// the field is in none of them (a bug).
template <class T>
const option_spec& row_at(std::initializer_list<option_rows> sets, const config& cfg, const T& field) {
  for (option_rows rows : sets) {
    if (const option_spec* spec = find_row_at(rows(), cfg, field)) return *spec;
  }
  throw std::logic_error("option_at: the field is not a configuration option");
}

}  // namespace baton
