// Builders of the socket events. Every event has "type":"event", an "event"
// name, a sequence number, the monotonic time, and the node; times that an app
// may act on are given both as CLOCK_MONOTONIC nanoseconds (absolute, immune to
// a stalled reader) and as milliseconds remaining when sent.
#include "app_messages.hpp"

#include <algorithm>

namespace baton {

std::int64_t mono_ns(time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::int64_t remaining_ms(time_point t, time_point now) {
  return std::max<std::int64_t>(
      0, std::chrono::duration_cast<milliseconds>(t - now).count());
}

namespace {

nlohmann::json base(const event_header& h, const char* name) {
  return {{"type", "event"},        {"event", name},          {"seq", h.seq},
          {"mono_ns", mono_ns(h.now)}, {"node_id", h.node_id}, {"election", h.election}};
}

}  // namespace

nlohmann::json state_event(const event_header& h, const transition& t, std::uint64_t token) {
  auto e = base(h, "state");
  e["from"] = to_string(t.from);
  e["to"] = to_string(t.to);
  e["reason"] = to_string(t.why);
  if (!t.detail.empty()) e["detail"] = t.detail;
  e["token"] = token;
  return e;
}

nlohmann::json start_event(const event_header& h, const actions::start_app& a) {
  auto e = base(h, "start");
  e["reason"] = to_string(a.why);
  e["token"] = a.token;
  e["valid_until_mono_ns"] = mono_ns(a.valid_until);
  e["lease_remaining_ms"] = remaining_ms(a.valid_until, h.now);
  return e;
}

nlohmann::json stop_event(const event_header& h, const actions::stop_app& a, bool ack_required) {
  auto e = base(h, "stop");
  e["reason"] = to_string(a.why);
  e["token"] = a.token;
  e["kill_at_mono_ns"] = mono_ns(a.kill_at);
  e["stop_within_ms"] = remaining_ms(a.kill_at, h.now);
  e["ack_required"] = ack_required;
  return e;
}

nlohmann::json renewed_event(const event_header& h, const actions::lease_extended& a,
                             std::uint64_t token) {
  auto e = base(h, "renewed");
  e["token"] = token;
  e["valid_until_mono_ns"] = mono_ns(a.valid_until);
  e["lease_remaining_ms"] = remaining_ms(a.valid_until, h.now);
  e["stopping"] = a.stopping;
  return e;
}

nlohmann::json kill_event(const event_header& h, std::uint64_t token) {
  auto e = base(h, "kill");
  e["token"] = token;
  return e;
}

}  // namespace baton
