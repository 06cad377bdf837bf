// libsystemd, loaded when baton runs under systemd's notify protocol
// (NOTIFY_SOCKET set) rather than at every start.
//
// Linking libsystemd maps it and its libraries (libgcrypt, libgpg-error,
// liblzma, libzstd, liblz4, libcap) into every daemon, about 0.8 MB of
// resident memory, though baton calls two of its functions and only under
// systemd. This file defines those two, each forwarding to the real one in
// libsystemd.so.0, opened on the first call (src/on_demand/).
#pragma once

#include <optional>
#include <string>

namespace baton {

/// Opens libsystemd.so.0 if not done yet. nullopt when it is usable, else
/// why not. Call it before sd_notify or sd_watchdog_enabled: they end the
/// process when libsystemd is missing.
std::optional<std::string> libsystemd_load_error();

}  // namespace baton
