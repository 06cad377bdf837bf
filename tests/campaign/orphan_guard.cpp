// The orphan guard (see orphan_guard.hpp): a fixed table of atomics, so the
// signal handler only reads memory and calls kill(), which is
// async-signal-safe.
#include "campaign/orphan_guard.hpp"

#include <signal.h>

#include <array>
#include <atomic>

namespace baton::campaign {

namespace {

std::array<std::atomic<pid_t>, 64> guarded{};

void on_fatal_signal(int sig) {
  for (auto& slot : guarded) {
    const pid_t pgid = slot.load();
    if (pgid > 1) {
      ::kill(-pgid, SIGCONT);
      ::kill(-pgid, SIGKILL);
    }
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void install_orphan_guard() {
  for (const int sig : {SIGTERM, SIGINT, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGABRT}) {
    struct sigaction action {};
    action.sa_handler = on_fatal_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &action, nullptr);
  }
}

bool guard_group(pid_t pgid) {
  if (pgid <= 1) return false;
  for (auto& slot : guarded) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pgid)) return true;
  }
  return false;
}

void unguard_group(pid_t pgid) {
  for (auto& slot : guarded) {
    pid_t expected = pgid;
    slot.compare_exchange_strong(expected, 0);
  }
}

}  // namespace baton::campaign
