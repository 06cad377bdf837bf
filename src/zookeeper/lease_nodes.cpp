#include "lease_nodes.hpp"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <charconv>

namespace baton::zookeeper_detail {
namespace {

bool parse_u64(std::string_view text, std::uint64_t& out) {
  if (text.empty()) return false;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end;
}

bool has_control_char(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

}  // namespace

lease_paths make_paths(std::string_view prefix, std::string_view election) {
  lease_paths p;
  p.prefix = std::string(prefix);
  p.election = p.prefix + "/" + std::string(election);
  p.lease = p.election + "/lease";
  p.record = p.election + "/record";
  return p;
}

std::optional<std::string> path_prefix_problem(std::string_view prefix) {
  if (prefix.empty() || prefix.front() != '/') return "must start with /";
  if (prefix.size() > 1 && prefix.back() == '/') return "must not end with /";
  if (prefix == "/") return "must name a node below /";
  if (has_control_char(prefix)) return "holds a control character";
  std::size_t at = 1;
  while (at <= prefix.size()) {
    const auto next = std::min(prefix.find('/', at), prefix.size());
    const auto element = prefix.substr(at, next - at);
    if (element.empty()) return "has an empty element (//)";
    if (element == "." || element == "..") return "has a . or .. element";
    if (element == "zookeeper" && at == 1) return "is under /zookeeper, which the server reserves";
    at = next + 1;
  }
  return std::nullopt;
}

std::optional<std::string> election_name_problem(std::string_view election) {
  if (election.empty()) return "is empty";
  if (election.find('/') != std::string_view::npos)
    return "holds a / (it is one ZooKeeper node name)";
  if (election == "." || election == "..") return "is . or ..";
  if (has_control_char(election)) return "holds a control character";
  return std::nullopt;
}

std::string encode_lease(const lease_value& v) {
  return std::to_string(v.token) + " " + v.node_id + ":" + v.nonce;
}

std::optional<lease_value> decode_lease(std::string_view data) {
  const auto space = data.find(' ');
  const auto colon = data.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon <= space + 1 ||
      colon + 1 == data.size()) {
    return std::nullopt;
  }
  lease_value v;
  if (!parse_u64(data.substr(0, space), v.token) || v.token == 0) return std::nullopt;
  v.node_id = std::string(data.substr(space + 1, colon - space - 1));
  v.nonce = std::string(data.substr(colon + 1));
  if (v.nonce.find(' ') != std::string::npos) return std::nullopt;
  return v;
}

std::string encode_record(const record_value& v) {
  return "counter " + std::to_string(v.counter) + "\nreleased " + std::to_string(v.released) +
         "\nhold " + v.hold + "\nwhy " + v.why + "\n";
}

std::optional<record_value> decode_record(std::string_view data) {
  record_value v;
  bool counter = false;
  while (!data.empty()) {
    const auto eol = data.find('\n');
    if (eol == std::string_view::npos) return std::nullopt;
    const auto line = data.substr(0, eol);
    data.remove_prefix(eol + 1);
    const auto space = line.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const auto key = line.substr(0, space);
    const auto value = line.substr(space + 1);
    if (key == "counter") {
      if (!parse_u64(value, v.counter)) return std::nullopt;
      counter = true;
    } else if (key == "released") {
      if (!parse_u64(value, v.released)) return std::nullopt;
    } else if (key == "hold") {
      v.hold = std::string(value);
    } else if (key == "why") {
      v.why = std::string(value);
    }
    // Other keys: written by a later version; ignored.
  }
  if (!counter) return std::nullopt;
  return v;
}

std::uint64_t next_token(std::uint64_t counter, std::int64_t record_mtime_ms) {
  const std::uint64_t clock_us =
      record_mtime_ms > 0 ? static_cast<std::uint64_t>(record_mtime_ms) * 1000u : 0u;
  return std::max(counter + 1, clock_us + 1);
}

record_value released_record(std::uint64_t token) {
  return {token, token, "", ""};
}

std::optional<std::string> session_timeout_problem(milliseconds negotiated, milliseconds ttl) {
  if (negotiated >= ttl) return std::nullopt;
  return "the server granted a session timeout of " + std::to_string(negotiated.count()) +
         " ms, shorter than the lease ttl of " + std::to_string(ttl.count()) +
         " ms: the server would delete a live leader's lease node before its lease ends. Raise "
         "the server's maxSessionTimeout (it is at most 20 ticks by default) or shorten the ttl";
}

milliseconds held_remaining(const node_seen& lease, const acquire_facts& facts) {
  auto remaining = facts.ttl;
  if (lease.czxid == facts.seen_lease_czxid && lease.version == facts.seen_lease_version) {
    remaining -= std::chrono::duration_cast<milliseconds>(facts.now - facts.seen_lease_at);
  }
  return std::clamp(remaining, milliseconds(1), facts.ttl);
}

acquire_step decide_acquire(const node_seen& record, const node_seen& lease,
                            const acquire_facts& facts, const std::string& hold_mark) {
  using namespace acquire_steps;
  if (!record.exists) {
    return create_record{{0, 0, hold_mark, "the election's record was missing"}};
  }
  const auto rec = decode_record(record.data);
  if (!rec) return bad_data{"the record node holds data baton did not write"};
  if (lease.exists) {
    const auto value = decode_lease(lease.data);
    if (!value) return bad_data{"the lease node holds data baton did not write"};
    if (value->nonce == facts.nonce && lease.owner_session == facts.session_id) {
      // Ours: a re-acquire, or our create whose reply was lost. A new token
      // all the same, as every success takes one.
      const auto token = next_token(rec->counter, record.mtime_ms);
      return retake{{token, rec->released, "", ""},
                    record.version,
                    {token, facts.node_id, facts.nonce},
                    lease.version};
    }
    return held{value->node_id, value->token, held_remaining(lease, facts)};
  }
  const bool first_sight = !rec->hold.empty() && rec->hold != facts.seen_hold;
  const auto elapsed = std::chrono::duration_cast<milliseconds>(facts.now - facts.seen_hold_at);
  if (!facts.pending_reset.empty()) {
    // A hold another candidate wrote after this store's reset covers it.
    const bool covered =
        first_sight ||
        (!rec->hold.empty() && facts.seen_hold_at >= facts.pending_reset_at && elapsed < facts.ttl);
    if (!covered) {
      return write_hold{{rec->counter, rec->released, hold_mark, facts.pending_reset},
                        record.version};
    }
  }
  if (!rec->hold.empty()) {
    if (first_sight) return held_back{facts.ttl, ""};
    if (elapsed < facts.ttl) return held_back{facts.ttl - elapsed, ""};
  }
  // The early-loss guard: the last term's node is gone without its holder
  // ending the term, and this store saw that node change (a renewal) less
  // than a ttl ago: an operator's delete, not a session that expired (which
  // takes at least the session timeout, >= ttl, after the holder's last
  // contact). Its holder may still be at work until its lease ends.
  if (rec->counter != 0 && rec->released != rec->counter && facts.seen_lease_czxid != 0) {
    const auto since = std::chrono::duration_cast<milliseconds>(facts.now - facts.seen_lease_at);
    if (since < facts.ttl) {
      return held_back{facts.ttl - since,
                       "the lease node vanished " + std::to_string(since.count()) +
                           " ms after its holder last renewed it, without a release (deleted by "
                           "hand?): nobody takes it until that lease could have ended"};
    }
  }
  const auto token = next_token(rec->counter, record.mtime_ms);
  return take{{token, rec->released, "", ""}, record.version, {token, facts.node_id, facts.nonce}};
}

write_outcome classify_write(int rc) {
  switch (rc) {
    case ZOK:
      return write_outcome::done;
    case ZNODEEXISTS:
    case ZBADVERSION:
    case ZNONODE:
      return write_outcome::raced;
    default:
      return write_outcome::failed;
  }
}

}  // namespace baton::zookeeper_detail
