// What `resign` and `switchover` share: the command sent to the leader and
// its answer sorted, then, with --wait, the daemon's status polled until the
// leader it knows is one the caller waits for. The poll reuses the one
// connection, so a daemon that goes away is noticed at the next request.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <variant>

#include "baton/time.hpp"
#include "daemon_client.hpp"

namespace baton::cli {

struct client_settings;

/// Each request's bound: --timeout, or with --wait (where --timeout is the
/// wait) the usual one if shorter.
milliseconds request_timeout_of(const client_settings& settings);

/// Connects `client`, sends `request` (its "cmd" is the reply's expected
/// type) and answers the reply's object; or, with the line said on `err`,
/// the exit code: exit_not_leader for "not the leader ...", exit_failure for
/// an unreachable daemon or another error (`refused` introduces it: "the
/// daemon refused to resign").
std::variant<nlohmann::json, int> ask_leader(daemon_client& client, const nlohmann::json& request,
                                             time_point deadline, const std::string& refused,
                                             std::ostream& err);

/// Polls every resign_poll_interval until `wanted(leader)` holds for the
/// status's "leader", then prints "new leader: NODE (token N)" and returns
/// exit_ok; exit_no_successor with `gave_up` on `err` at `deadline`;
/// exit_failure when the daemon goes away or answers an error.
int wait_for_leader(daemon_client& client, const std::function<bool(const std::string&)>& wanted,
                    time_point deadline, const std::string& gave_up, std::ostream& out,
                    std::ostream& err);

}  // namespace baton::cli
