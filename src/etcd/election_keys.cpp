#include "election_keys.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

namespace baton::etcd_detail {

election_keys::election_keys(std::string_view prefix, std::string_view election)
    : dir(std::string(prefix) + std::string(election) + "/"),
      end(prefix_end(dir)),
      candidates(dir + "candidates/"),
      state(prefix_end(candidates)),
      lease(dir + "lease"),
      holder(dir + "holder"),
      fence(dir + "fence"),
      record(dir + "record"),
      released(dir + "released"),
      reserved(dir + "reserved"),
      failsafe(dir + "failsafe") {}

std::string election_keys::candidate(std::string_view node_id) const {
  return candidates + std::string(node_id);
}

std::string lease_value(std::string_view node_id, std::string_view nonce) {
  return std::string(node_id) + ":" + std::string(nonce);
}

std::string stamped_value(std::string_view identity, std::int64_t raft_term) {
  if (raft_term <= 0) return std::string(identity);
  return std::string(identity) + "@" + std::to_string(raft_term);
}

namespace {

// Where the "@<raft_term>" of a value starts (after its last ':', digits to
// the end), or npos.
std::size_t stamp_at(std::string_view value) {
  const auto at = value.rfind('@');
  if (at == std::string_view::npos || at + 1 == value.size()) return std::string_view::npos;
  const auto colon = value.rfind(':');
  if (colon != std::string_view::npos && colon > at) return std::string_view::npos;
  const auto digits = value.substr(at + 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::string_view::npos;
  }
  return at;
}

}  // namespace

std::string_view identity_of(std::string_view value) {
  const auto at = stamp_at(value);
  return at == std::string_view::npos ? value : value.substr(0, at);
}

std::optional<std::int64_t> stamped_term_of(std::string_view value) {
  const auto at = stamp_at(value);
  if (at == std::string_view::npos) return std::nullopt;
  std::int64_t term = 0;
  const auto digits = value.substr(at + 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), term);
  if (ec != std::errc{} || end != digits.data() + digits.size() || term <= 0) return std::nullopt;
  return term;
}

bool may_have_ended_early(std::string_view holder_value, std::int64_t raft_term_now) {
  const auto stamped = stamped_term_of(holder_value);
  return !stamped || raft_term_now <= 0 || raft_term_now > *stamped;
}

std::string holder_of(std::string_view value) {
  const auto colon = value.rfind(':');
  return std::string(colon == std::string_view::npos ? value : value.substr(0, colon));
}

std::optional<std::int64_t> parse_offset(std::string_view value) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc{} || end != value.data() + value.size() || v < 0) {
    return std::nullopt;
  }
  return v;
}

std::optional<std::int64_t> released_lease_of(std::string_view value) {
  const auto lease = parse_offset(value);
  if (!lease || *lease == 0) return std::nullopt;
  return lease;
}

std::string reservation_value(const reservation& r) {
  return r.to + "\n" + r.from + "\n" + std::to_string(r.lease);
}

std::optional<reservation> reservation_of(std::string_view value) {
  const auto first = value.find('\n');
  const auto second = first == std::string_view::npos ? first : value.find('\n', first + 1);
  if (second == std::string_view::npos || first == 0) return std::nullopt;
  reservation r;
  r.to = std::string(value.substr(0, first));
  r.from = std::string(value.substr(first + 1, second - first - 1));
  r.lease = parse_offset(value.substr(second + 1)).value_or(0);
  return r;
}

milliseconds reservation_left(std::int64_t ttl_seconds) {
  if (ttl_seconds < 0) return milliseconds(0);
  return ttl_seconds == 0 ? milliseconds(500) : milliseconds(ttl_seconds * 1000);
}

election_view read_view(const header& hdr, const std::vector<key_value>& kvs,
                        const election_keys& keys) {
  election_view v;
  v.hdr = hdr;
  for (const auto& kv : kvs) {
    if (kv.key == keys.lease) v.lease = kv;
    if (kv.key == keys.holder) v.holder = kv;
    if (kv.key == keys.fence) v.fence = kv;
    if (kv.key == keys.record) v.record = kv;
    if (kv.key == keys.released) v.released = kv;
    if (kv.key == keys.reserved) v.reserved = kv;
    if (kv.key == keys.failsafe) v.failsafe = kv;
  }
  return v;
}

acquire_step decide_acquire(const election_view& view, bool must_fence, std::string_view own_value,
                            std::string_view own_node) {
  if (must_fence) return acquire_step::fence;
  if (view.fence) return acquire_step::held_back;
  if (view.lease && identity_of(view.lease->value) != own_value) return acquire_step::held;
  // Our own lease key stands whatever a reservation says (none is put while
  // a lease key lives).
  if (!view.lease && view.reserved) {
    const auto r = reservation_of(view.reserved->value);
    if (r && r->to != own_node) return acquire_step::reserved;
  }
  return acquire_step::take;
}

milliseconds remaining_of(std::int64_t ttl_seconds, milliseconds ttl) {
  if (ttl_seconds < 0) return milliseconds(-1);
  // etcd checks for expired leases every 500 ms: a lease it says has 0 s
  // left may live that much longer.
  const milliseconds left = ttl_seconds == 0 ? milliseconds(500) : milliseconds(ttl_seconds * 1000);
  return std::min(left, ttl);
}

std::int64_t lease_seconds(milliseconds ttl) {
  return std::max<std::int64_t>(1, (ttl.count() + 999) / 1000);
}

std::optional<token_floor::finding> token_floor::observe_header(const header& h) {
  std::optional<finding> found;
  if (cluster_ && !h.cluster_id.empty() && *cluster_ != h.cluster_id) {
    found = finding{"the etcd cluster changed (id " + *cluster_ + ", now " + h.cluster_id + ")",
                    true, false};
    revision_ = h.revision;
    stream_revision_ = 0;
  } else if (h.revision == 0) {
    // No revision at all: etcd leaves it out of some messages (a watch
    // cancelled for compaction says only the compacted revision). It tells
    // nothing about the data going back.
  } else if (h.revision < revision_) {
    found = finding{"etcd's revision went back from " + std::to_string(revision_) + " to " +
                        std::to_string(h.revision) + " (a restore of an older snapshot?)",
                    true, false};
    revision_ = h.revision;
    stream_revision_ = 0;
  } else {
    revision_ = h.revision;
  }
  if (!h.cluster_id.empty()) cluster_ = h.cluster_id;
  highest_ = std::max(highest_, offset() + revision_);
  return found;
}

std::optional<token_floor::finding> token_floor::observe_linearizable_header(
    const header& h, std::int64_t known_at_send) {
  const bool same_cluster = !cluster_ || h.cluster_id.empty() || *cluster_ == h.cluster_id;
  if (!same_cluster || h.revision == 0 || h.revision >= known_at_send) return observe_header(h);
  // Below what was known before the call was sent, though maybe not below
  // the calls' own mark (observe_header would miss it then).
  if (h.revision < revision_) return observe_header(h);
  const finding found{"etcd's revision went back from " + std::to_string(known_at_send) +
                          " (seen before this call was sent) to " + std::to_string(h.revision) +
                          " (a restore of an older snapshot?)",
                      true, false};
  revision_ = h.revision;
  stream_revision_ = 0;
  highest_ = std::max(highest_, offset() + revision_);
  return found;
}

std::optional<token_floor::finding> token_floor::observe_stream_header(const header& h) {
  if (cluster_ && !h.cluster_id.empty() && *cluster_ != h.cluster_id) return observe_header(h);
  if (!h.cluster_id.empty()) cluster_ = h.cluster_id;
  stream_revision_ = std::max(stream_revision_, h.revision);
  // Its revision was the data's: counted for the tokens, but never the mark
  // a call's answer is judged against.
  highest_ = std::max(highest_, offset() + h.revision);
  return std::nullopt;
}

std::optional<token_floor::finding> token_floor::observe_record(
    const std::optional<key_value>& record) {
  // The same trouble read again is no news.
  const auto trouble = [this](std::string why, bool missing) -> std::optional<finding> {
    if (why == record_trouble_) return std::nullopt;
    record_trouble_ = why;
    return finding{std::move(why), true, missing};
  };
  if (!record) return trouble("the election's record is missing from etcd", true);
  const auto offset = parse_offset(record->value);
  if (!offset) {
    return trouble("the election's record holds \"" + record->value + "\", not a token offset",
                   false);
  }
  record_trouble_.clear();
  const auto before = std::exchange(offset_, *offset);
  highest_ = std::max(highest_, *offset + revision_);
  if (!before || *before == *offset) return std::nullopt;
  if (*offset < *before) {
    return finding{"the election's token offset went back from " + std::to_string(*before) +
                       " to " + std::to_string(*offset) + " (a restore of an older snapshot?)",
                   true, false};
  }
  return finding{
      "another candidate found etcd's data gone back and raised the token offset "
      "from " +
          std::to_string(*before) + " to " + std::to_string(*offset),
      false, false};
}

std::int64_t token_floor::fence_offset(std::optional<std::int64_t> current) const {
  return std::max(current.value_or(0), highest_);
}

void token_floor::fenced(std::int64_t offset, std::int64_t revision) {
  record_trouble_.clear();
  offset_ = offset;
  revision_ = revision;
  highest_ = std::max(highest_, offset + revision);
}

seen_event classify_event(const watch_event& e, const election_keys& keys,
                          std::string_view own_value) {
  seen_event s;
  s.mod_revision = e.kv.mod_revision;
  if (e.kv.key == keys.lease) {
    if (e.deleted) {
      if (e.prev && identity_of(e.prev->value) == own_value) return s;
      s.what = seen_event::kind::released;
    } else if (e.kv.version == 1) {
      s.what = seen_event::kind::acquired;
      s.holder = holder_of(e.kv.value);
    }
  } else if (e.kv.key == keys.fence) {
    // The hold-back is over: worth trying now.
    if (e.deleted) s.what = seen_event::kind::released;
  } else if (e.kv.key == keys.released) {
    const auto lease = e.deleted ? std::nullopt : released_lease_of(e.kv.value);
    if (lease) {
      s.what = seen_event::kind::release_marked;
      s.lease = *lease;
    }
  } else if (e.kv.key == keys.reserved) {
    if (e.deleted) {
      s.what = seen_event::kind::unreserved;
    } else if (const auto r = reservation_of(e.kv.value)) {
      s.what = seen_event::kind::reserved;
      s.lease = r->lease;
    }
  } else if (e.kv.key == keys.record) {
    s.what = seen_event::kind::record;
    if (!e.deleted) s.record = e.kv;
  }
  return s;
}

}  // namespace baton::etcd_detail
