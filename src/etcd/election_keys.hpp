// What one election keeps in etcd, and how the store reads it, without I/O.
//
// Under <prefix><election>/ four keys:
// - lease:  "<node_id>:<nonce>" on the holder's etcd lease; its mod_revision
//           is the term's revision;
// - holder: the same value on the same etcd lease, put with the lease key.
//           An operator's `etcdctl del` of the lease key leaves it: while it
//           is there, its holder's lease lives and that holder's app may
//           still work, so even a candidate that never saw the term counts
//           the election as held. It goes with the lease (revoke, expiry)
//           and with a release;
// - fence:  present (on a lease of one ttl) while acquisitions are held back
//           after a reset;
// - record: the token offset, in decimal: every token is offset +
//           mod_revision. `baton init-store` creates it with 0.
//
// Tokens. A term's token is offset + the lease key's mod_revision, so tokens
// increase with etcd's revision. A snapshot restore takes the revision back
// (etcd 3.4 has no --bump-revision), so the store that finds the revision
// below the highest it saw (or the cluster id changed, or the record gone)
// writes, in one txn, an offset at least the highest token it saw, a fence
// key held for one ttl, and deletes the lease key: every term ends, nobody
// acquires for one ttl, and every later token is above every earlier one
// that store saw. Standbys see every term through their watch, so the
// highest token any store saw is the latest leader's. A store that finds the
// offset raised by another candidate adopts it and hears of the reset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/time.hpp"
#include "etcd_wire.hpp"

namespace baton::etcd_detail {

struct election_keys {
  explicit election_keys(std::string_view prefix, std::string_view election);
  std::string dir;     ///< "<prefix><election>/"
  std::string end;     ///< the end of the range of every key under dir
  std::string lease;   ///< dir + "lease"
  std::string holder;  ///< dir + "holder"
  std::string fence;   ///< dir + "fence"
  std::string record;  ///< dir + "record"
};

/// "<node_id>:<nonce>": what the lease key holds for this store.
std::string lease_value(std::string_view node_id, std::string_view nonce);
/// The node id in a lease value (before its last ':'); the whole value when
/// it has no ':'.
std::string holder_of(std::string_view value);

/// The record's offset; nullopt when it is not a decimal number >= 0.
std::optional<std::int64_t> parse_offset(std::string_view value);

/// What one read of the election's keys found.
struct election_view {
  header hdr;
  std::optional<key_value> lease;
  std::optional<key_value> holder;
  std::optional<key_value> fence;
  std::optional<key_value> record;
};
/// Sorts the keys of a range over keys.dir into a view; other keys are
/// ignored.
election_view read_view(const header& hdr, const std::vector<key_value>& kvs,
                        const election_keys& keys);

/// What an acquire does after its read of the election's keys.
enum class acquire_step {
  fence,      ///< the data went back: fence first (answer held_back)
  held_back,  ///< a fence is live: held back for what its lease has left
  held,       ///< another store's lease key: held by its holder
  take,       ///< free, or this store's own: put the lease key on a new lease
};
/// `must_fence`: this store found the data gone back and has not fenced
/// yet. `own_value`: this store's lease value.
acquire_step decide_acquire(const election_view& view, bool must_fence, std::string_view own_value);

/// The remaining time to report for a lease etcd says has `ttl_seconds` left
/// (truncated to whole seconds): those seconds, or, when etcd says 0 of a
/// live lease, its 500 ms expiry check; never more than `ttl` (the ttl this
/// election runs with: a lease rounded up to whole seconds may outlive it,
/// which is safe, and a standby then tries once more); negative when etcd
/// says the lease is gone.
milliseconds remaining_of(std::int64_t ttl_seconds, milliseconds ttl);

/// The lease TTL to ask etcd for: `ttl` rounded up to whole seconds (at
/// least 1).
std::int64_t lease_seconds(milliseconds ttl);

/// The highest token a store saw, and the signs that etcd's data went back.
/// Fed with every answer's header and every record read.
class token_floor {
 public:
  struct finding {
    std::string why;
    /// The data went back (a restore, another cluster, the record gone or
    /// lowered): this store must fence. False when another candidate fenced
    /// already (the offset went up).
    bool must_fence = false;
    bool record_missing = false;
  };

  /// Every answer's header: a cluster id that changed, or a revision below
  /// the highest seen, is a reset. A header without a revision (0) is not.
  std::optional<finding> observe_header(const header& h);
  /// A read of the record: missing, or an offset other than the known one.
  std::optional<finding> observe_record(const std::optional<key_value>& record);

  /// The offset the known record holds (0 before any read).
  std::int64_t offset() const { return offset_.value_or(0); }
  std::int64_t token_of(std::int64_t mod_revision) const { return offset() + mod_revision; }
  /// The highest offset + revision seen: no later token may be at or below it.
  std::int64_t highest_token() const { return highest_; }
  /// The offset a fence writes over a record holding `current` (nullopt =
  /// missing): never below it, and at least the highest token seen.
  std::int64_t fence_offset(std::optional<std::int64_t> current) const;
  /// This store's own fence wrote `offset` at `revision`.
  void fenced(std::int64_t offset, std::int64_t revision);

 private:
  std::optional<std::string> cluster_;
  std::int64_t revision_ = 0;
  std::optional<std::int64_t> offset_;
  std::int64_t highest_ = 0;
};

/// What a watch event on the election's keys means to a store.
struct seen_event {
  enum class kind {
    none,      ///< nothing to report (this store's own lease deleted, a fence put)
    released,  ///< the lease key is gone (released, expired, deleted) or the fence expired
    acquired,  ///< a new term: the lease key created
    record,    ///< the record changed: offset
  } what = kind::none;
  std::string holder;
  std::int64_t mod_revision = 0;
  std::optional<key_value> record;
};
/// `own_value` is this store's lease value: its own releases are not
/// reported to it.
seen_event classify_event(const watch_event& e, const election_keys& keys,
                          std::string_view own_value);

}  // namespace baton::etcd_detail
