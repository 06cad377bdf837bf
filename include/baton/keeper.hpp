// The keeper: a tiny supervisor between the daemon and the supervised child.
// The daemon starts every child as `baton __keeper -- CMD ARGS...`; the keeper
// leads the app's process group, runs CMD in that group, and SIGKILLs the
// whole group when the lease deadline the daemon last sent has passed, or when
// the daemon's pipe closes (the daemon died). So a crashed or frozen daemon
// cannot leave the app working after its lease may have gone to another node.
//
// Protocol: the keeper reads lines `deadline <ns>\n` on descriptor 3, where
// <ns> is an absolute CLOCK_MONOTONIC time in nanoseconds (std::chrono::
// steady_clock on Linux). Until the first line there is no deadline; each line
// replaces the previous deadline. End of file on descriptor 3 kills the group.
// Descriptor 3 is one end of a socket pair, so the keeper answers on it too:
// the moment it has reaped the command, it writes `exited <code>\n` or
// `killed <signal>\n` there, then exits the same way. The daemon learns the
// command's end from that line, without waiting for the keeper's own exit.
#pragma once

#include <string>
#include <string_view>

namespace baton::process {

/// argv[1] that selects the keeper mode of the baton binary.
inline constexpr std::string_view keeper_verb = "__keeper";

/// Optional flag before "--": `--trace-since <ns>` (CLOCK_MONOTONIC). The
/// command's process then writes "baton keeper: takeover timing: command
/// exec'd <N>us after the acquire was sent" to stderr right before its exec
/// (the daemon passes it at debug log level only).
inline constexpr std::string_view keeper_trace_flag = "--trace-since";

/// Optional flag before "--": `--parked`. The keeper forks the command at once;
/// the command's process waits on descriptor 4 (the daemon's start pipe) for
/// one line `start <token> <reason> <trace_ns>` (the lease was won:
/// BATON_TOKEN and BATON_REASON are set from it, a non-zero trace_ns acts as
/// --trace-since), then execs. End of file there (the daemon gave the term up
/// or is gone) ends it without running anything. The daemon writes that line
/// itself, so winning costs one wake-up and one exec. Otherwise the keeper
/// supervises as usual (deadlines on descriptor 3). A standby keeps one parked.
inline constexpr std::string_view keeper_parked_flag = "--parked";

/// The parked command's start pipe (see keeper_parked_flag).
inline constexpr int keeper_start_fd = 4;

/// Descriptor on which the keeper reads its deadlines and writes its report.
inline constexpr int keeper_deadline_fd = 3;

/// The keeper's report of the command's end, one line on descriptor 3 right
/// after it reaped the command: `exited <code>` (it exited) or `killed <signal>`
/// (a signal ended it). Written without blocking, and only this once; a
/// descriptor that cannot take it (a plain pipe, a daemon gone) loses it, and
/// the keeper's own exit says the same a little later.
inline constexpr std::string_view keeper_exited_report = "exited";
inline constexpr std::string_view keeper_killed_report = "killed";

/// The keeper's main: `argv` is {baton, "__keeper", ["--trace-since", NS,] "--", CMD, ARGS...}, with
/// the daemon's connection as descriptor 3, started as leader of its own process
/// group. Returns 125 on usage errors, and 127 when CMD cannot be executed
/// (after "baton keeper: cannot execute CMD: <reason>" on stderr); otherwise
/// it exits with the child's status (the same code, or killed by the same
/// signal), or dies of the SIGKILL it sends to its group.
int run_keeper(int argc, char** argv);

/// This process's own executable (readlink of /proc/self/exe), resolved on
/// the first call and remembered, so a later upgrade of the file on disk does
/// not change it. Empty if it cannot be read.
const std::string& self_executable_path();

}  // namespace baton::process
