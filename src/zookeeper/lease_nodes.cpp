#include "lease_nodes.hpp"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <charconv>

namespace baton::zookeeper_detail {
namespace {

// The longest reservation window a record holds (about 30 years): the
// record's mtime plus it cannot overflow.
constexpr std::uint64_t longest_window_ms = 1'000'000'000'000u;

bool parse_u64(std::string_view text, std::uint64_t& out) {
  if (text.empty()) return false;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end;
}

// A record without a reservation.
record_value plain_record(std::uint64_t counter, std::uint64_t released, std::string hold = "",
                          std::string why = "") {
  record_value r;
  r.counter = counter;
  r.released = released;
  r.hold = std::move(hold);
  r.why = std::move(why);
  return r;
}

// A field that may be empty, in a line of fields: "-" for none.
std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }
std::string from_dash(std::string_view s) { return s == "-" ? std::string() : std::string(s); }

// "<token> <list number> <address> <node_id>:<nonce>": the record's term
// line of lease.failsafe peers (the node id last, as it may hold spaces).
std::optional<failsafe_term> decode_term(std::string_view value) {
  failsafe_term t;
  const auto a = value.find(' ');
  if (a == std::string_view::npos) return std::nullopt;
  const auto b = value.find(' ', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  const auto c = value.find(' ', b + 1);
  if (c == std::string_view::npos) return std::nullopt;
  const auto lease = value.substr(c + 1);
  const auto colon = lease.rfind(':');
  if (!parse_u64(value.substr(0, a), t.token) || t.token == 0 ||
      !parse_u64(value.substr(a + 1, b - a - 1), t.seq) || colon == std::string_view::npos ||
      colon == 0 || colon + 1 == lease.size()) {
    return std::nullopt;
  }
  t.address = from_dash(value.substr(b + 1, c - b - 1));
  t.node_id = std::string(lease.substr(0, colon));
  t.nonce = std::string(lease.substr(colon + 1));
  return t;
}

// The text after "\n<key> " in a registry node's data, to its line's end;
// nullopt when no line has that key.
std::optional<std::string_view> line_of(std::string_view data, std::string_view key) {
  const auto mark = "\n" + std::string(key) + " ";
  const auto at = data.find(mark);
  if (at == std::string_view::npos) return std::nullopt;
  const auto text = data.substr(at + mark.size());
  return text.substr(0, text.find('\n'));
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
  p.candidates = p.election + "/candidates";
  return p;
}

std::string candidate_name(std::string_view node_id, int priority) {
  static constexpr char hex[] = "0123456789ABCDEF";
  const bool dots_only = node_id == "." || node_id == "..";
  std::string name = std::to_string(priority) + "_";
  for (const char c : node_id) {
    const auto u = static_cast<unsigned char>(c);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '@' || c == '-' || (c == '.' && !dots_only);
    if (plain) {
      name += c;
    } else {
      name += '%';
      name += hex[u >> 4];
      name += hex[u & 0xf];
    }
  }
  return name;
}

std::string candidate_path(const lease_paths& paths, std::string_view node_id, int priority) {
  return paths.candidates + "/" + candidate_name(node_id, priority);
}

std::optional<candidate_value> decode_candidate_name(std::string_view name) {
  const auto sep = name.find('_');
  if (sep == 0 || sep == std::string_view::npos || sep + 1 == name.size()) return std::nullopt;
  candidate_value v;
  const auto* end = name.data() + sep;
  const auto [ptr, ec] = std::from_chars(name.data(), end, v.priority);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  const auto hex_value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = sep + 1; i < name.size(); ++i) {
    if (name[i] != '%') {
      v.node_id += name[i];
      continue;
    }
    if (i + 2 >= name.size()) return std::nullopt;
    const int hi = hex_value(name[i + 1]);
    const int lo = hex_value(name[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    v.node_id += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  // Only the one spelling candidate_name() gives.
  if (candidate_name(v.node_id, v.priority) != name) return std::nullopt;
  return v;
}

int count_outranking(const std::vector<candidate_value>& registry, std::string_view self,
                     int priority, std::string_view holder) {
  std::vector<std::string_view> above;
  for (const auto& c : registry) {
    if (c.priority <= priority || c.node_id == self || c.node_id == holder) continue;
    if (std::find(above.begin(), above.end(), c.node_id) == above.end()) above.push_back(c.node_id);
  }
  return static_cast<int>(above.size());
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
  auto out = "counter " + std::to_string(v.counter) + "\nreleased " + std::to_string(v.released) +
             "\nhold " + v.hold + "\nwhy " + v.why + "\n";
  // Only while one is pending: a record without one reads as before to a
  // version that knows no reservations.
  if (!v.reserved_for.empty()) {
    out += "reserved " + v.reserved_for + "\nby " + v.reserved_by + "\nwindow " +
           std::to_string(v.reserved_window.count()) + "\n";
  }
  if (v.failsafe) {
    const auto& t = *v.failsafe;
    out += "term " + std::to_string(t.token) + " " + std::to_string(t.seq) + " " +
           or_dash(t.address) + " " + t.node_id + ":" + t.nonce + "\n";
    for (const auto& p : t.peers) out += "peer " + or_dash(p.address) + " " + p.node + "\n";
  }
  return out;
}

std::optional<record_value> decode_record(std::string_view data) {
  record_value v;
  bool counter = false;
  std::vector<failsafe_peer> peers;
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
    } else if (key == "reserved") {
      v.reserved_for = std::string(value);
    } else if (key == "by") {
      v.reserved_by = std::string(value);
    } else if (key == "window") {
      std::uint64_t ms = 0;
      if (!parse_u64(value, ms) || ms > longest_window_ms) return std::nullopt;
      v.reserved_window = milliseconds(static_cast<std::int64_t>(ms));
    } else if (key == "term") {
      auto term = decode_term(value);
      if (!term) return std::nullopt;
      v.failsafe = std::move(*term);
    } else if (key == "peer") {
      const auto sep = value.find(' ');
      if (sep == std::string_view::npos || sep + 1 == value.size()) return std::nullopt;
      peers.push_back({std::string(value.substr(sep + 1)), from_dash(value.substr(0, sep))});
    }
    // Other keys: written by a later version; ignored.
  }
  if (!counter) return std::nullopt;
  if (v.failsafe) v.failsafe->peers = std::move(peers);
  return v;
}

std::uint64_t next_token(std::uint64_t counter, std::int64_t record_mtime_ms) {
  const std::uint64_t clock_us =
      record_mtime_ms > 0 ? static_cast<std::uint64_t>(record_mtime_ms) * 1000u : 0u;
  return std::max(counter + 1, clock_us + 1);
}

record_value released_record(std::uint64_t token) {
  return plain_record(token, token);
}

record_value handed_over_record(std::uint64_t token, std::string to_node, std::string by_node,
                                milliseconds window) {
  auto r = released_record(token);
  r.reserved_for = std::move(to_node);
  r.reserved_by = std::move(by_node);
  r.reserved_window = std::clamp(window, milliseconds(0),
                                 milliseconds(static_cast<std::int64_t>(longest_window_ms)));
  return r;
}

std::optional<std::string> reservation_node_problem(std::string_view node_id) {
  if (node_id.empty()) return "is empty";
  if (has_control_char(node_id)) return "holds a control character";
  return std::nullopt;
}

std::string encode_candidate(const candidate_value& v) {
  auto out =
      std::to_string(v.priority) + " " + v.node_id + (v.card.empty() ? "" : "\ncard " + v.card);
  if (!v.peer_address.empty()) out += "\npeer " + v.peer_address;
  if (v.promise) {
    out += "\npromise " + std::to_string(v.promise->token) + " " +
           std::to_string(std::max<std::int64_t>(v.promise->remaining.count(), 0)) + " " +
           v.promise->leader;
  }
  return out;
}

std::string candidate_card_of(std::string_view data) {
  return std::string(line_of(data, "card").value_or(std::string_view()));
}

std::string candidate_peer_of(std::string_view data) {
  return std::string(line_of(data, "peer").value_or(std::string_view()));
}

std::optional<registered_promise> promise_left(std::string_view data, std::int64_t mtime_ms,
                                               std::int64_t server_now_ms) {
  const auto line = line_of(data, "promise");
  if (!line) return std::nullopt;
  const auto a = line->find(' ');
  if (a == std::string_view::npos) return std::nullopt;
  const auto b = line->find(' ', a + 1);
  if (b == std::string_view::npos || b + 1 == line->size()) return std::nullopt;
  registered_promise p;
  std::uint64_t ms = 0;
  if (!parse_u64(line->substr(0, a), p.token) || p.token == 0 ||
      !parse_u64(line->substr(a + 1, b - a - 1), ms) || ms > longest_window_ms) {
    return std::nullopt;
  }
  p.leader = std::string(line->substr(b + 1));
  auto left = static_cast<std::int64_t>(ms);
  if (server_now_ms > 0 && mtime_ms > 0) left -= server_now_ms - mtime_ms;
  if (left <= 0) return std::nullopt;
  p.remaining = milliseconds(std::min<std::int64_t>(left, static_cast<std::int64_t>(ms)));
  return p;
}

std::optional<candidate_value> decode_candidate(std::string_view data) {
  data = data.substr(0, data.find('\n'));
  const auto space = data.find(' ');
  if (space == std::string_view::npos || space + 1 == data.size()) return std::nullopt;
  candidate_value v;
  const auto* end = data.data() + space;
  const auto [ptr, ec] = std::from_chars(data.data(), end, v.priority);
  if (space == 0 || ec != std::errc{} || ptr != end) return std::nullopt;
  v.node_id = std::string(data.substr(space + 1));
  return v;
}

std::string encode_cooling_candidate(const candidate_value& v, milliseconds cooldown) {
  return encode_candidate(v) + "\ncooling " + std::to_string(std::max<std::int64_t>(cooldown.count(), 0));
}

milliseconds cooling_left(std::string_view data, std::int64_t mtime_ms, std::int64_t server_now_ms) {
  constexpr std::string_view mark = "\ncooling ";
  const auto at = data.find(mark);
  if (at == std::string_view::npos) return milliseconds(0);
  const auto text = data.substr(at + mark.size());
  std::int64_t cooldown = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), cooldown);
  if (ec != std::errc{} || ptr != text.data() + text.size() || cooldown <= 0) return milliseconds(0);
  if (server_now_ms <= 0 || mtime_ms <= 0) return milliseconds(cooldown);
  return milliseconds(std::clamp<std::int64_t>(cooldown - (server_now_ms - mtime_ms), 0, cooldown));
}

std::int64_t server_clock::now_ms(time_point now) const {
  if (!known()) return 0;
  return server_ms + std::chrono::duration_cast<milliseconds>(now - local).count();
}

void server_clock::learn(std::int64_t stamped_ms, time_point now) {
  if (stamped_ms <= 0) return;
  server_ms = stamped_ms;
  local = now;
}

milliseconds registered_for(std::int64_t ctime_ms, std::int64_t server_now_ms) {
  if (ctime_ms <= 0 || server_now_ms <= 0) return milliseconds(-1);
  return milliseconds(std::max<std::int64_t>(server_now_ms - ctime_ms, 0));
}

std::optional<std::string> session_timeout_problem(milliseconds negotiated, milliseconds ttl) {
  if (negotiated >= ttl) return std::nullopt;
  return "the server granted a session timeout of " + std::to_string(negotiated.count()) +
         " ms, shorter than the lease ttl of " + std::to_string(ttl.count()) +
         " ms: the server would delete a live leader's lease node before its lease ends. Raise "
         "the server's maxSessionTimeout (it is at most 20 ticks by default) or shorten the ttl";
}

std::optional<std::string> session_timeout_too_long(milliseconds granted, milliseconds asked,
                                                    milliseconds ttl) {
  if (granted <= 2 * ttl) return std::nullopt;
  std::string text = "the server granted a session timeout of " + std::to_string(granted.count()) +
                     " ms, more than twice the lease ttl of " + std::to_string(ttl.count()) +
                     " ms: a crashed leader's node lives that long, and a standby waits for it. ";
  // The server grants the asked timeout clamped to [min, max]: above what
  // was asked, only its minimum can have raised it.
  if (granted > asked) {
    text += "Lower the servers' minSessionTimeout (2 ticks by default) or raise lease.ttl";
  } else {
    text += "Lower zookeeper.session_timeout (0 = the ttl)";
  }
  return text;
}

milliseconds held_remaining(const node_seen& lease, const acquire_facts& facts) {
  auto remaining = facts.ttl;
  if (lease.czxid == facts.seen_lease_czxid && lease.version == facts.seen_lease_version) {
    remaining -= std::chrono::duration_cast<milliseconds>(facts.now - facts.seen_lease_at);
  }
  // A node unchanged for a whole ttl has a dead or frozen holder, and goes
  // when the server expires that session: at a tick (2 s by default), which
  // the standby's exists watch announces. Asking before then finds it again:
  // with a floor of 1 ms, standbys asked every 2-3 ms for 180 ms in a bench
  // run (tickTime 200 ms). A tenth of the ttl instead, cut short by the watch.
  const auto floor = std::max(facts.ttl / 10, milliseconds(1));
  return std::clamp(remaining, std::min(floor, facts.ttl), facts.ttl);
}

milliseconds reservation_left(const node_seen& record, const record_value& rec,
                              const acquire_facts& facts) {
  if (rec.reserved_for.empty()) return milliseconds(0);
  auto left = rec.reserved_window;
  if (record.czxid == facts.seen_record_czxid && record.version == facts.seen_record_version) {
    left -= std::chrono::duration_cast<milliseconds>(facts.now - facts.seen_record_at);
  }
  if (facts.server_now_ms > 0 && record.mtime_ms > 0) {
    left = std::min(
        left, milliseconds(record.mtime_ms + rec.reserved_window.count() - facts.server_now_ms));
  }
  return left;
}

namespace {

// The record a grant writes: the new counter, and with lease.failsafe peers
// the new term, its list numbered as the caller says.
record_value granted_record(std::uint64_t token, std::uint64_t released,
                            const acquire_facts& facts) {
  auto r = plain_record(token, released);
  if (facts.failsafe) {
    const auto& f = *facts.failsafe;
    r.failsafe =
        failsafe_term{token, f.list.seq, facts.node_id, facts.nonce, f.address, f.list.peers};
  }
  return r;
}

}  // namespace

acquire_step decide_acquire(const node_seen& record, const node_seen& lease,
                            const acquire_facts& facts, const std::string& hold_mark) {
  using namespace acquire_steps;
  if (!record.exists) {
    return create_record{plain_record(0, 0, hold_mark, "the election's record was missing")};
  }
  const auto rec = decode_record(record.data);
  if (!rec) return bad_data{"the record node holds data baton did not write"};
  if (lease.exists) {
    const auto value = decode_lease(lease.data);
    if (!value) return bad_data{"the lease node holds data baton did not write"};
    if (value->nonce == facts.nonce && lease.owner_session == facts.session_id) {
      // Ours: a re-acquire, or our create whose reply was lost. A new token
      // all the same, as every success takes one.
      if (facts.failsafe && !facts.failsafe->may_win) return abstain{};
      const auto token = next_token(rec->counter, record.mtime_ms);
      return retake{granted_record(token, rec->released, facts),
                    record.version,
                    {token, facts.node_id, facts.nonce},
                    lease.version};
    }
    return held{value->node_id, value->token, held_remaining(lease, facts), ""};
  }
  const bool first_sight = !rec->hold.empty() && rec->hold != facts.seen_hold;
  const auto elapsed = std::chrono::duration_cast<milliseconds>(facts.now - facts.seen_hold_at);
  if (!facts.pending_reset.empty()) {
    // A hold another candidate wrote after this store's reset covers it.
    const bool covered =
        first_sight ||
        (!rec->hold.empty() && facts.seen_hold_at >= facts.pending_reset_at && elapsed < facts.ttl);
    if (!covered) {
      // The hold ends a pending reservation too: everyone, its node as
      // well, waits out the hold-back; then the lease is free for all.
      auto held_record = plain_record(rec->counter, rec->released, hold_mark, facts.pending_reset);
      held_record.failsafe = rec->failsafe;
      return write_hold{std::move(held_record), record.version};
    }
  }
  if (!rec->hold.empty()) {
    if (first_sight) return held_back{facts.ttl, ""};
    if (elapsed < facts.ttl) return held_back{facts.ttl - elapsed, ""};
  }
  if (facts.failsafe && rec->failsafe) {
    // F6: another store's term of the mode, not released, that the caller
    // has not cleared: it may still run on its peers' confirmations. Told
    // before the early-loss guard below (which a taker that never saw the
    // term's node would otherwise meet first, for a ttl): a refusal either
    // way, and the guard still binds the caller once it cleared the term.
    const auto& t = *rec->failsafe;
    const bool ours = t.node_id == facts.node_id && t.nonce == facts.nonce;
    if (!ours && t.token != rec->released && t.token > facts.failsafe->cleared_token) {
      return failsafe_held{{t.node_id, t.token, t.address, t.peers}};
    }
  }
  // The early-loss guard: the last term's node is gone without its holder
  // ending the term. Its holder may still be at work until its lease ends.
  if (rec->counter != 0 && rec->released != rec->counter) {
    if (facts.seen_lease_token == rec->counter) {
      // This store saw that node change (a renewal) less than a ttl ago: an
      // operator's delete, not a session that expired (which takes at least
      // the session timeout, >= ttl, after the holder's last contact).
      const auto since = std::chrono::duration_cast<milliseconds>(facts.now - facts.seen_lease_at);
      if (since < facts.ttl) {
        return held_back{facts.ttl - since,
                         "the lease node vanished " + std::to_string(since.count()) +
                             " ms after its holder last renewed it, without a release (deleted by "
                             "hand?): nobody takes it until that lease could have ended"};
      }
    } else {
      // This store never saw the term's node: it was gone at every look,
      // so it was gone when this store first saw the record's version (a
      // take writes both in one multi). Deleted by hand an instant after a
      // take this store did not see, its holder may be at work for a ttl:
      // count one from that first look. (A holder whose session expired
      // costs a late-comer that ttl too: no leader beats two.)
      const auto since =
          std::chrono::duration_cast<milliseconds>(facts.now - facts.seen_record_at);
      if (since < facts.ttl) {
        return held_back{facts.ttl - since,
                         "the lease node of term " + std::to_string(rec->counter) +
                             " was gone before this candidate saw it, without a release (deleted "
                             "by hand, or its holder's session expired): nobody takes it until "
                             "that lease could have ended"};
      }
    }
  }
  // A switchover's reservation for another node: held for it until its
  // window is over (then the take below ends it). Checked after the
  // hold-backs, which bind the reserved node too.
  if (!rec->reserved_for.empty() && rec->reserved_for != facts.node_id) {
    const auto left = reservation_left(record, *rec, facts);
    if (left > milliseconds(0)) {
      return held{rec->reserved_by, rec->counter, left, rec->reserved_for};
    }
  }
  const auto token = next_token(rec->counter, record.mtime_ms);
  return take{granted_record(token, rec->released, facts),
              record.version,
              {token, facts.node_id, facts.nonce}};
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
