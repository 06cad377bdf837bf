// `baton once`: the election for one term only (lease_timing::one_term).
// How such a daemon ended and the exit code each ending gives, pure, so
// that the machine decides it, the log says it, and the documentation lists
// the same numbers.
#pragma once

#include <span>
#include <string_view>

namespace baton {

/// How a one-term daemon ended; `none` until it has.
enum class one_term_end {
  none,
  held,         ///< not run: another node held the lease (or the store held it back)
                ///< until the wait ran out
  unavailable,  ///< not run: the store gave no answer (errors, a reply too late to
                ///< lead on) until the wait ran out
  ran,          ///< the command ended by itself: its own status
  cut_short,    ///< the command did not run to its end: its start failed, or it was
                ///< stopped because the lease was lost, could not be renewed in time,
                ///< or was handed over
  interrupted,  ///< SIGTERM or SIGINT: the command, if it ran, was stopped first
};

/// The exit codes of `baton once` that are not the command's own status.
/// From sysexits.h where one fits, so that they differ from the usual
/// statuses of a command (0, 1, 2, 126, 127, 128 + signal).
namespace one_term_exit {
/// EX_TEMPFAIL: another node runs the job; try again at the next tick.
inline constexpr int held = 75;
/// EX_UNAVAILABLE: the store could not be asked.
inline constexpr int unavailable = 69;
/// EX_SOFTWARE: the job did not run to its end here.
inline constexpr int cut_short = 70;
}  // namespace one_term_exit

/// 128 + the signal's number, as a shell reports a command ended by it:
/// 143 for "SIGTERM", 130 for "SIGINT"; 143 for a name it does not know.
int signal_exit_code(std::string_view signal);

/// One exit status of `baton once` and what it means, for --help, the man
/// page and the README's table: every code the verb can end with.
struct one_term_exit_doc {
  std::string_view code;
  std::string_view meaning;
};
std::span<const one_term_exit_doc> one_term_exit_docs();

/// "held", "unavailable", ...: for logs and tests.
const char* to_string(one_term_end e);

}  // namespace baton
