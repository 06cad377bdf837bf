// Rule helpers that the generic rules (validate.cpp) and every store kind's
// own rules share, so that a kind's messages read like everyone else's. A
// rule names an option by the field it checks (option_name), so a message
// always uses the option table's name. Internal to the config component and
// the store kinds.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "baton/config_load.hpp"
#include "baton/time.hpp"
#include "option_table.hpp"

namespace baton {

/// Records in `origins` (if given) that the option at `field` took the
/// derived value described by `how` ("default: lease.ttl / 3").
template <class T>
void note_derived(const config& cfg, option_origins* origins, const T& field, const char* how) {
  if (origins != nullptr) (*origins)[option_name(cfg, field)] = how;
}

/// The usual command timeout when none is set: min(1s, renew_interval / 2),
/// so that a renewal's call fails in time for the next one.
inline milliseconds derived_command_timeout(const config& cfg) {
  return std::min(milliseconds{1000}, cfg.lease.renew_interval / 2);
}

/// config_error unless `value` > 0.
void require_positive(const config& cfg, const milliseconds& value);

/// config_error unless the file (or directory) at `path` exists and can be
/// read now, so that a typo is a config error at start, not a connect error
/// on every retry. "" passes.
void require_readable(const config& cfg, const std::string& path, bool directory);

/// Options are written back by describe_config as YAML, which holds only
/// UTF-8: any other byte would come back as U+FFFD, a different value. A
/// string option, or every word of an argv option.
void require_utf8(const config& cfg, const std::string& value);
void require_utf8(const config& cfg, const std::vector<std::string>& argv);

/// config_error unless `value` holds no spaces or control characters (user
/// and master names that go on the wire as one word).
void require_one_word(const config& cfg, const std::string& value);

}  // namespace baton
