// exit_status text and its construction from a waitpid() status word.
#include <string.h>
#include <sys/wait.h>

#include <string>

#include "baton/app_controller.hpp"
#include "child_reaper.hpp"

namespace baton {

std::string exit_status::describe() const {
  if (signal != 0) {
    // sigabbrev_np gives "TERM" for SIGTERM; unknown numbers give nullptr.
    const char* name = sigabbrev_np(signal);
    if (name == nullptr) return "killed by signal " + std::to_string(signal);
    return std::string("killed by SIG") + name;
  }
  return "exit code " + std::to_string(code);
}

namespace process {

exit_status exit_status_from_wait(int wait_status) {
  exit_status status;
  if (WIFEXITED(wait_status)) {
    status.code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    status.signal = WTERMSIG(wait_status);
  }
  return status;
}

}  // namespace process
}  // namespace baton
