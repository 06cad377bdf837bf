#include "message_form.hpp"

#include <array>

namespace baton::peer_wire_detail {
namespace {

using peer_wire::kind;

constexpr std::array<std::pair<kind, std::string_view>, 6> kind_names{{
    {kind::confirm, "confirm"},
    {kind::confirmed, "confirmed"},
    {kind::refused, "refused"},
    {kind::clear, "clear"},
    {kind::cleared, "cleared"},
    {kind::held, "held"},
}};

// The config's rules for an election name and a node id
// (src/config/validate.cpp): a message names nothing a config could not.
bool name_chars(std::string_view s, bool allow_at) {
  for (const char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || (allow_at && c == '@');
    if (!ok) return false;
  }
  return true;
}

std::optional<std::string> node_problem(std::string_view field, std::string_view value) {
  if (value.empty() || value.size() > 128 || !name_chars(value, true)) {
    return "\"" + std::string(field) + "\" must be 1 to 128 characters from A-Z a-z 0-9 . _ @ -";
  }
  return std::nullopt;
}

bool printable(std::string_view s) {
  for (const char c : s) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

void add_field(std::string& text, std::string_view name, std::string_view value) {
  text.append(name);
  text.push_back(' ');
  text.append(std::to_string(value.size()));
  text.push_back(':');
  text.append(value);
  text.push_back('\n');
}

}  // namespace

std::optional<kind> kind_from_name(std::string_view name) {
  for (const auto& [k, spelled] : kind_names) {
    if (spelled == name) return k;
  }
  return std::nullopt;
}

bool carries_ms(kind k) {
  return k == kind::confirmed || k == kind::held;
}
bool carries_reason(kind k) {
  return k == kind::refused || k == kind::held;
}

std::optional<std::string> form_problem(const peer_wire::message& m) {
  if (m.election.empty() || m.election.size() > 64 || !name_chars(m.election, false)) {
    return "\"election\" must be 1 to 64 characters from A-Z a-z 0-9 . _ -";
  }
  if (auto p = node_problem("from", m.from)) return p;
  if (auto p = node_problem("to", m.to)) return p;
  if (m.from == m.to) return "\"from\" and \"to\" name the same node";
  if (auto p = node_problem("leader", m.leader)) return p;
  if (m.token == 0) return "\"token\" must be a term's token, above 0";
  if (m.nonce.size() != 32 || m.nonce.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return "\"nonce\" must be 32 lowercase hex digits";
  }
  if (!carries_ms(m.what) && m.ms != 0) {
    return "a " + std::string(peer_wire::kind_name(m.what)) + " carries no \"ms\"";
  }
  if (m.what == kind::confirmed && m.ms == 0) return "a confirmed answer promises more than 0 ms";
  if (!carries_reason(m.what) && !m.reason.empty()) {
    return "a " + std::string(peer_wire::kind_name(m.what)) + " carries no \"reason\"";
  }
  if (m.what == kind::refused && m.reason.empty()) return "a refused answer gives a reason";
  if (m.reason.size() > peer_wire::max_reason_bytes || !printable(m.reason)) {
    return "\"reason\" must be at most " + std::to_string(peer_wire::max_reason_bytes) +
           " printable ASCII characters";
  }
  return std::nullopt;
}

std::string signing_text(const peer_wire::message& m) {
  std::string text = "baton-peer/1\n";
  add_field(text, "kind", peer_wire::kind_name(m.what));
  add_field(text, "election", m.election);
  add_field(text, "from", m.from);
  add_field(text, "to", m.to);
  add_field(text, "leader", m.leader);
  add_field(text, "token", std::to_string(m.token));
  add_field(text, "nonce", m.nonce);
  add_field(text, "sent_ms", std::to_string(m.sent_ms));
  add_field(text, "ms", std::to_string(m.ms));
  add_field(text, "reason", m.reason);
  return text;
}

}  // namespace baton::peer_wire_detail

namespace baton::peer_wire {

std::string_view kind_name(kind k) {
  for (const auto& [each, spelled] : peer_wire_detail::kind_names) {
    if (each == k) return spelled;
  }
  return "unknown";
}

bool is_request(kind k) {
  return k == kind::confirm || k == kind::clear;
}

bool answers(const message& request, const message& answer) {
  const bool kind_fits =
      (request.what == kind::confirm &&
       (answer.what == kind::confirmed || answer.what == kind::refused)) ||
      (request.what == kind::clear &&
       (answer.what == kind::cleared || answer.what == kind::held || answer.what == kind::refused));
  return kind_fits && answer.election == request.election && answer.from == request.to &&
         answer.to == request.from && answer.leader == request.leader &&
         answer.token == request.token && answer.nonce == request.nonce &&
         answer.sent_ms == request.sent_ms;
}

std::optional<std::string> peer_address_problem(std::string_view address) {
  const std::string allowed = "must be HOST:PORT ([IPv6]:PORT), printable, without white space";
  if (address.empty() || address.size() > 255) return allowed + ", at most 255 bytes";
  for (const char c : address) {
    if (c <= ' ' || c > '~') return allowed;
  }
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return allowed;
  const std::string_view host = address.substr(0, colon);
  if (host.front() == '[' && (host.size() < 3 || host.back() != ']')) return allowed;
  const std::string_view port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5) return "its port " + std::string(port) + " must be 1 to 65535";
  unsigned value = 0;
  for (const char c : port) {
    if (c < '0' || c > '9') return "its port " + std::string(port) + " must be 1 to 65535";
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value == 0 || value > 65535) return "its port " + std::string(port) + " must be 1 to 65535";
  return std::nullopt;
}

std::optional<std::string> secret_problem(std::string_view secret) {
  if (secret.size() < min_secret_bytes) {
    return "the peer secret is shorter than " + std::to_string(min_secret_bytes) +
           " bytes (e.g. `openssl rand -hex 32`)";
  }
  if (secret.size() > 1024) return "the peer secret is longer than 1024 bytes";
  return std::nullopt;
}

}  // namespace baton::peer_wire
