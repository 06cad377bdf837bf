#include "failsafe_record.hpp"

#include <charconv>
#include <cstdio>

namespace baton::etcd_detail {
namespace {

std::optional<std::uint64_t> decimal(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split(std::string_view text, char at) {
  std::vector<std::string_view> parts;
  for (std::size_t from = 0;;) {
    const auto next = text.find(at, from);
    parts.push_back(text.substr(from, next == std::string_view::npos ? next : next - from));
    if (next == std::string_view::npos) break;
    from = next + 1;
  }
  return parts;
}

std::string or_dash(std::string_view s) {
  return s.empty() ? std::string("-") : std::string(s);
}

std::string from_dash(std::string_view s) {
  return s == "-" ? std::string() : std::string(s);
}

}  // namespace

const char* const failsafe_abstained_why =
    "registered only: this node may not take the lease yet (lease.failsafe peers)";

std::string failsafe_seq_text(std::uint64_t seq) {
  char digits[24];
  std::snprintf(digits, sizeof digits, "%020llu", static_cast<unsigned long long>(seq));
  return digits;
}

std::string failsafe_record_value(std::uint64_t seq, std::string_view token, std::string_view value,
                                  std::string_view address,
                                  const std::vector<failsafe_peer>& peers) {
  std::string text = failsafe_seq_text(seq) + " " + std::string(token) + " " + std::string(value) +
                     " " + or_dash(address);
  for (const auto& p : peers) text += "\n" + p.node + " " + or_dash(p.address);
  return text;
}

std::optional<failsafe_record> read_failsafe_record(const key_value& kv) {
  const auto lines = split(kv.value, '\n');
  const auto head = split(lines[0], ' ');
  if (head.size() != 4 || head[2].empty() || head[3].empty()) return std::nullopt;
  failsafe_record r;
  const auto seq = decimal(head[0]);
  if (!seq) return std::nullopt;
  r.seq = *seq;
  if (head[1].starts_with('+')) {
    // A grant's: its offset plus the revision it was written at.
    const auto offset = decimal(head[1].substr(1));
    if (!offset || kv.mod_revision <= 0) return std::nullopt;
    r.token = *offset + static_cast<std::uint64_t>(kv.mod_revision);
  } else {
    const auto token = decimal(head[1]);
    if (!token) return std::nullopt;
    r.token = *token;
  }
  if (r.token == 0) return std::nullopt;
  r.value = std::string(head[2]);
  r.address = from_dash(head[3]);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto peer = split(lines[i], ' ');
    if (peer.size() != 2 || peer[0].empty() || peer[1].empty()) return std::nullopt;
    r.peers.push_back({std::string(peer[0]), from_dash(peer[1])});
  }
  return r;
}

compare failsafe_seq_below(const std::string& key, std::uint64_t seq) {
  return compare{key, "VALUE", 0, failsafe_seq_text(seq), "LESS"};
}

std::optional<failsafe_hold_info> failsafe_hold_of(const std::optional<failsafe_record>& record,
                                                   const std::vector<registered_promise>& promises,
                                                   std::string_view own_value,
                                                   std::string_view own_node,
                                                   std::uint64_t cleared) {
  if (record && record->value != own_value && record->token > cleared) {
    failsafe_hold_info hold;
    const auto colon = record->value.rfind(':');
    hold.leader = colon == std::string::npos ? record->value : record->value.substr(0, colon);
    hold.token = record->token;
    hold.leader_address = record->address;
    hold.peers = record->peers;
    return hold;
  }
  std::optional<failsafe_hold_info> hold;
  for (const auto& p : promises) {
    if (p.token <= cleared || p.leader == own_node || p.node == own_node) continue;
    if (!hold) hold.emplace();
    if (p.token > hold->token) {
      hold->token = p.token;
      hold->leader = p.leader;
    }
    hold->peers.push_back({p.node, p.address});
  }
  return hold;
}

std::string failsafe_hold_why(const failsafe_hold_info& hold) {
  return "failsafe hold: " + hold.leader + "'s term " + std::to_string(hold.token) +
         " may still run on its peers' confirmations";
}

}  // namespace baton::etcd_detail
