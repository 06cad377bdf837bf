// What `resign --wait` and `switchover --wait` share: poll the daemon's
// status until the leader it knows is one the caller waits for. The poll
// reuses the one connection, so a daemon that goes away is noticed at the
// next request.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "baton/time.hpp"
#include "daemon_client.hpp"

namespace baton::cli {

/// Polls every resign_poll_interval until `wanted(leader)` holds for the
/// status's "leader", then prints "new leader: NODE (token N)" and returns
/// exit_ok; exit_no_successor with `gave_up` on `err` at `deadline`;
/// exit_failure when the daemon goes away or answers an error.
int wait_for_leader(daemon_client& client, const std::function<bool(const std::string&)>& wanted,
                    time_point deadline, const std::string& gave_up, std::ostream& out,
                    std::ostream& err);

}  // namespace baton::cli
