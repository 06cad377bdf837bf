// Keeping the stores' secrets out of what the daemon hands on. Hooks and the
// supervised child inherit the daemon's environment; a password variable, or
// a password embedded in a URL variable, would otherwise reach them (and a
// hook that prints its environment would put it into the log). The config
// has been read by the time the daemon runs, so the variables are no longer
// needed. The rule is secret_variables.hpp's, for every store kind.
#pragma once

#include <string>
#include <vector>

namespace baton {

/// Removes from this process's environment every variable that
/// is_secret_variable names (passwords of any store, URLs with credentials).
/// Returns the names removed, for the log (never their values). Call it while
/// the process has one thread, before anything is spawned.
std::vector<std::string> scrub_secret_environment();

}  // namespace baton
