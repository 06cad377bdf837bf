// The status object behind `baton status`, the socket's status reply and
// /status: a pure function of the machine, the store's own status and what
// the driver counted, so it is tested without a daemon.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "baton/election_machine.hpp"
#include "baton/health.hpp"
#include "baton/lease_store.hpp"
#include "switchover.hpp"

namespace baton {

struct status_inputs {
  std::string node_id;
  std::string election;
  const election_machine* machine = nullptr;
  store_status store;
  std::optional<milliseconds> last_renew_latency;
  std::map<std::string, std::uint64_t> transitions;
  std::optional<bool> awaiting_ack;  ///< set while a stop is under way
  int keeper_pid = 0;                ///< the supervised command's keeper; 0 = none
  int command_pid = 0;               ///< the supervised command itself; 0 = none or unknown
  store_health store_answers;        ///< for the readiness verdict
  milliseconds hook_timeout{30000};  ///< hooks.timeout, for the liveness verdict
  candidate_snapshot candidates;     ///< the store's candidates as last listed
  std::string advertise;             ///< this node's advertise address ("" = none)
  /// This node's standing: eligible, drained or never (candidate_card.hpp).
  std::string standing = "eligible";
};

/// The version of the socket protocol (status fields, events, commands):
/// raised only when a change would break an existing client.
inline constexpr int socket_protocol_version = 1;

/// The JSON status at `now` (see README, "Status").
nlohmann::json status_report(const status_inputs& in, time_point now);

/// The store part of it: kind, endpoint, link, wakeups, last error (with its
/// kind and age), last reset, and members when the store has several.
nlohmann::json store_report(const store_status& s, time_point now);

}  // namespace baton
