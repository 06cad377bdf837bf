// SIGHUP: what a fresh reading of the configuration may change in a running
// daemon. Options that only shape the next hook run, the next stop or the log
// can change at once; the rest (the election, the store, the lease timing, the
// socket, the HTTP address, the command) would need a restart, or would break
// the agreement between candidates, and are refused. Which is which is the
// option table's `reloadable` flag. A reload is applied entirely or not at all.
#pragma once

#include <string>
#include <vector>

#include "baton/config.hpp"

namespace baton {

struct reload_plan {
  /// "hooks.timeout: 30s -> 10s", one per changed option that may change,
  /// in alphabetical order of the option.
  std::vector<std::string> changes;
  /// The same for changed options that may not; non-empty = refuse it all.
  std::vector<std::string> refused;
  /// `running` with the allowed changes applied (meaningful if refused is empty).
  config next;
};

/// Compares option by option, as check-config prints them (so a secret, the
/// password, never appears: it is kept from `running`, since its source, the
/// environment, was scrubbed after start-up).
reload_plan plan_reload(const config& running, const config& fresh);

}  // namespace baton
