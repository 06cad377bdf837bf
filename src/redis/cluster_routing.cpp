// Routing for a Redis Cluster store: key slots, slot maps from CLUSTER SHARDS
// and CLUSTER SLOTS, and the meaning of redirection errors. Every field of a
// slot map is checked before it is trusted, because a wrong answer here sends
// lease writes to the wrong node; a problem becomes a detail that names the
// shard, node and field, never a default that looks plausible.
#include "cluster_routing.hpp"

#include <array>
#include <charconv>
#include <limits>

#include "redis_error.hpp"

namespace baton::redis_detail {
namespace {

using type = redis_reply::type;
using slot_map = std::vector<cluster_shard>;

// ---- CRC16 ----------------------------------------------------------------

// The 256-entry table of CRC16-XMODEM, built at compile time from the
// polynomial rather than pasted, so there is no table to mistype.
constexpr std::array<std::uint16_t, 256> make_crc16_table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    unsigned crc = byte << 8;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 0x8000u) ? (crc << 1) ^ 0x1021u : crc << 1;
    table[byte] = static_cast<std::uint16_t>(crc & 0xFFFFu);
  }
  return table;
}

constexpr auto crc16_table = make_crc16_table();

// The part of a key that is hashed: a non-empty {tag}, else the whole key.
std::string_view hashed_part(std::string_view key) {
  const auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  const auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

// ---- reply fields ---------------------------------------------------------

// A problem found while reading a reply; empty = none.
using problem = std::string;

bool is_text(const redis_reply& r) { return r.kind == type::string || r.kind == type::status; }

// A field that should be text; Redis versions and proxies differ in whether
// numbers come as integers or bulk strings, so integers are accepted as their
// decimal form.
bool text_of(const redis_reply& r, std::string& out) {
  if (is_text(r)) {
    out = r.str;
    return true;
  }
  if (r.kind == type::integer) {
    out = std::to_string(r.integer);
    return true;
  }
  return false;
}

// A field that should be a number: an integer reply or a decimal string.
bool number_of(const redis_reply& r, long long& out) {
  if (r.kind == type::integer) {
    out = r.integer;
    return true;
  }
  if (!is_text(r) || r.str.empty()) return false;
  const char* first = r.str.data();
  const char* last = first + r.str.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last;
}

// A number within [low, high], or a problem naming the field and what came.
problem bounded(const redis_reply& r, std::string_view field, long long low, long long high,
                long long& out) {
  if (!number_of(r, out)) return std::string(field) + " is " + describe_reply(r) + ", not a number";
  if (out < low || out > high)
    return std::string(field) + " is " + std::to_string(out) + ", outside " + std::to_string(low) +
           ".." + std::to_string(high);
  return {};
}

problem read_port(const redis_reply& r, std::string_view field, int& out) {
  long long value = 0;
  auto why = bounded(r, field, 1, std::numeric_limits<unsigned short>::max(), value);
  if (why.empty()) out = static_cast<int>(value);
  return why;
}

problem read_slot(const redis_reply& r, std::string_view field, int& out) {
  long long value = 0;
  auto why = bounded(r, field, 0, cluster_slot_count - 1, value);
  if (why.empty()) out = static_cast<int>(value);
  return why;
}

// A RESP2 map is a flat array of key, value, key, value...; `visit(key,
// value)` sees each pair and answers a problem to stop at.
template <typename Visit>
problem for_each_pair(const redis_reply& map, std::string_view what, Visit visit) {
  if (map.kind != type::array)
    return std::string(what) + " is " + describe_reply(map) + ", not a map";
  if (map.elements.size() % 2 != 0)
    return std::string(what) + " has an odd number of elements (" +
           std::to_string(map.elements.size()) + "), not key/value pairs";
  for (std::size_t i = 0; i < map.elements.size(); i += 2) {
    const auto& key = map.elements[i];
    if (!is_text(key)) return std::string(what) + " has a key that is " + describe_reply(key);
    if (auto why = visit(key.str, map.elements[i + 1]); !why.empty()) return why;
  }
  return {};
}

// "slots": start, end, start, end... Ranges need not be sorted, but each must
// run forwards: a reversed range means we misread the reply.
problem read_slot_ranges(const redis_reply& r, std::vector<std::pair<int, int>>& out) {
  if (r.kind != type::array) return "\"slots\" is " + describe_reply(r) + ", not an array";
  if (r.elements.size() % 2 != 0)
    return "\"slots\" has an odd number of elements (" + std::to_string(r.elements.size()) +
           "), not start/end pairs";
  for (std::size_t i = 0; i < r.elements.size(); i += 2) {
    int start = 0;
    int end = 0;
    if (auto why = read_slot(r.elements[i], "slot range start", start); !why.empty()) return why;
    if (auto why = read_slot(r.elements[i + 1], "slot range end", end); !why.empty()) return why;
    if (start > end)
      return "slot range " + std::to_string(start) + "-" + std::to_string(end) + " runs backwards";
    out.emplace_back(start, end);
  }
  return {};
}

problem read_text_field(const redis_reply& value, std::string_view key, std::string& out) {
  if (!text_of(value, out))
    return quoted_excerpt(key) + " is " + describe_reply(value) + ", not text";
  return {};
}

// One node's map; "id", "ip", "role" and a port are required, "health",
// "endpoint" and "hostname" optional, other keys ignored.
problem read_shard_node(const redis_reply& r, cluster_node& node) {
  bool has_id = false, has_ip = false, has_role = false;
  auto why = for_each_pair(r, "the node", [&](const std::string& key, const redis_reply& value) {
    if (key == "id") {
      has_id = true;
      return read_text_field(value, key, node.id);
    }
    if (key == "ip") {
      has_ip = true;
      return read_text_field(value, key, node.ip);
    }
    if (key == "role") {
      has_role = true;
      return read_text_field(value, key, node.role);
    }
    if (key == "endpoint") return read_text_field(value, key, node.endpoint);
    if (key == "hostname") return read_text_field(value, key, node.hostname);
    if (key == "health") return read_text_field(value, key, node.health);
    if (key == "port") return read_port(value, "\"port\"", node.port);
    if (key == "tls-port") return read_port(value, "\"tls-port\"", node.tls_port);
    return problem{};
  });
  if (!why.empty()) return why;
  if (!has_id || node.id.empty()) return "the node has no \"id\"";
  if (!has_ip) return "node " + node.id + " has no \"ip\"";
  if (!has_role) return "node " + node.id + " has no \"role\"";
  if (node.role != "master" && node.role != "replica")
    return "node " + node.id + " has the unknown role " + quoted_excerpt(node.role);
  if (node.port == 0 && node.tls_port == 0)
    return "node " + node.id + " has neither \"port\" nor \"tls-port\"";
  return {};
}

problem read_shard_nodes(const redis_reply& r, std::vector<cluster_node>& out) {
  if (r.kind != type::array) return "\"nodes\" is " + describe_reply(r) + ", not an array";
  for (std::size_t i = 0; i < r.elements.size(); ++i) {
    cluster_node node;
    if (auto why = read_shard_node(r.elements[i], node); !why.empty())
      return "node " + std::to_string(i) + ": " + why;
    out.push_back(std::move(node));
  }
  return {};
}

problem read_shard(const redis_reply& r, cluster_shard& shard) {
  bool has_slots = false, has_nodes = false;
  auto why = for_each_pair(r, "the shard", [&](const std::string& key, const redis_reply& value) {
    if (key == "slots") {
      has_slots = true;
      return read_slot_ranges(value, shard.slot_ranges);
    }
    if (key == "nodes") {
      has_nodes = true;
      return read_shard_nodes(value, shard.nodes);
    }
    return problem{};
  });
  if (!why.empty()) return why;
  if (!has_slots) return "the shard has no \"slots\"";
  if (!has_nodes) return "the shard has no \"nodes\"";
  return {};
}

// ---- CLUSTER SLOTS ----------------------------------------------------------

// [endpoint, port, id?, {metadata}?]: the endpoint may be nil (unknown);
// the metadata map (Redis 7) may name the "ip" and "hostname".
problem read_slots_node(const redis_reply& r, std::string_view role, cluster_node& node) {
  if (r.kind != type::array || r.elements.size() < 2)
    return "the node is " + describe_reply(r) + ", not [endpoint, port, ...]";
  const auto& e = r.elements;
  if (e[0].kind != type::nil && !text_of(e[0], node.endpoint))
    return "the endpoint is " + describe_reply(e[0]);
  if (auto why = read_port(e[1], "the port", node.port); !why.empty()) return why;
  if (e.size() > 2 && !text_of(e[2], node.id)) return "the node id is " + describe_reply(e[2]);
  if (e.size() > 3) {
    auto why = for_each_pair(e[3], "the node's metadata",
                             [&](const std::string& key, const redis_reply& value) {
                               if (key == "ip") return read_text_field(value, key, node.ip);
                               if (key == "hostname")
                                 return read_text_field(value, key, node.hostname);
                               return problem{};
                             });
    if (!why.empty()) return why;
  }
  node.role = std::string(role);
  return {};
}

problem read_slots_entry(const redis_reply& r, cluster_shard& shard) {
  if (r.kind != type::array || r.elements.size() < 3)
    return "the entry is " + describe_reply(r) + ", not [start, end, master, ...]";
  const auto& e = r.elements;
  int start = 0;
  int end = 0;
  if (auto why = read_slot(e[0], "the range start", start); !why.empty()) return why;
  if (auto why = read_slot(e[1], "the range end", end); !why.empty()) return why;
  if (start > end)
    return "slot range " + std::to_string(start) + "-" + std::to_string(end) + " runs backwards";
  shard.slot_ranges.emplace_back(start, end);
  for (std::size_t i = 2; i < e.size(); ++i) {
    cluster_node node;
    if (auto why = read_slots_node(e[i], i == 2 ? "master" : "replica", node); !why.empty())
      return (i == 2 ? std::string("master: ") : "replica " + std::to_string(i - 3) + ": ") + why;
    shard.nodes.push_back(std::move(node));
  }
  return {};
}

// ---- slot lookup ----------------------------------------------------------

template <typename T>
parsed_reply<T> failure(std::error_code ec, std::string detail) {
  parsed_reply<T> r;
  r.ec = ec;
  r.detail = std::move(detail);
  return r;
}

// Reads a whole slot-map reply: an array whose elements `read_one` parses.
template <typename ReadOne>
parsed_reply<slot_map> read_slot_map(const redis_reply& reply, std::string_view command,
                                     std::string_view element, ReadOne read_one) {
  if (reply.kind == type::error)
    return failure<slot_map>(classify_error_reply(reply.str),
                             std::string(command) + ": " + reply.str);
  if (reply.kind != type::array)
    return failure<slot_map>(redis_errc::unexpected_reply,
                             std::string(command) + ": unexpected reply " + describe_reply(reply));
  parsed_reply<slot_map> out;
  for (std::size_t i = 0; i < reply.elements.size(); ++i) {
    cluster_shard shard;
    if (auto why = read_one(reply.elements[i], shard); !why.empty())
      return failure<slot_map>(redis_errc::unexpected_reply, std::string(command) + ": " +
                                                                 std::string(element) + " " +
                                                                 std::to_string(i) + ": " + why);
    out.value.push_back(std::move(shard));
  }
  return out;
}

bool serves(const cluster_shard& shard, int slot) {
  for (const auto& [start, end] : shard.slot_ranges)
    if (start <= slot && slot <= end) return true;
  return false;
}

bool is_failed(const cluster_node& node) {
  return node.health == "fail" || node.health == "failed";
}

// The shard's master. After a failover a shard may briefly list the failed
// old master beside the promoted one: a healthy master wins over a failed one.
const cluster_node* master_of(const cluster_shard& shard) {
  const cluster_node* found = nullptr;
  for (const auto& node : shard.nodes) {
    if (node.role != "master") continue;
    if (!found || (is_failed(*found) && !is_failed(node))) found = &node;
  }
  return found;
}

std::string host_of(const cluster_node& node) {
  if (!node.endpoint.empty() && node.endpoint != "?") return node.endpoint;
  return node.ip;  // "" = the node that answered
}

}  // namespace

std::uint16_t crc16(std::string_view data) {
  unsigned crc = 0;
  for (unsigned char byte : data)
    crc = ((crc << 8) & 0xFFFFu) ^ crc16_table[((crc >> 8) ^ byte) & 0xFFu];
  return static_cast<std::uint16_t>(crc);
}

std::uint16_t key_slot(std::string_view key) {
  return static_cast<std::uint16_t>(crc16(hashed_part(key)) % cluster_slot_count);
}

parsed_reply<slot_map> parse_cluster_shards(const redis_reply& reply) {
  return read_slot_map(reply, "CLUSTER SHARDS", "shard", read_shard);
}

parsed_reply<slot_map> parse_cluster_slots(const redis_reply& reply) {
  return read_slot_map(reply, "CLUSTER SLOTS", "entry", read_slots_entry);
}

parsed_reply<cluster_target> master_for_slot(const slot_map& shards, std::uint16_t slot, bool tls) {
  const std::string slot_name = "slot " + std::to_string(slot);
  const cluster_shard* owner = nullptr;
  for (const auto& shard : shards) {
    if (!serves(shard, slot)) continue;
    // Two owners would make any choice a guess: refuse rather than write the
    // lease on a node that may not own it.
    if (owner)
      return failure<cluster_target>(redis_errc::unexpected_reply,
                                     slot_name + " is claimed by two shards");
    owner = &shard;
  }
  // No master to be had is no_master (unavailable): a cluster being set up
  // or failing over gets there in time, so it is worth asking again.
  if (!owner)
    return failure<cluster_target>(
        redis_errc::no_master,
        slot_name + " is not served by any shard: the cluster is not fully set up");
  const cluster_node* master = master_of(*owner);
  if (!master)
    return failure<cluster_target>(redis_errc::no_master,
                                   slot_name + ": its shard lists no master");
  if (is_failed(*master))
    return failure<cluster_target>(
        redis_errc::no_master,
        slot_name + ": master " + master->id + " is down (health " + master->health + ")");
  const int port = tls && master->tls_port != 0 ? master->tls_port : master->port;
  if (port == 0)
    return failure<cluster_target>(redis_errc::unexpected_reply,
                                   slot_name + ": master " + master->id + " announces no " +
                                       (tls ? "port" : "plain TCP port (a TLS-only node?)"));
  if (port < 0 || port > std::numeric_limits<unsigned short>::max())
    return failure<cluster_target>(
        redis_errc::unexpected_reply,
        slot_name + ": master " + master->id + " announces the port " + std::to_string(port));
  parsed_reply<cluster_target> out;
  out.value.host = host_of(*master);
  out.value.port = static_cast<unsigned short>(port);
  out.value.id = master->id;
  return out;
}

parsed_reply<cluster_target> master_for_slot(const redis_reply& shards_reply, std::uint16_t slot,
                                             bool tls) {
  auto shards = parse_cluster_shards(shards_reply);
  if (shards.ec) return failure<cluster_target>(shards.ec, std::move(shards.detail));
  return master_for_slot(shards.value, slot, tls);
}

parsed_reply<cluster_target> master_for_slot_from_slots(const redis_reply& slots_reply,
                                                        std::uint16_t slot) {
  auto shards = parse_cluster_slots(slots_reply);
  if (shards.ec) return failure<cluster_target>(shards.ec, std::move(shards.detail));
  return master_for_slot(shards.value, slot, false);
}

namespace {

// Splits "word rest" at the first space; the word is "" when there is none.
std::pair<std::string_view, std::string_view> split_word(std::string_view text) {
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return {text, {}};
  return {text.substr(0, space), text.substr(space + 1)};
}

// A whole decimal number within [low, high] (no sign, no spaces).
std::optional<unsigned> decimal(std::string_view text, unsigned low, unsigned high) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < low || value > high)
    return std::nullopt;
  return value;
}

// An error reply's code word is its first word: "READONLY You can't..." has
// READONLY, "READONLYX" has not.
bool has_code(std::string_view error_text, std::string_view code) {
  return split_word(error_text).first == code;
}

}  // namespace

std::optional<cluster_redirect> parse_redirect(std::string_view error_text) {
  auto [word, rest] = split_word(error_text);
  cluster_redirect out;
  if (word == "MOVED")
    out.kind = cluster_redirect::kind::moved;
  else if (word == "ASK")
    out.kind = cluster_redirect::kind::ask;
  else
    return std::nullopt;
  auto [slot_text, address] = split_word(rest);
  const auto slot = decimal(slot_text, 0, cluster_slot_count - 1);
  // The address is one word: anything after it means we misread the reply.
  const auto colon = address.rfind(':');
  if (!slot || colon == std::string_view::npos || address.find(' ') != std::string_view::npos)
    return std::nullopt;
  const auto port =
      decimal(address.substr(colon + 1), 1, std::numeric_limits<unsigned short>::max());
  if (!port) return std::nullopt;
  std::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.find_first_of("[]") != std::string_view::npos) return std::nullopt;
  out.slot = static_cast<std::uint16_t>(*slot);
  out.host = std::string(host);
  out.port = static_cast<int>(*port);
  return out;
}

bool is_tryagain(std::string_view error_text) { return has_code(error_text, "TRYAGAIN"); }

bool is_clusterdown(std::string_view error_text) { return has_code(error_text, "CLUSTERDOWN"); }

bool needs_new_master(std::string_view error_text) {
  return has_code(error_text, "READONLY") || has_code(error_text, "NOREPLICAS") ||
         has_code(error_text, "MASTERDOWN") || has_code(error_text, "LOADING");
}

redis_endpoint endpoint_for(const redis_endpoint& via, std::string_view host, unsigned short port) {
  redis_endpoint out = via;
  out.kind = redis_endpoint::transport::tcp;
  out.path.clear();
  if (!host.empty()) out.host = std::string(host);
  out.port = port;
  return out;
}

}  // namespace baton::redis_detail
