// What one election keeps in etcd, and how the store reads it, without I/O.
//
// Under <prefix><election>/ six keys of the election's state (seven with
// lease.failsafe peers), and one key per candidate:
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
//           mod_revision. `baton init-store` creates it with 0;
// - released: the etcd lease (in decimal) of the last term whose holder
//           released after a raft leader change, put after its revoke: that
//           lease's end was no early revoke (see may_have_ended_early);
// - reserved: a switchover's reservation, "<to_node>\n<from_node>\n<lease>"
//           on an etcd lease of the window (rounded up to whole seconds): put
//           by the holder in the txn that deletes its lease and holder keys
//           (only if its lease key is still the term's), so it names the
//           etcd lease of a term that ended by a release. While it lives only
//           to_node may take the lease; to_node's take deletes it;
// - failsafe: lease.failsafe peers' record of the last term made with the
//           mode, on no lease (failsafe_record.hpp);
// - candidates/<node_id>: a candidate's registration (candidate_registry.hpp).
//           The candidates' keys sort before the state's, and reads and the
//           watch cover the state alone, [state, end): registrations cost a
//           watcher nothing.
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
  std::string dir;       ///< "<prefix><election>/"
  std::string end;       ///< the end of the range of every key under dir
  /// dir + "candidates/": the registrations are [candidates, state).
  std::string candidates;
  /// The end of the registrations' range and the start of the state's,
  /// [state, end): every key below sorts after it.
  std::string state;
  std::string lease;     ///< dir + "lease"
  std::string holder;    ///< dir + "holder"
  std::string fence;     ///< dir + "fence"
  std::string record;    ///< dir + "record"
  std::string released;  ///< dir + "released"
  std::string reserved;  ///< dir + "reserved"
  std::string failsafe;  ///< dir + "failsafe"
  /// A candidate's registration key: candidates + node_id.
  std::string candidate(std::string_view node_id) const;
};

/// "<node_id>:<nonce>": the store's identity in the lease and holder keys.
std::string lease_value(std::string_view node_id, std::string_view nonce);
/// What a term puts in the lease and holder keys: the identity and the raft
/// term etcd answered in before the term's lease was granted,
/// "<node_id>:<nonce>@<raft_term>" (the identity alone when the term is
/// unknown, 0).
std::string stamped_value(std::string_view identity, std::int64_t raft_term);
/// The identity in a key's value: the value without its "@<raft_term>".
std::string_view identity_of(std::string_view value);
/// The raft term stamped in a key's value; nullopt when there is none (an
/// older baton's value, or a value put by hand).
std::optional<std::int64_t> stamped_term_of(std::string_view value);
/// The node id in a lease value (before its last ':'); the whole value when
/// it has no ':'.
std::string holder_of(std::string_view value);

/// Whether a holder's lease, found gone by an answer in raft term
/// `raft_term_now`, may have been revoked before its holder's app stopped.
/// etcd's raft leader expires a lease no sooner than its TTL after the last
/// keepalive it heard, so a lease that ended under the leader of the term it
/// was granted in ended after its holder's lease deadline (or was released).
/// After a leader change a former leader, frozen and thawed, may still
/// revoke it early (etcd-io/etcd#15247, fixed after 3.4.23, the Debian 12
/// version): a term above the stamped one, or either term unknown, answers
/// true, and the candidate must wait out the holder's deadline.
bool may_have_ended_early(std::string_view holder_value, std::int64_t raft_term_now);

/// A switchover's reservation, as the reserved key holds it.
struct reservation {
  std::string to;          ///< the only node that may take the lease
  std::string from;        ///< the node that handed over ("" = unknown)
  std::int64_t lease = 0;  ///< the etcd lease of the term it ended (0 = unknown)
};
std::string reservation_value(const reservation& r);
/// nullopt when the value names no target (put by hand, or damaged): no
/// reservation, and the next take deletes it.
std::optional<reservation> reservation_of(std::string_view value);
/// The time a reservation whose etcd lease has `ttl_seconds` left (truncated
/// to whole seconds) may still live: those seconds, or, when etcd says 0 of a
/// live lease, its 500 ms expiry check; 0 when etcd says the lease is gone.
/// Not capped by the ttl: a window may be longer.
milliseconds reservation_left(std::int64_t ttl_seconds);

/// The record's offset; nullopt when it is not a decimal number >= 0.
std::optional<std::int64_t> parse_offset(std::string_view value);
/// The etcd lease the released key names; nullopt when it names none (not a
/// decimal number > 0).
std::optional<std::int64_t> released_lease_of(std::string_view value);

/// What one read of the election's keys found.
struct election_view {
  header hdr;
  std::optional<key_value> lease;
  std::optional<key_value> holder;
  std::optional<key_value> fence;
  std::optional<key_value> record;
  std::optional<key_value> released;
  std::optional<key_value> reserved;
  std::optional<key_value> failsafe;
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
  reserved,   ///< free, but reserved for another node by a switchover
  take,       ///< free (or reserved for this node), or this store's own:
              ///< put the lease key on a new lease
};
/// `must_fence`: this store found the data gone back and has not fenced
/// yet. `own_value`: this store's lease value; `own_node`: its node id (a
/// reservation names a node, not a store).
acquire_step decide_acquire(const election_view& view, bool must_fence, std::string_view own_value,
                            std::string_view own_node);

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
  /// A watch message's header. The stream is a connection of its own: a
  /// message may say a revision below what the calls' answers said already
  /// (the watch's `created`, sent before a put a call answered first), and
  /// a call answered after it may say one below its own. Neither is a
  /// reset, so its revision only raises the highest token; a changed
  /// cluster id is one. A restore breaks the stream, and the calls find it.
  std::optional<finding> observe_stream_header(const header& h);
  /// The answer to a linearizable kv call (a txn) sent when this store had
  /// seen revision `known_at_send` anywhere, its watch included
  /// (revision_seen()): etcd answers such a call at a revision no lower
  /// than any it had before, so a lower one is data gone back, even where
  /// no earlier call's answer said a higher revision (a standby that
  /// learned of the last term from its watch alone). Otherwise as
  /// observe_header.
  std::optional<finding> observe_linearizable_header(const header& h, std::int64_t known_at_send);
  /// The highest revision seen, by the calls' answers and by the watch.
  std::int64_t revision_seen() const { return std::max(revision_, stream_revision_); }
  /// A read of the record: missing, or an offset other than the known one.
  /// A record missing (or holding no offset) is found once, however many
  /// reads see it, until a record with an offset is read or fenced() wrote
  /// one: a start reads it twice (the acquire and the watch).
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
  // The highest revision a watch message said (since the data last went back).
  std::int64_t stream_revision_ = 0;
  std::optional<std::int64_t> offset_;
  std::int64_t highest_ = 0;
  // Why the record was last found missing or unreadable ("" = it was not,
  // or a record with an offset was read or written since).
  std::string record_trouble_;
};

/// What a watch event on the election's keys means to a store.
struct seen_event {
  enum class kind {
    none,            ///< nothing to report (this store's own lease deleted, a fence put)
    released,        ///< the lease key is gone (released, expired, deleted) or the fence expired
    acquired,        ///< a new term: the lease key created
    record,          ///< the record changed: offset
    release_marked,  ///< a holder said it released the lease `lease` (a wake-up too)
    reserved,        ///< a hand-over ended the term of the lease `lease` (its
                     ///< lease key's delete, in the same txn, is the wake-up)
    unreserved,      ///< the reserved key is gone: expired (worth trying now),
                     ///< or deleted by its target's take
  } what = kind::none;
  std::string holder;
  std::int64_t mod_revision = 0;
  std::optional<key_value> record;
  std::int64_t lease = 0;
};
/// `own_value` is this store's lease value: its own releases are not
/// reported to it.
seen_event classify_event(const watch_event& e, const election_keys& keys,
                          std::string_view own_value);

}  // namespace baton::etcd_detail
