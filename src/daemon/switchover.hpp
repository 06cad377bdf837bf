// The socket command `switchover`: the leader hands over to a named node,
// {"cmd":"switchover","to":"NODE","window_ms":N,"force":B}. What the request
// says, the candidates as the leader knows them (the store's list, which the
// leader refreshes with every renewal) and the preemption they call for are
// pure functions here, unit-tested without a daemon; whether the target may
// take the lease is switchover_vetting's; the driver carries the step down
// out through the machine.
#pragma once

#include <map>
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
  /// When this node first saw each listed candidate in an unbroken run of
  /// listings: how long it has been live when the store cannot tell.
  std::map<std::string, time_point> first_seen;

  /// Takes a new listing made at `now`.
  void update(std::vector<candidate_info> listed, time_point now);
  /// How long `c` has been a live candidate: the store's figure when it has
  /// one, else since this node first saw it.
  milliseconds live_for(const candidate_info& c, time_point now) const;
};

struct switchover_request {
  std::string to;
  milliseconds window{0};
  /// Hand over even to a node that a live candidate outranks.
  bool force = false;
};

/// The request's target ("to": a non-empty string of at most 256 bytes) and
/// window ("window_ms": a positive integer up to `max_window`, or absent for
/// `default_window`), and "force" (true or false; absent = false). Throws
/// std::runtime_error naming the field.
switchover_request parse_switchover_request(const nlohmann::json& request,
                                            milliseconds default_window, milliseconds max_window);

/// A leader's preemption: the candidate it should hand over to, if any. The
/// highest priority above `own_priority` among the eligible candidates
/// (candidate_card.hpp; not `self`)
/// live for at least `preempt_delay` (the longest-lived, then the smallest
/// node id, among equals). A candidate of equal priority never preempts, so
/// two equals cannot hand leadership back and forth. None while this node
/// has led for less than `settle` (preempt_delay and the cool-down after a
/// hand-over, the longer): a switchover to a node of a lower priority, or a
/// crash takeover by one, is not undone at once, and the node it would hand
/// back to has ended its own cool-down (it would not take the lease in it).
std::optional<candidate_info> preemption_target(const candidate_snapshot& known,
                                                const std::string& self, int own_priority,
                                                milliseconds preempt_delay, milliseconds led_for,
                                                milliseconds settle, time_point now);

/// The "candidates" of the status: node, priority, standing (eligible,
/// drained, never; null with a "card_error" for a card this version cannot
/// read), advertise (null = none), live_for_ms,
/// last_attempt_ms_ago and cooling_down_ms of each (null where the store
/// cannot tell; as of the listing), this node's first, then by node id; null
/// when never listed.
nlohmann::json candidates_report(const candidate_snapshot& known, const std::string& self);

/// Where clients reach `leader`'s service: `own_advertise` when the leader is
/// `self`, else the advertise address its registration publishes in `known`
/// ("" = unknown: no leader known, none published, or not listed yet).
std::string leader_advertise(const std::string& leader, const std::string& self,
                             const std::string& own_advertise, const candidate_snapshot& known);

}  // namespace baton
