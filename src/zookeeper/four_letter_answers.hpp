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
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/check_report.hpp"
#include "baton/time.hpp"

namespace baton::zookeeper_detail {

/// The answer a server gives for a word left out of
/// 4lw.commands.whitelist ("conf is not executed because it is not in the
/// whitelist.").
bool refused_by_whitelist(std::string_view answer);

/// The answer of a server that does not serve clients yet (starting, or
/// cut off from its quorum): "This ZooKeeper instance is not currently
/// serving requests".
bool not_serving(std::string_view answer);

/// The "auth" line, by the rule every kind follows: no authentication is a
/// note (any client of the ensemble can change the election's nodes: keep
/// the client port private); a password sent over a plaintext connection is
/// a hazard, and digest credentials always are (the C client has no TLS).
check_line auth_line(const std::string& username);

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

/// The line of one server's `conf` answer: its figures (a note), or why
/// there are none (a refused word, no tickTime).
check_line conf_line(std::string_view answer);

/// The window alone, for a server whose conf gave tickTime and syncLimit.
check_line weigh_stale_follower_window(std::int64_t tick_ms, std::int64_t sync_limit,
                                       const lease_timing& timing);

/// The stale-follower window of the whole ensemble, one line whatever the
/// number of servers: the longest syncLimit * tickTime among the `conf`
/// answers that gave both (nullopt: the server's conf is unknown). With
/// fewer than three servers listed it is weighed by
/// weigh_stale_follower_window (a leader's session cannot leave the
/// follower); with more, a leader's session leaves a follower that answers
/// no write (stall_line), and the window only says how late a standby may
/// read. A note when no conf gave them (standalone, or conf refused or
/// unanswered).
check_line stale_follower_line(const std::vector<std::optional<server_conf>>& confs,
                               const lease_timing& timing, std::size_t servers_listed);

/// How long one server may stall (a GC pause, a stalled VM) without ending
/// a term: with three servers or more listed, the store leaves a server that
/// answers nothing for `command_timeout` and the session goes on elsewhere,
/// so any length, if the move and the renewal's retry (renew_interval / 4
/// later) fit the renewals' room (renew_deadline - renew_interval); with
/// fewer, a stall shorter than that room.
check_line stall_line(const lease_timing& timing, milliseconds command_timeout,
                      std::size_t servers_listed);

}  // namespace baton::zookeeper_detail
