// Wording shared by the checks of every store kind, so that a Redis server,
// a Redlock master and a PostgreSQL database report the same thing alike.
#pragma once

#include <chrono>
#include <string>

#include "baton/store_check.hpp"

namespace baton::store_check_detail {

/// "0.42 ms".
std::string ms_text(std::chrono::nanoseconds d);

/// The "clock" note: how far the server's clock is from this host's
/// (server minus local), and why that does not matter to baton.
check_line clock_line(std::chrono::milliseconds offset);

}  // namespace baton::store_check_detail
