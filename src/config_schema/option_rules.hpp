// Rule helpers that the generic rules (validate.cpp) and every store kind's
// own rules share, so that a kind's messages read like everyone else's. A
// rule names an option by the field it checks, among the rows it is given:
// a kind names its own rows (option_rules_of<redis_option_rows>), the
// generic rules the whole table, so a message always uses the row's name and
// a kind never reaches above itself for it.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "baton/option_origins.hpp"
#include "baton/time.hpp"
#include "option_spec.hpp"

namespace baton {

/// config_error naming `option` unless `value` > 0.
void require_positive(std::string_view option, const milliseconds& value);

/// config_error naming `option` unless the file (or directory) at `path`
/// exists and can be read now, so that a typo is a config error at start,
/// not a connect error on every retry. "" passes.
void require_readable(std::string_view option, const std::string& path, bool directory);

/// Options are written back by describe_config as YAML, which holds only
/// UTF-8: any other byte would come back as U+FFFD, a different value. A
/// string option, or every word of an argv option.
void require_utf8(std::string_view option, const std::string& value);
void require_utf8(std::string_view option, const std::vector<std::string>& argv);

/// config_error naming `option` unless `value` holds no spaces or control
/// characters (user and master names that go on the wire as one word).
void require_one_word(std::string_view option, const std::string& value);

/// The usual command timeout when none is set: min(1s, renew_interval / 2),
/// so that a renewal's call fails in time for the next one.
inline milliseconds derived_command_timeout(const config& cfg) {
  return std::min(milliseconds{1000}, cfg.lease.renew_interval / 2);
}

/// The rules above, naming the option at a field among the rows of `Rows`.
template <option_rows... Rows>
struct option_rules_of {
  template <class T>
  static const option_spec& option_at(const config& cfg, const T& field) {
    return row_at({Rows...}, cfg, field);
  }
  /// The dotted name of the option at `field` in `cfg` (cfg.lease.ttl -> "lease.ttl").
  template <class T>
  static std::string option_name(const config& cfg, const T& field) {
    return std::string(option_at(cfg, field).key);
  }
  /// Records in `origins` (if given) that the option at `field` took the
  /// derived value described by `how` ("default: lease.ttl / 3").
  template <class T>
  static void note_derived(const config& cfg, option_origins* origins, const T& field,
                           const char* how) {
    if (origins != nullptr) (*origins)[option_name(cfg, field)] = how;
  }
  static void require_positive(const config& cfg, const milliseconds& value) {
    baton::require_positive(option_name(cfg, value), value);
  }
  static void require_readable(const config& cfg, const std::string& path, bool directory) {
    baton::require_readable(option_name(cfg, path), path, directory);
  }
  template <class T>
  static void require_utf8(const config& cfg, const T& value) {
    baton::require_utf8(option_name(cfg, value), value);
  }
  static void require_one_word(const config& cfg, const std::string& value) {
    baton::require_one_word(option_name(cfg, value), value);
  }
};

}  // namespace baton
