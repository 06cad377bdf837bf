// Wording shared by the checks of every store kind, so that a Redis server,
// a Redlock master and a PostgreSQL database report the same thing alike.
#pragma once

#include <chrono>
#include <string>

#include "baton/check_report.hpp"

namespace baton::store_check_detail {

/// Whether traffic to `host` stays on this host: "localhost" or a loopback
/// address (127.0.0.0/8, ::1). Any other name counts as leaving it, since
/// what it resolves to is not known here. check-store's rule for every
/// kind: a password sent in plain text to a host that is not this one is a
/// hazard; no authentication at all is a note.
bool is_loopback_host(const std::string& host);

/// "0.42 ms".
std::string ms_text(std::chrono::nanoseconds d);

/// The "clock" note: how far the server's clock is from this host's
/// (server minus local), and why that does not matter to baton.
check_line clock_line(std::chrono::milliseconds offset);

}  // namespace baton::store_check_detail
