// The socket command `switchover`: the leader hands over to a named node,
// {"cmd":"switchover","to":"NODE","window_ms":N}. What the request says, and
// whether the target is a live candidate (the store's list, which the leader
// refreshes with every renewal), are pure functions here, unit-tested without
// a daemon; the driver carries the step down out through the machine.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "baton/lease_store.hpp"
#include "baton/time.hpp"

namespace baton {

/// The election's candidates as this node last heard them from its store.
struct candidate_snapshot {
  std::vector<candidate_info> list;
  std::optional<time_point> at;  ///< when the store answered; nullopt = never
  std::string error;             ///< why the last listing failed ("" = it did not)
};

struct switchover_request {
  std::string to;
  milliseconds window{0};
};

/// The request's target ("to": a non-empty string of at most 256 bytes) and
/// window ("window_ms": a positive integer up to `max_window`, or absent for
/// `default_window`). Throws std::runtime_error naming the field.
switchover_request parse_switchover_request(const nlohmann::json& request,
                                            milliseconds default_window, milliseconds max_window);

/// Why the leader `self` must not hand over to `to` now, in words for the
/// operator ("" = it may): the target is itself, or not among the live
/// candidates of a list at most `max_age` old (a switchover to a node that
/// will not take the lease leaves the election leaderless for the window).
std::string switchover_refusal(const std::string& to, const std::string& self,
                               const candidate_snapshot& known, time_point now,
                               milliseconds max_age);

/// The "candidates" of the status: node, priority and live_for_ms of each,
/// this node's first, then by node id; null when never listed.
nlohmann::json candidates_report(const candidate_snapshot& known, const std::string& self);

}  // namespace baton
