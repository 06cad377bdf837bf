// The endings of a one-term daemon (see one_term.hpp).
#include "baton/one_term.hpp"

namespace baton {

int signal_exit_code(std::string_view signal) {
  // The numbers are Linux's (signal(7)); the machine names signals, it does
  // not include <signal.h>.
  if (signal == "SIGINT") return 128 + 2;
  if (signal == "SIGHUP") return 128 + 1;
  if (signal == "SIGQUIT") return 128 + 3;
  return 128 + 15;
}

std::span<const one_term_exit_doc> one_term_exit_docs() {
  static constexpr one_term_exit_doc docs[] = {
      {"CMD's status",
       "CMD ran and ended by itself: its exit code, or 128 + the signal that ended it; the "
       "lease was released"},
      {"75",
       "not run: another node holds the lease (or the store holds it back after a reset) "
       "and --wait ran out; a line names the holder and its token"},
      {"69",
       "not run: the store could not be reached (or answered too late) until --wait ran "
       "out"},
      {"70",
       "CMD did not run to its end here: it could not start (on_start failed), or baton "
       "stopped it because the lease was lost, could not be renewed in time, or was handed "
       "over"},
      {"143, 130",
       "SIGTERM or SIGINT (128 + the signal): CMD, if it ran, was stopped first and "
       "the lease released"},
      {"127", "CMD could not be executed"},
      {"2", "a usage or configuration error"},
      {"1", "baton could not start (the store's settings, a listener)"},
  };
  return docs;
}

const char* to_string(one_term_end e) {
  switch (e) {
    case one_term_end::none:
      return "none";
    case one_term_end::held:
      return "held";
    case one_term_end::unavailable:
      return "unavailable";
    case one_term_end::ran:
      return "ran";
    case one_term_end::cut_short:
      return "cut-short";
    case one_term_end::interrupted:
      return "interrupted";
  }
  return "unknown";
}

}  // namespace baton
