// Keeping the stores' secrets out of what the daemon hands on. Hooks and the
// supervised child inherit the daemon's environment; a password variable, or
// a password embedded in a URL variable, would otherwise reach them (and a
// hook that prints its environment would put it into the log). The config
// has been read by the time the daemon runs, so the variables are no longer
// needed. The rule is secret_variables.hpp's, for every store kind, plus the
// variables the client library of the kind in use reads by itself
// (store_kind::client_secret_variables: PGPASSWORD), which baton has read
// into its config by then.
//
// Removing a variable is not enough: /proc/PID/environ shows the block the
// process started with, not the current `environ`, so the value's bytes are
// overwritten where they lie first (the block itself is then also kept from
// same-user processes by baton/private_memory.hpp).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

/// Removes from this process's environment every variable that
/// is_secret_variable names (passwords of any store, URLs with credentials)
/// and every variable of `also` that is set, after overwriting each one's
/// value with zero bytes in place. Returns the names removed, for the log
/// (never their values). Call it while the process has one thread, before
/// anything is spawned.
std::vector<std::string> scrub_secret_environment(std::span<const std::string_view> also = {});

}  // namespace baton
