// Starts a keeper by fork() alone, without exec'ing the baton binary again:
// the forked copy of the daemon calls run_keeper() directly. That saves the
// 2-3 ms of loading the binary and its shared libraries on every start of the
// app, which the takeover latency pays in full.
#pragma once

#include <string>
#include <vector>

#include "spawn.hpp"

namespace baton::process {

/// Forks a keeper for `keeper_args` ({program, "__keeper", "--", command...}),
/// with environment `env` ("NAME=value"), `deadline_fd` as its descriptor 3,
/// every other descriptor above 2 closed, default signal dispositions, and its
/// own process group. The daemon must be single-threaded (it is: one asio loop).
spawn_result fork_keeper(const std::vector<std::string>& keeper_args,
                         const std::vector<std::string>& env, int deadline_fd);

}  // namespace baton::process
