// The JSON objects that apps receive over the socket: events (state changes,
// start, stop, lease renewals) and the status reply. Kept apart from the
// driver so the wire format lives in one place.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "baton/election_machine.hpp"

namespace baton {

/// What every event carries besides its own fields.
struct event_header {
  std::uint64_t seq;    ///< 1, 2, 3... per daemon run, so gaps are visible
  time_point now;       ///< when it happened (CLOCK_MONOTONIC)
  std::string node_id;
  std::string election;
};

/// Nanoseconds on CLOCK_MONOTONIC, which co-located processes share.
std::int64_t mono_ns(time_point t);
/// Milliseconds from `now` until `t`, 0 when past.
std::int64_t remaining_ms(time_point t, time_point now);

nlohmann::json state_event(const event_header& h, const transition& t, std::uint64_t token);
nlohmann::json start_event(const event_header& h, const actions::start_app& a);
/// `ack_required`: the daemon waits for {"cmd":"stopped","token":N} before
/// releasing (socket.require_ack).
nlohmann::json stop_event(const event_header& h, const actions::stop_app& a, bool ack_required);
/// `stopping`: the lease is only kept while the app stops; not a reason to work.
nlohmann::json renewed_event(const event_header& h, const actions::lease_extended& a,
                             std::uint64_t token);
nlohmann::json kill_event(const event_header& h, std::uint64_t token);

}  // namespace baton
