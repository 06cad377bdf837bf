// The campaign's daemons run in process groups of their own (baton_process),
// so a campaign that dies abnormally (a crash, ctest's timeout, Ctrl-C)
// would leave them running, still competing on ports that are then reused.
// The servers die with the tool (their fixtures set PR_SET_PDEATHSIG); the
// daemons are registered here, and a handler for the fatal signals SIGKILLs
// their groups (the keepers then stop the apps) before the tool dies of the
// signal. Only groups the campaign started are ever registered.
#pragma once

#include <sys/types.h>

namespace baton::campaign {

/// Installs the handler for SIGTERM, SIGINT, SIGQUIT, SIGSEGV, SIGBUS,
/// SIGFPE and SIGABRT. Call once, early in main.
void install_orphan_guard();

/// Registers a daemon's process group (> 1); false when the table (64) is full.
bool guard_group(pid_t pgid);

/// Forgets a group once the campaign has killed and reaped it.
void unguard_group(pid_t pgid);

}  // namespace baton::campaign
