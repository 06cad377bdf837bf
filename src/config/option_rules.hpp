// Rule helpers that the generic rules (validate.cpp) and every store kind's
// own rules share, so that a kind's messages read like everyone else's. A
// rule names an option by the field it checks (option_name), so a message
// always uses the option table's name. Internal to the config component and
// the store kinds.
#pragma once

#include <string>
#include <vector>

#include "baton/config_load.hpp"
#include "baton/time.hpp"

namespace baton {

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
