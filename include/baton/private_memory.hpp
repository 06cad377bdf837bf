// Keeping the daemon's memory from the app it supervises.
//
// The app and the hooks usually run as the daemon's own user, and a process
// may read /proc/PID/environ and /proc/PID/mem of any process of its user.
// The daemon's memory holds the store's password (read from a variable, a
// file or a URL) for as long as it runs, and its start-up environment block
// held it too (secret_environment.hpp overwrites that copy). A process that is
// not "dumpable" has those files owned by root: a same-user app can no longer
// open them, nor attach a debugger. The flag survives fork (a keeper forked
// from the daemon is covered) and is reset by exec, so the app itself stays
// an ordinary, debuggable process. The cost: no core file of baton unless
// fs.suid_dumpable says where root-owned ones go, and `gdb -p` or `strace -p`
// of the daemon need root (CAP_SYS_PTRACE).
#pragma once

#include <sys/prctl.h>

namespace baton {

/// Makes this process non-dumpable (PR_SET_DUMPABLE 0). Returns false only
/// when the kernel refused, which no Linux since 2.6.13 does.
inline bool keep_memory_private() noexcept { return ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0; }

}  // namespace baton
