// A peer message as one line of JSON, signed and verified (the wire in
// include/baton/peer_wire.hpp).
#include <nlohmann/json.hpp>

#include <array>
#include <set>

#include "baton/peer_wire.hpp"
#include "message_form.hpp"
#include "peer_mac.hpp"

namespace baton::peer_wire {
namespace {

using json = nlohmann::json;
using namespace peer_wire_detail;

constexpr std::uint64_t version = 1;
constexpr std::array<std::string_view, 12> members{"v",       "kind",   "election", "from",
                                                   "to",      "leader", "token",    "nonce",
                                                   "sent_ms", "ms",     "reason",   "mac"};

bool known_member(std::string_view name) {
  for (const auto m : members) {
    if (m == name) return true;
  }
  return false;
}

// A member's name for an error line: the sender chose it, so it is quoted
// only when it is one a message could have.
std::string member_text(std::string_view name) {
  return known_member(name) ? "\"" + std::string(name) + "\""
                            : "a member this version does not know";
}

decoded refuse(std::string why) {
  return {std::nullopt, std::move(why)};
}

// Reads member `name` of `object` as a string into `out`.
std::optional<std::string> read_text(const json& object, std::string_view name, std::string& out) {
  const auto it = object.find(std::string(name));
  if (it == object.end()) return "missing \"" + std::string(name) + "\"";
  if (!it->is_string()) return "\"" + std::string(name) + "\" is not a string";
  out = it->get<std::string>();
  return std::nullopt;
}

// Reads member `name` as a whole number from 0 to 2^64 - 1 into `out`.
std::optional<std::string> read_number(const json& object, std::string_view name,
                                       std::uint64_t& out) {
  const auto it = object.find(std::string(name));
  if (it == object.end()) return "missing \"" + std::string(name) + "\"";
  if (!it->is_number_unsigned()) {
    return "\"" + std::string(name) + "\" is not a whole number from 0 to 2^64-1";
  }
  out = it->get<std::uint64_t>();
  return std::nullopt;
}

}  // namespace

encoded encode(const message& m, std::string_view secret) {
  if (auto p = form_problem(m)) {
    return {"", "cannot send a " + std::string(kind_name(m.what)) + ": " + *p};
  }
  if (auto p = secret_problem(secret)) return {"", *p};
  mac_bytes mac{};
  if (auto p = hmac_sha256(secret, signing_text(m), mac)) return {"", *p};
  json object = {{"v", version},
                 {"kind", kind_name(m.what)},
                 {"election", m.election},
                 {"from", m.from},
                 {"to", m.to},
                 {"leader", m.leader},
                 {"token", m.token},
                 {"nonce", m.nonce},
                 {"sent_ms", m.sent_ms},
                 {"mac", mac_hex(mac)}};
  if (carries_ms(m.what)) object["ms"] = m.ms;
  if (carries_reason(m.what)) object["reason"] = m.reason;
  return {object.dump() + "\n", ""};
}

decoded decode(std::string_view line, std::string_view secret, std::string_view election,
               std::string_view self) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > max_line_bytes) {
    return refuse("longer than " + std::to_string(max_line_bytes) + " bytes");
  }
  if (line.find('\n') != std::string_view::npos) return refuse("more than one line");

  // Members are counted as they are parsed: nlohmann keeps the last of two
  // with the same name, and a message must mean one thing.
  std::set<std::string> seen;
  std::string twice;
  const json::parser_callback_t count_members = [&](int depth, json::parse_event_t event,
                                                    json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && parsed.is_string()) {
      const auto& name = parsed.get_ref<const std::string&>();
      if (!seen.insert(name).second && twice.empty()) twice = name;
    }
    return true;
  };
  json object;
  try {
    object = json::parse(line.begin(), line.end(), count_members);
  } catch (const json::parse_error& e) {
    return refuse("not JSON (a syntax error at byte " + std::to_string(e.byte) + ")");
  } catch (const json::exception&) {
    // A number beyond what a double holds (1e400) is out_of_range, not a
    // parse_error: found by fuzz/fuzz_peer_wire.cpp.
    return refuse("not JSON (a number too large to read)");
  }
  if (!object.is_object()) return refuse("not a JSON object");
  if (!twice.empty()) return refuse(member_text(twice) + " appears twice");
  for (const auto& [name, value] : object.items()) {
    if (!known_member(name)) return refuse("it has " + member_text(name));
  }

  std::uint64_t v = 0;
  if (auto p = read_number(object, "v", v)) return refuse(*p);
  if (v != version) {
    return refuse("version " + std::to_string(v) + ", this node speaks " + std::to_string(version));
  }
  message m;
  std::string kind_text;
  if (auto p = read_text(object, "kind", kind_text)) return refuse(*p);
  const auto k = kind_from_name(kind_text);
  if (!k) return refuse("\"kind\" is not confirm, confirmed, refused, clear, cleared or held");
  m.what = *k;
  if (auto p = read_text(object, "election", m.election)) return refuse(*p);
  if (auto p = read_text(object, "from", m.from)) return refuse(*p);
  if (auto p = read_text(object, "to", m.to)) return refuse(*p);
  if (auto p = read_text(object, "leader", m.leader)) return refuse(*p);
  if (auto p = read_number(object, "token", m.token)) return refuse(*p);
  if (auto p = read_text(object, "nonce", m.nonce)) return refuse(*p);
  if (auto p = read_number(object, "sent_ms", m.sent_ms)) return refuse(*p);
  if (carries_ms(m.what)) {
    if (auto p = read_number(object, "ms", m.ms)) return refuse(*p);
  } else if (object.contains("ms")) {
    return refuse("a " + kind_text + " carries no \"ms\"");
  }
  if (carries_reason(m.what)) {
    if (auto p = read_text(object, "reason", m.reason)) return refuse(*p);
  } else if (object.contains("reason")) {
    return refuse("a " + kind_text + " carries no \"reason\"");
  }
  if (auto p = form_problem(m)) return refuse(*p);
  std::string mac_text;
  if (auto p = read_text(object, "mac", mac_text)) return refuse(*p);
  const auto given = mac_from_hex(mac_text);
  if (!given) return refuse("\"mac\" must be 64 lowercase hex digits");

  // Authenticated before it is believed: which election and node it names
  // mean something only under the secret.
  if (auto p = secret_problem(secret)) return refuse(*p);
  mac_bytes expected{};
  if (auto p = hmac_sha256(secret, signing_text(m), expected)) return refuse(*p);
  if (!same_mac(*given, expected)) {
    return refuse("its MAC does not match: not signed with this election's peer secret");
  }
  if (m.election != election) {
    return refuse("it is for election \"" + m.election + "\", not \"" + std::string(election) +
                  "\"");
  }
  if (m.to != self) return refuse("it is addressed to \"" + m.to + "\", not to this node");
  return {std::move(m), ""};
}

}  // namespace baton::peer_wire
