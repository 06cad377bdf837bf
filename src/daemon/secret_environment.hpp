// Keeping the Redis password out of what the daemon hands on. Hooks and the
// supervised child inherit the daemon's environment (minus what the process
// component strips, BATON_REDIS_PASSWORD); a password embedded in
// BATON_REDIS_URL would otherwise reach them. The config has been read by the
// time the daemon runs, so the variables are no longer needed.
#pragma once

#include <string>
#include <vector>

namespace baton {

/// Removes from this process's environment BATON_REDIS_PASSWORD, and
/// BATON_REDIS_URL when it carries a password (or cannot be parsed, so might).
/// Returns the names removed, for the log (never their values). Call it while
/// the process has one thread, before anything is spawned.
std::vector<std::string> scrub_secret_environment();

}  // namespace baton
