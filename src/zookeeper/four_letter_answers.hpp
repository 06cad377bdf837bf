// What `check-store` reads from a ZooKeeper server's four-letter words, and
// how it weighs it, without I/O: `srvr` (version, mode) and `conf` (the
// tick, the followers' limits, the session bounds). The stale-follower
// window, syncLimit * tickTime, is how long a follower cut off from the
// quorum goes on serving its clients before it drops them: a leader whose
// session is on it cannot renew (a renewal is a write the follower cannot
// forward) until it lets go and the client finds another server. It is
// weighed against the time a leader's renewals may fail before it stops.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/store_check.hpp"
#include "baton/time.hpp"

namespace baton::zookeeper_detail {

/// The answer a server gives for a word left out of
/// 4lw.commands.whitelist ("conf is not executed because it is not in the
/// whitelist.").
bool refused_by_whitelist(std::string_view answer);

/// The lines of one server's `srvr` answer, which took `took`: version and
/// mode, or a hazard when the server would not say (srvr not allowed).
std::vector<check_line> srvr_lines(std::string_view answer, std::string_view where,
                                   std::chrono::nanoseconds took);

/// What `conf` says; a field the answer lacks stays empty (a standalone
/// server has no initLimit or syncLimit).
struct server_conf {
  std::optional<std::int64_t> tick_ms;
  std::optional<std::int64_t> init_limit;  ///< in ticks
  std::optional<std::int64_t> sync_limit;  ///< in ticks
  std::optional<std::int64_t> min_session_ms;
  std::optional<std::int64_t> max_session_ms;
};
server_conf parse_conf(std::string_view answer);

/// The lease timing the window is weighed against (config: lease.*).
struct lease_timing {
  milliseconds ttl{0};
  milliseconds renew_interval{0};  ///< 0 = ttl / 3
  milliseconds renew_deadline{0};  ///< 0 = ttl * 2 / 3
};

/// The lines of one server's `conf` answer: the figures (a note), and the
/// stale-follower window weighed against `timing` (ok, a hazard naming what
/// to set, or a note for a standalone server or a refused word).
std::vector<check_line> conf_lines(std::string_view answer, const lease_timing& timing);

/// The window alone, for a server whose conf gave tickTime and syncLimit.
check_line weigh_stale_follower_window(std::int64_t tick_ms, std::int64_t sync_limit,
                                       const lease_timing& timing);

}  // namespace baton::zookeeper_detail
