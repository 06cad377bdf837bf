// Debian's libfaketime (package libfaketime): preloaded into a process that
// a test starts, to give it a clock of the test's choosing. It preloads into
// openssl and PostgreSQL, not into Debian's redis-server, whose jemalloc it
// clashes with (docs/campaign.md).
#pragma once

namespace baton::testing {

inline constexpr const char* faketime_library =
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

}  // namespace baton::testing
