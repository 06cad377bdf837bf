// The election's nodes and what they hold, without I/O:
//   <path>/<election>/lease   ephemeral: "<token> <node_id>:<nonce>", the
//                             holder's term; it lives with the holder's session
//                             and is rewritten by every renewal;
//   <path>/<election>/record  persistent: the token counter, the token of
//                             the last term ended by its holder (released),
//                             the reset fence and a switchover's reservation
//                             ("counter <n>\nreleased <n>\nhold <mark>\nwhy
//                             <text>\n", then "reserved <node>\nby <node>\n
//                             window <ms>\n" while one is pending, and with
//                             lease.failsafe peers the last term made with
//                             the mode: "term <token> <list number> <peer
//                             address> <node_id>:<nonce>\n" and a line
//                             "peer <address> <node>\n" per listed peer);
//   <path>/<election>/candidates/<priority>_<node>
//                             ephemeral, one per candidate's session:
//                             "<priority> <node_id>" (then its card, and
//                             with lease.failsafe peers its peer address and
//                             promise, a line each), the registry that
//                             async_candidates lists. Its name holds the
//                             priority too, so that the children's names
//                             alone say who outranks whom.
// An acquisition is one multi that rewrites the record (its version checked)
// and creates the lease node (or rewrites our own), so two candidates racing
// for a free lease cannot both win: the loser's whole multi rolls back. A
// hand-over is the release's multi with the reservation written into the
// record: the lease node goes and the reservation comes in one step, and the
// target's take, which rewrites the record, ends it in the same step that
// starts its term.
//
// decide_acquire() turns what an acquire read (the record, the lease node,
// this store's own facts) into the one step to take next; the store carries
// it out. Times are on the monotonic clock of this process, never the
// server's: a hold-back counts from when this store first saw its mark, a
// held lease's remaining time from when this store first saw its version.
// A reservation alone is also judged on the server's clock (the record's
// mtime is when it was written), never past its window from when this store
// first saw it: it is a preference, no part of the lease's safety.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "baton/lease_store.hpp"
#include "baton/time.hpp"

namespace baton::zookeeper_detail {

/// Where an election's nodes live: `prefix` ("/baton") + "/" + election.
struct lease_paths {
  std::string prefix;    ///< "/baton"
  std::string election;  ///< "<prefix>/<election>"
  std::string lease;     ///< "<election>/lease"
  std::string record;    ///< "<election>/record"
  std::string candidates;  ///< "<election>/candidates"
};
lease_paths make_paths(std::string_view prefix, std::string_view election);

/// Why `prefix` is not an absolute ZooKeeper path ("/a/b", no trailing "/",
/// no empty, "." or ".." element); nullopt when it is.
std::optional<std::string> path_prefix_problem(std::string_view prefix);
/// Why `election` cannot be one path element ("/", ".", "..", control
/// characters); nullopt when it can.
std::optional<std::string> election_name_problem(std::string_view election);

/// The registry node's name of candidate `node_id` of `priority`:
/// "<priority>_<node>", <node> being the node id with every byte outside
/// A-Z a-z 0-9 . _ @ - written %XX (and "." or ".." escaped whole), so any
/// node id is one node name, and the name alone says the priority.
std::string candidate_name(std::string_view node_id, int priority);
/// "<candidates>/<candidate_name>".
std::string candidate_path(const lease_paths& paths, std::string_view node_id, int priority);

/// The lease node's data: whose term, with which token.
struct lease_value {
  std::uint64_t token = 0;
  std::string node_id;
  std::string nonce;  ///< the holding store's own (new per store)
};
std::string encode_lease(const lease_value& v);
/// nullopt when `data` is not "<token> <node_id>:<nonce>".
std::optional<lease_value> decode_lease(std::string_view data);

/// lease.failsafe peers (docs/safety.md, F1): the last term made with the
/// mode, as the record keeps it beside the counter. It outlives the lease
/// node (an ephemeral that dies with its session); a release drops it.
struct failsafe_term {
  std::uint64_t token = 0;
  /// The list's number: a renewal writes its list only above it.
  std::uint64_t seq = 0;
  /// The holder's lease value: its node id and its store's nonce.
  std::string node_id;
  std::string nonce;
  std::string address;  ///< the holder's peer port, "" = none
  std::vector<failsafe_peer> peers;

  friend bool operator==(const failsafe_term&, const failsafe_term&) = default;
};

/// The record node's data.
struct record_value {
  /// The last token handed out (0 = none yet).
  std::uint64_t counter = 0;
  /// The token of the last term its holder ended (a release, or its lease
  /// running out unrenewed): when it is not `counter`, a missing lease node
  /// went without its holder (its session expired, or an operator deleted
  /// it while the holder may still be at work).
  std::uint64_t released = 0;
  /// "" = no hold-back; otherwise the mark of the reset that holds every
  /// acquisition back for one ttl from when a candidate first sees it. The
  /// next acquisition clears it.
  std::string hold;
  /// Why the hold was set, for the log ("" when no hold).
  std::string why;
  /// A switchover's reservation: only `reserved_for` may take the free lease
  /// until `reserved_window` after the record's write (its mtime), which the
  /// hand-over was. "" = none. `reserved_by` handed it over.
  std::string reserved_for;
  std::string reserved_by;
  milliseconds reserved_window{0};
  /// lease.failsafe peers: the term a grant or resume wrote; none = no term
  /// of the mode (off, or released).
  std::optional<failsafe_term> failsafe;
};
std::string encode_record(const record_value& v);
/// nullopt when `data` is not a record baton wrote.
std::optional<record_value> decode_record(std::string_view data);

/// Why a node id cannot be written into the record (a line break would
/// end its line there: control characters); nullopt when it can.
std::optional<std::string> reservation_node_problem(std::string_view node_id);

/// The next token: above the counter, and at least the server's clock in
/// microseconds at the record's last write (`record_mtime_ms`, ZooKeeper's
/// mtime), so tokens keep rising across a wiped or restored ensemble whose
/// counter starts again.
std::uint64_t next_token(std::uint64_t counter, std::int64_t record_mtime_ms);

/// The record as this store's term leaves it when the holder ends the term
/// itself (release, or its lease ran out): the record it wrote at acquire
/// time, with the term marked released.
record_value released_record(std::uint64_t token);
/// The same, for a hand-over: the term released and the lease reserved for
/// `to_node` for `window` from the write (negative counts as 0, more than
/// about 30 years as that).
record_value handed_over_record(std::uint64_t token, std::string to_node, std::string by_node,
                                milliseconds window);

/// The promise a candidate keeps (F9), as its registry node says it: the
/// term's token and leader, and the time left from the node's write.
struct registered_promise {
  std::uint64_t token = 0;
  std::string leader;
  milliseconds remaining{0};
};

/// A registry node's data: a candidate and its priority, and its card.
struct candidate_value {
  int priority = 0;
  std::string node_id;
  std::string card{};  ///< "" = none
  /// lease.failsafe peers: its peer port ("" = none) and its live promise.
  std::string peer_address{};
  std::optional<registered_promise> promise{};
};
/// "<priority> <node_id>", then a line "card <card>" with a card, "peer
/// <address>" with a peer address and "promise <token> <ms> <leader>" with
/// a promise.
std::string encode_candidate(const candidate_value& v);
/// The card a registry node's data carries ("" = none).
std::string candidate_card_of(std::string_view data);
/// The peer address a registry node's data carries ("" = none).
std::string candidate_peer_of(std::string_view data);
/// The promise a registry node's `data` announces, with what is left of it
/// at `server_now_ms` from its write at `mtime_ms` (both in the server's
/// clock; the whole of it when the server's time is not known, which errs
/// on the side of "still promised"); nullopt when none is, or it has passed.
std::optional<registered_promise> promise_left(std::string_view data, std::int64_t mtime_ms,
                                               std::int64_t server_now_ms);
/// nullopt when `data` is not "<priority> <node_id>" (a second line, as a
/// cool-down's, is not part of the candidate).
std::optional<candidate_value> decode_candidate(std::string_view data);
/// A registry node's data while its candidate cools down after giving the
/// lease up (lease_store::register_cooldown): encode_candidate's, then a line
/// "cooling <ms>". The node's mtime, in the server's clock, says since when.
std::string encode_cooling_candidate(const candidate_value& v, milliseconds cooldown);
/// What is left at `server_now_ms` of the cool-down a registry node's `data`
/// announces, set at `mtime_ms` (both in the server's clock): 0 when it
/// announces none or it has passed; the whole cool-down when the server's
/// time is not known (0), which errs on the side of "still cooling".
milliseconds cooling_left(std::string_view data, std::int64_t mtime_ms,
                          std::int64_t server_now_ms);
/// The candidate a registry node's name names; nullopt when `name` is not
/// one candidate_name() gives.
std::optional<candidate_value> decode_candidate_name(std::string_view name);

/// acquire_answer::outranked_by from the registry's names: the node ids
/// other than `self` and `holder` listed with a priority above `priority`,
/// each once (a node id restarted with another priority is listed twice
/// until its successor removes its predecessor's node).
int count_outranking(const std::vector<candidate_value>& registry, std::string_view self,
                     int priority, std::string_view holder);

/// The server's clock as this store last learned it: a node's ctime or mtime
/// from one of its own writes (the time the ensemble's leader stamped on
/// it, in ms since the epoch), and when the reply came, on this process's
/// clock. Read between the two, the estimate runs at most the reply's way
/// late: a reservation seems that much longer, a registration that much
/// younger.
struct server_clock {
  std::int64_t server_ms = 0;  ///< 0 = not learned yet
  time_point local{};

  bool known() const { return server_ms > 0; }
  /// The server's time at local time `now` (0 = unknown).
  std::int64_t now_ms(time_point now) const;
  /// Learns from a write whose reply came at `now`; a later sample wins.
  void learn(std::int64_t stamped_ms, time_point now);
};

/// How long a registry node created at `ctime_ms` has lived at server time
/// `server_now_ms` (never negative); -1 when either is unknown.
milliseconds registered_for(std::int64_t ctime_ms, std::int64_t server_now_ms);

/// Why a negotiated session timeout cannot carry leases of `ttl`: a session
/// that expires sooner than the ttl would let the server delete a live
/// holder's lease node (and a standby take it) while the holder still
/// counts on its lease. nullopt when it can.
/// The daemon's acquire error and check-store both say it in these words.
std::optional<std::string> session_timeout_problem(milliseconds negotiated, milliseconds ttl);

/// Why a granted timeout past twice the ttl costs (a crashed leader's node
/// lives that long, and the takeover waits for it) and what sets it: the
/// servers' minSessionTimeout raised it above `asked`, or `asked` itself.
/// nullopt when the grant is at most 2 * ttl.
std::optional<std::string> session_timeout_too_long(milliseconds granted, milliseconds asked,
                                                    milliseconds ttl);

// --- one acquire -------------------------------------------------------------

/// A node as a read found it.
struct node_seen {
  bool exists = false;
  std::string data;
  std::int32_t version = -1;
  std::int64_t czxid = 0;
  std::int64_t ctime_ms = 0;
  std::int64_t mtime_ms = 0;
  std::int64_t owner_session = 0;  ///< ephemeralOwner (0 = persistent)
};

/// An acquire with lease.failsafe peers (failsafe_calls::async_acquire):
/// what it may do and what a grant writes into the record.
struct failsafe_grant {
  bool may_win = true;
  std::uint64_t cleared_token = 0;
  std::string address;  ///< this node's peer port
  failsafe_list list;
};

/// This store's own facts that an acquire decides with.
struct acquire_facts {
  std::string node_id;
  std::string nonce;
  std::int64_t session_id = 0;
  milliseconds ttl{0};
  time_point now{};
  /// This store lost its session (expired, or refused after a wipe) and has
  /// not yet held the election back for it: "" = nothing pending.
  std::string pending_reset;
  /// When this store found that reset.
  time_point pending_reset_at{};
  /// The hold mark this store saw last, and when it first saw it.
  std::string seen_hold;
  time_point seen_hold_at{};
  /// The lease node version this store saw last, and when it first saw it.
  std::int64_t seen_lease_czxid = 0;
  std::int32_t seen_lease_version = -1;
  time_point seen_lease_at{};
  /// The token that lease node carried (0 = none seen): whether this store
  /// ever saw the current term's node.
  std::uint64_t seen_lease_token = 0;
  /// The record version this store saw last, and when it first saw it: a
  /// reservation's window counts from there at the latest.
  std::int64_t seen_record_czxid = 0;
  std::int32_t seen_record_version = -1;
  time_point seen_record_at{};
  /// The server's clock now, as this store can tell (server_clock); 0 =
  /// unknown.
  std::int64_t server_now_ms = 0;
  /// lease.failsafe peers: the acquire's arguments; none = a plain acquire.
  std::optional<failsafe_grant> failsafe{};
};

namespace acquire_steps {
/// The record is missing: create it holding every acquisition back.
struct create_record {
  record_value record;
};
/// This store's pending reset, and no hold first seen since it: write the
/// hold into the record (version checked), then answer held back for one
/// ttl.
struct write_hold {
  record_value record;
  std::int32_t record_version = -1;
};
/// Answer held back; `why` = "" for a reset.
struct held_back {
  milliseconds remaining{0};
  std::string why;
};
/// Answer held by another candidate, or reserved for one (`reserved_for`
/// set; `holder` is then the node that handed over and `remaining` the
/// reservation's time left).
struct held {
  std::string holder;
  std::uint64_t token = 0;
  milliseconds remaining{0};
  std::string reserved_for;
};
/// Take the free lease: the record rewritten (version checked) and the lease
/// node created, in one multi.
struct take {
  record_value record;
  std::int32_t record_version = -1;
  lease_value lease;
};
/// The lease node is ours already (a re-acquire, or a create whose reply was
/// lost): the record and the lease node rewritten, both versions checked.
struct retake {
  record_value record;
  std::int32_t record_version = -1;
  lease_value lease;
  std::int32_t lease_version = -1;
};
/// A node holds what baton never writes.
struct bad_data {
  std::string why;
};
/// lease.failsafe peers: the lease is free, but the record holds another
/// store's unreleased term above the caller's cleared token (F6).
struct failsafe_held {
  failsafe_hold_info hold;
};
/// lease.failsafe peers: the lease is ours already, but the caller may not
/// win (F7): registered only.
struct abstain {};
}  // namespace acquire_steps

using acquire_step =
    std::variant<acquire_steps::create_record, acquire_steps::write_hold, acquire_steps::held_back,
                 acquire_steps::held, acquire_steps::take, acquire_steps::retake,
                 acquire_steps::bad_data, acquire_steps::failsafe_held, acquire_steps::abstain>;

/// The step after reading the record and the lease node. `hold_mark` names
/// a hold this store would write (unique per store and reset). With
/// lease.failsafe peers (facts.failsafe) a take or retake writes the new
/// term into the record, and a take still needs the registry's promises
/// and the caller's may_win looked at (failsafe_nodes.hpp) before it goes.
/// A hold written keeps the record's term.
acquire_step decide_acquire(const node_seen& record, const node_seen& lease,
                            const acquire_facts& facts, const std::string& hold_mark);

/// A lease held by another: its remaining time as this store can vouch for
/// it, counted from when this store first saw the node's current version
/// (never more than the ttl, at least 1 ms).
milliseconds held_remaining(const node_seen& lease, const acquire_facts& facts);

/// A record's reservation: the time left of its window, on the server's
/// clock (from the record's mtime) when this store knows it, and never more
/// than the window from when this store first saw this record version.
/// <= 0: over (or none), the lease is free for everyone.
milliseconds reservation_left(const node_seen& record, const record_value& rec,
                              const acquire_facts& facts);

/// How a multi (or a single write) of an acquisition ended.
enum class write_outcome {
  done,    ///< every op applied
  raced,   ///< a version or existence check failed: another candidate wrote
           ///< first; read again
  failed,  ///< any other error: the call fails with it
};
/// From the client's result code of the whole call.
write_outcome classify_write(int rc);

}  // namespace baton::zookeeper_detail
