// The children of a process as Linux lists them in
// /proc/PID/task/PID/children, for status output: the daemon knows the keeper
// it forked, and the keeper's only child is the supervised command.
#pragma once

#include <sys/types.h>

#include <vector>

namespace baton {

/// The pids of `pid`'s children (its main thread's); empty when there are
/// none or the kernel does not offer the file.
std::vector<pid_t> children_of(pid_t pid);

}  // namespace baton
