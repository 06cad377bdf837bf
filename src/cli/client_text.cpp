// Text for people from the daemon's JSON. Field names follow the daemon's
// status object and event builders (src/daemon/app_messages.cpp).
#include "client_text.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <utility>
#include <vector>

namespace baton::cli {
namespace {

using json = nlohmann::json;

const json* field(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// "web-1 (this node), token 42", "web-2", "none known".
std::string leader_text(const json& status) {
  auto leader = string_field(status, "leader");
  if (!leader) return "none known";
  std::string text = printable(*leader);
  if (leader == string_field(status, "node_id")) text += " (this node)";
  if (auto token = int_field(status, "token"); token && *token > 0) {
    text += ", token " + std::to_string(*token);
  }
  if (auto address = string_field(status, "leader_advertise")) {
    text += ", at " + printable(*address);
  }
  return text;
}

std::string state_text(const json& status) {
  std::string text = printable(string_field(status, "state").value_or("unknown"));
  // The state's own age restarts with every renewal; the term's does not.
  if (auto leading = int_field(status, "leading_for_ms")) {
    return text + ", leading for " + human_duration(*leading);
  }
  if (auto since = int_field(status, "since_ms")) text += " for " + human_duration(*since);
  return text;
}

std::string health_text(const json& status) {
  if (auto health = string_field(status, "health")) return printable(*health);
  if (auto healthy = bool_field(status, "healthy")) return *healthy ? "ok" : "unhealthy";
  return "";
}

// "" from a daemon that reports no readiness of its own.
std::string readiness_text(const json& status) {
  if (auto readiness = string_field(status, "readiness")) return printable(*readiness);
  if (auto ready = bool_field(status, "ready")) return *ready ? "ok" : "not ready";
  return "";
}

using rows = std::vector<std::pair<std::string, std::string>>;

// "web-a (this node), web-b (priority 2, live 31s)": the status's
// candidates, as the store listed them.
std::string candidates_text(const json& candidates, const std::string& self) {
  std::string text;
  for (const auto& c : candidates) {
    if (!c.is_object()) continue;
    const auto node = string_field(c, "node").value_or("?");
    std::vector<std::string> notes;
    if (node == self) notes.emplace_back("this node");
    if (auto priority = int_field(c, "priority"); priority && *priority != 0) {
      notes.push_back("priority " + std::to_string(*priority));
    }
    if (auto standing = string_field(c, "standing"); standing && *standing != "eligible") {
      notes.push_back(*standing == "never" ? std::string("never leads") : printable(*standing));
    } else if (string_field(c, "card_error")) {
      notes.emplace_back("unreadable card");
    }
    if (auto live = int_field(c, "live_for_ms"); live && node != self) {
      notes.push_back("live " + human_duration(*live));
    }
    std::string one = printable(node);
    for (std::size_t i = 0; i < notes.size(); ++i) one += (i == 0 ? " (" : ", ") + notes[i];
    if (!notes.empty()) one += ")";
    text += (text.empty() ? "" : ", ") + one;
  }
  return text.empty() ? "none" : text;
}

// lease.failsafe peers: whether this leader runs on its peers' confirmations
// (since when, and how many of how many confirmed its last round); a
// standby's promise not to take the lease, or the term it is clearing; else
// that the mode is on. Then where the peer port is.
std::string failsafe_text(const json& failsafe, bool leader) {
  std::string text;
  const auto term_of = [](const json& term) {
    return printable(string_field(term, "leader").value_or("?")) + "'s term" +
           (int_field(term, "token") ? " " + std::to_string(*int_field(term, "token")) : "");
  };
  const json* promise = field(failsafe, "promise");
  const json* clearing = field(failsafe, "clearing");
  if (bool_field(failsafe, "on_confirmations").value_or(false)) {
    text = "leading on peer confirmations";
    if (auto since = int_field(failsafe, "on_confirmations_for_ms")) {
      text += " for " + human_duration(*since);
    }
    const auto confirmed = int_field(failsafe, "round_confirmed");
    const auto asked = int_field(failsafe, "round_asked");
    if (confirmed && asked) {
      text += ": " + std::to_string(*confirmed) + " of " + std::to_string(*asked) +
              " peers confirmed the last round";
    }
  } else if (promise != nullptr && promise->is_object()) {
    text = "confirmed " + term_of(*promise);
    if (auto left = int_field(*promise, "remaining_ms")) {
      text += ": takes no lease for another " + human_duration(*left);
    }
  } else if (clearing != nullptr && clearing->is_object()) {
    text = "clearing " + term_of(*clearing) + " with its peers before taking the lease";
  } else {
    text = printable(string_field(failsafe, "mode").value_or("peers")) +
           (leader ? ": not needed while the store answers" : "");
  }
  if (auto address = string_field(failsafe, "peer_address"); address && !address->empty()) {
    text += " (peer port " + printable(*address) + ")";
  }
  if (auto refused = int_field(failsafe, "refused_requests"); refused && *refused > 0) {
    text += ", " + std::to_string(*refused) + " peer requests refused";
  }
  return text;
}

rows status_rows(const json& status) {
  rows r;
  r.emplace_back("node", printable(string_field(status, "node_id").value_or("?")));
  if (auto election = string_field(status, "election"))
    r.emplace_back("election", printable(*election));
  r.emplace_back("state", state_text(status));
  r.emplace_back("leader", leader_text(status));
  if (auto standing = string_field(status, "standing"); standing && *standing != "eligible") {
    r.emplace_back("standing", *standing == "drained"
                                   ? std::string("drained: takes no lease until `baton undrain`")
                               : *standing == "never" ? std::string("never leads (never_lead)")
                                                      : printable(*standing));
  }

  std::string lease;
  if (auto left = int_field(status, "lease_remaining_ms")) lease = human_duration(*left) + " left";
  if (auto ago = int_field(status, "last_renewal_ms_ago")) {
    lease += (lease.empty() ? "" : ", ") + std::string("renewed ") + human_duration(*ago) + " ago";
  }
  if (auto latency = int_field(status, "last_renew_latency_ms")) {
    lease +=
        (lease.empty() ? "" : ", ") + std::string("last renewal took ") + human_duration(*latency);
  }
  if (!lease.empty()) r.emplace_back("lease", lease);
  if (const json* failsafe = field(status, "failsafe");
      failsafe != nullptr && failsafe->is_object()) {
    r.emplace_back("failsafe",
                   failsafe_text(*failsafe, bool_field(status, "is_leader").value_or(false)));
  }
  if (auto cooldown = int_field(status, "cooldown_remaining_ms"); cooldown && *cooldown > 0) {
    r.emplace_back("cooldown", "out of the election for another " + human_duration(*cooldown));
  }
  if (auto to = string_field(status, "switchover_to")) {
    r.emplace_back("handover", "stepping down for " + printable(*to));
  }
  if (auto reserved = string_field(status, "reserved_for")) {
    r.emplace_back("reserved", "the lease waits for " + printable(*reserved) + " (a switchover)");
  }
  if (const json* candidates = field(status, "candidates");
      candidates != nullptr && candidates->is_array()) {
    r.emplace_back("nodes",
                   candidates_text(*candidates, string_field(status, "node_id").value_or("")));
  } else if (candidates != nullptr && candidates->is_null()) {
    r.emplace_back("nodes", "not listed yet: the store is being asked (ask again)");
  }
  if (auto held = int_field(status, "held_back_remaining_ms"); held && *held > 0) {
    std::string text = "held back: the store grants no lease for another " + human_duration(*held);
    if (auto why = string_field(status, "held_back_why"); why && !why->empty()) {
      text += " (" + printable(*why) + ")";
    }
    r.emplace_back("waiting", text);
  }
  const json* store = field(status, "store");
  if (store != nullptr && !store->is_object()) store = nullptr;
  if (auto redis = string_field(status, "redis")) {
    std::string text = printable(*redis);
    if (auto reset = string_field(status, "redis_reset"); reset && !reset->empty()) {
      text += " (last reset: " + printable(*reset) + ")";
    }
    r.emplace_back("redis", text);
  } else if (store != nullptr) {
    // Stores other than Redis have no Redis-era fields: name the kind.
    std::string text = printable(string_field(*store, "kind").value_or("store")) + " " +
                       printable(string_field(*store, "link").value_or("?"));
    // Where a located master was found ("master NAME via 3 sentinels, at
    // 10.0.0.5:6379"): the endpoint says more than the kind then.
    if (auto endpoint = string_field(*store, "endpoint");
        endpoint && endpoint->find(" via ") != std::string::npos) {
      text += " (" + printable(*endpoint) + ")";
    }
    if (auto reset = string_field(*store, "last_reset"); reset && !reset->empty()) {
      text += " (last reset: " + printable(*reset) + ")";
    }
    r.emplace_back("store", text);
  }
  // A quorum's masters, one row each: whether it is reached, holds our
  // lease, held grants back, and its last error.
  if (const json* members = store != nullptr ? field(*store, "members") : nullptr;
      members != nullptr && members->is_array()) {
    for (const auto& m : *members) {
      if (!m.is_object()) continue;
      std::string text = printable(string_field(m, "endpoint").value_or("?")) + " " +
                         printable(string_field(m, "link").value_or("?"));
      if (bool_field(m, "holds_lease").value_or(false)) text += ", holds our lease";
      if (auto fence = string_field(m, "fence"); fence && !fence->empty()) {
        text += ", fenced (" + printable(*fence) + ")";
      }
      if (auto error = string_field(m, "last_error"); error && !error->empty()) {
        text += ", last error: " + printable(*error);
      }
      r.emplace_back(printable(string_field(m, "role").value_or("master")), text);
    }
  }
  if (store != nullptr) {
    if (auto error = string_field(*store, "last_error"); error && !error->empty()) {
      std::string text = printable(*error);
      if (auto ago = int_field(*store, "last_error_ago_ms")) {
        text += " (" + human_duration(*ago) + " ago)";
      }
      r.emplace_back("error", text);
    }
  }
  // child_pid is the keeper (the process group); command_pid the command.
  if (auto command = int_field(status, "command_pid")) {
    std::string text = "pid " + std::to_string(*command);
    if (auto keeper = int_field(status, "child_pid"))
      text += " (keeper pid " + std::to_string(*keeper) + ")";
    r.emplace_back("child", text);
  } else if (auto pid = int_field(status, "child_pid")) {
    r.emplace_back("child", "pid " + std::to_string(*pid));
  }
  if (auto awaiting = bool_field(status, "awaiting_ack")) {
    r.emplace_back("stopping",
                   *awaiting ? "waiting for the app's acknowledgement" : "stopping the app");
  }
  if (auto health = health_text(status); !health.empty()) r.emplace_back("health", health);
  if (auto readiness = readiness_text(status); !readiness.empty()) {
    r.emplace_back("ready", readiness);
  }
  if (const json* transitions = field(status, "transitions");
      transitions != nullptr && transitions->is_object() && !transitions->empty()) {
    std::string text;
    for (const auto& [name, count] : transitions->items()) {
      text += (text.empty() ? "" : ", ") + printable(name) + " " +
              (count.is_number_integer() ? std::to_string(count.get<std::int64_t>())
                                         : printable(dump(count)));
    }
    r.emplace_back("history", text);
  }
  return r;
}

}  // namespace

std::optional<std::string> string_field(const json& object, const char* key) {
  const json* value = field(object, key);
  if (value == nullptr || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}

std::optional<std::int64_t> int_field(const json& object, const char* key) {
  const json* value = field(object, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_number_unsigned()) {
    auto u = value->get<std::uint64_t>();
    return u > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(u);
  }
  if (value->is_number_integer()) return value->get<std::int64_t>();
  if (value->is_number_float()) {
    double d = value->get<double>();
    if (!(d > -9.2e18 && d < 9.2e18)) return std::nullopt;  // also rejects NaN
    return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

std::optional<bool> bool_field(const json& object, const char* key) {
  const json* value = field(object, key);
  if (value == nullptr || !value->is_boolean()) return std::nullopt;
  return value->get<bool>();
}

std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return out;
}

std::string human_duration(std::int64_t ms) {
  if (ms < 0) ms = 0;
  char text[64];
  if (ms < 1000) {
    std::snprintf(text, sizeof text, "%lldms", static_cast<long long>(ms));
    return text;
  }
  const std::int64_t tenths = (ms + 50) / 100;
  if (tenths < 600) {
    std::snprintf(text, sizeof text, "%lld.%llds", static_cast<long long>(tenths / 10),
                  static_cast<long long>(tenths % 10));
    return text;
  }
  const std::int64_t seconds = (ms + 500) / 1000;
  if (seconds < 3600) {
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(seconds / 60),
                  static_cast<long long>(seconds % 60));
    return text;
  }
  const std::int64_t minutes = (ms + 30'000) / 60'000;
  std::snprintf(text, sizeof text, "%lldh%02lldm", static_cast<long long>(minutes / 60),
                static_cast<long long>(minutes % 60));
  return text;
}

std::string status_table(const json& status) {
  const rows r = status_rows(status);
  std::size_t width = 0;
  for (const auto& row : r) width = std::max(width, row.first.size());
  std::string text;
  for (const auto& [label, value] : r) {
    text += label + std::string(width + 2 - label.size(), ' ') + value + '\n';
  }
  return text;
}

std::string status_line(const json& status) {
  std::string text = "node " + printable(string_field(status, "node_id").value_or("?"));
  if (auto election = string_field(status, "election"))
    text += ", election " + printable(*election);
  text += ", state " + state_text(status) + ", leader " + leader_text(status);
  if (auto health = health_text(status); !health.empty() && health != "ok") {
    text += ", health " + health;
  }
  if (auto readiness = readiness_text(status); !readiness.empty() && readiness != "ok") {
    text += ", not ready: " + readiness;
  }
  return text;
}

std::string event_text(const json& event) {
  const std::string type = string_field(event, "type").value_or("");
  if (type == "error") return "error: " + printable(string_field(event, "error").value_or("?"));
  if (type == "status") return "status: " + status_line(event);
  if (type != "event") return "message " + printable(dump(event));

  const std::string name = printable(string_field(event, "event").value_or("?"));
  const std::string reason = printable(string_field(event, "reason").value_or("?"));
  const auto token = int_field(event, "token");
  const std::string token_text = token ? "token " + std::to_string(*token) : "no token";
  std::string text;
  if (name == "state") {
    text = "state " + printable(string_field(event, "from").value_or("?")) + " -> " +
           printable(string_field(event, "to").value_or("?")) + " (" + reason;
    if (auto detail = string_field(event, "detail"); detail && !detail->empty()) {
      text += ": " + printable(*detail);
    }
    text += ")";
  } else if (name == "start") {
    text = "start " + token_text + " (" + reason + ")";
    if (auto left = int_field(event, "lease_remaining_ms")) {
      text += ", lease valid " + human_duration(*left);
    }
  } else if (name == "renewed") {
    text = "renewed";
    if (auto left = int_field(event, "lease_remaining_ms")) {
      text += ", lease valid " + human_duration(*left);
    }
    if (bool_field(event, "stopping").value_or(false)) text += ", stopping";
  } else if (name == "stop") {
    text = "stop (" + reason + ")";
    if (auto within = int_field(event, "stop_within_ms")) {
      text += ", kill in " + std::to_string(*within) + "ms";
    }
    if (bool_field(event, "ack_required").value_or(false)) text += ", waiting for an ack";
  } else if (name == "kill") {
    text = "kill " + token_text;
  } else {
    // An event this client does not know yet: show its own fields.
    json rest = event;
    for (const char* common : {"type", "event", "seq", "mono_ns", "node_id", "election"}) {
      rest.erase(common);
    }
    text = name + (rest.empty() ? "" : " " + printable(dump(rest)));
  }
  return text;
}

std::string clock_time_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm local{};
  ::localtime_r(&seconds, &local);
  char text[32];
  std::snprintf(text, sizeof text, "%02d:%02d:%02d.%03d", local.tm_hour, local.tm_min, local.tm_sec,
                static_cast<int>(ms));
  return text;
}

std::string plain_error(const std::string& text) {
  static constexpr std::string_view tag = "[json.exception.";
  const auto at = text.find(tag);
  if (at == std::string::npos) return text;
  std::string before = text.substr(0, at);
  const bool parse_error = text.compare(at + tag.size(), 11, "parse_error") == 0;
  const auto close = text.find("] ", at);
  std::string after = close == std::string::npos ? std::string() : text.substr(close + 2);
  if (parse_error) {
    // "invalid JSON: [json.exception.parse_error.101] parse error at ..."
    while (!before.empty() && (before.back() == ' ' || before.back() == ':')) before.pop_back();
    return before.empty() ? "the line is not valid JSON" : before;
  }
  return before + after;
}

std::string daemon_error_text(const nlohmann::json& reply) {
  return printable(
      plain_error(string_field(reply, "error").value_or("an error without a message")));
}

std::optional<std::string> leader_line(const json& status) {
  auto leader = string_field(status, "leader");
  if (!leader) return std::nullopt;
  std::string text = printable(*leader);
  if (auto token = int_field(status, "token"); token && *token > 0) {
    text += " token " + std::to_string(*token);
  }
  if (auto address = string_field(status, "leader_advertise")) text += " " + printable(*address);
  return text;
}

json leader_object(const json& status) {
  auto leader = string_field(status, "leader");
  if (!leader) return nullptr;
  json out{{"node", *leader}, {"token", nullptr}, {"advertise", nullptr}};
  if (auto token = int_field(status, "token"); token && *token > 0) out["token"] = *token;
  if (auto address = string_field(status, "leader_advertise")) out["advertise"] = *address;
  return out;
}

}  // namespace baton::cli
