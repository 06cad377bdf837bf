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
  secret_text,  ///< a string that may carry a password: shown redacted, refused in a flag
  duration,     ///< "250ms", "10s": a unit is required (a bare 0 if zero_derives)
  number,       ///< a finite decimal
  integer,      ///< a whole number, within the row's bounds
  argv,         ///< program and arguments; a YAML list, or JSON/words in text
  file_mode,    ///< always octal
  exit_policy,  ///< compete or exit
  boolean,      ///< true/false (yes/no, on/off, 1/0); a bare flag means true
  uid_list,     ///< numeric uids; a repeatable flag, comma lists
  word,         ///< one word of the row's own set, read and spelled by the row's functions
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

/// Text that may carry a password (a server's URL, a connection string):
/// the row says how to find it and how to hide it, so that the schema knows
/// no store's syntax.
struct secret_text_field {
  using value_type = std::string;
  static constexpr value_kind kind = value_kind::secret_text;
  std::string& (*get)(config&);
  /// The text with any password masked, as check-config shows it; a
  /// placeholder, never the text, when it cannot be read.
  std::string (*redacted)(const std::string& text);
  /// The password the text holds ("" = none, or the text cannot be read:
  /// the rules report that).
  std::string (*password_in)(const std::string& text);
  /// Where the password goes instead, told when a flag holds one ("use
  /// BATON_..._PASSWORD or ....password_file").
  std::string_view password_advice;
};
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

/// Names a C++ type without RTTI: type_tag_of<T> is one function per type.
using type_tag = void (*)();
template <class T>
void type_tag_of() {}

/// One word of a set the row defines (an enumeration, or "off", "all" and
/// numbers), of a type the schema does not know: the row reads and spells
/// it. Made by word_field_of.
struct word_field {
  static constexpr value_kind kind = value_kind::word;
  /// The field's type and address, so that rules can name the option by it.
  type_tag type;
  void* (*at)(config&);
  /// Sets the field from `text`; false when `text` is not one of the words.
  bool (*read)(config&, const std::string& text);
  /// The value as the option spells it.
  std::string (*spelled)(const config&);
  void (*copy)(const config& from, config& to);
  /// What a word that is not one is told ("must be full, ca or none").
  std::string_view allowed;
};

/// The word_field of the value `Get` gives: `Parse` reads text as it was
/// written (nullopt = not a word of the set) and `Spell` writes it back.
template <auto Get, auto Parse, auto Spell>
constexpr word_field word_field_of(std::string_view allowed) {
  using value = std::remove_reference_t<decltype(Get(std::declval<config&>()))>;
  return {
      .type = &type_tag_of<value>,
      .at = [](config& c) -> void* { return &Get(c); },
      .read =
          [](config& c, const std::string& text) {
            const auto parsed = Parse(text);
            if (parsed) Get(c) = *parsed;
            return parsed.has_value();
          },
      .spelled = [](const config& c) { return std::string(Spell(Get(const_cast<config&>(c)))); },
      .copy = [](const config& from, config& to) { Get(to) = Get(const_cast<config&>(from)); },
      .allowed = allowed,
  };
}
using log_format_field = field_of<log_format, value_kind::log_format>;
using url_list_field = field_of<std::vector<std::string>, value_kind::url_list>;
using option_field = std::variant<text_field, secret_text_field, duration_field, number_field,
                                  integer_field, argv_field, file_mode_field, exit_policy_field,
                                  boolean_field, uid_list_field, word_field, log_format_field,
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
  /// them (secret text always may): handed on only without either.
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
          using kind_of_field = std::decay_t<decltype(f)>;
          if constexpr (std::is_same_v<kind_of_field, word_field>) {
            return f.type == &type_tag_of<T> && f.at(target) == &field;
          } else if constexpr (std::is_same_v<typename kind_of_field::value_type, T>) {
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
