// Whether a command (child.command, hooks.on_start, hooks.on_stop) can be
// executed, looked up the way execvp looks it up, so that a typo in a program
// name is a configuration error at start-up and not a failure at the first
// election won. Internal to the config component (and its tests).
#pragma once

#include <optional>
#include <string>

#include "baton/config_load.hpp"

namespace baton {

/// "" when `program` can be executed, else why not: "not found in PATH
/// (DIRS)", "no such file", "not executable", "is a directory". A name with
/// a '/' is taken as a path; a bare name is searched in `path_variable`
/// (the value of PATH; unset means glibc's execvp default /bin:/usr/bin, an
/// empty entry means the current directory).
std::string executable_problem(const std::string& program,
                               const std::optional<std::string>& path_variable);

/// Throws config_error naming the first of child.command, hooks.on_start,
/// hooks.on_stop whose program cannot be executed (with the path and why,
/// and where the option came from when `origins` knows).
void check_executables(const config& cfg, const std::optional<std::string>& path_variable,
                       const option_origins& origins = {});

}  // namespace baton
