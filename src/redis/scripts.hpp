// The Lua scripts behind acquire, renew and release, each with its SHA1
// for EVALSHA. Running each operation as one script makes it one atomic round
// trip: no other client can slip between the check and the write.
#pragma once

#include <string>
#include <string_view>

namespace baton::redis_detail {

struct lua_script {
  std::string_view source;
  std::string sha1;  ///< lowercase hex, as SCRIPT LOAD would answer
};

/// KEYS: lease, token, fence, holder record, candidates, the front key (with
/// ARGV[10]; with "grant", the granted key: a grant sets it to our value for
/// ttl ms, and a refusal naming that value gives its token as ""; any name
/// in its place without either), (replicated, or
/// with a replica requirement) the epoch key, (with a replica requirement)
/// the replicas key, and (Sentinel with the requirement "all") the acked key,
/// which a grant then sets to the master's replication ID and the server's
/// ms, and which lets a promotion that kept every acknowledged write go
/// without a hold-back (see switch_script). ARGV: our value, ttl ms, channel,
/// "grant" (a Redlock master: no INCR, no announcement) or "", "replicated"
/// (Sentinel, Cluster: the epoch check and tokens of at least the server's
/// clock in microseconds) or "", the publish command ("SPUBLISH" in a
/// Cluster, else "PUBLISH"), the replica requirement (redis.replica_ack:
/// "all" or a number; "" = none), our node id and our priority, which every
/// call registers in the candidates key, and optionally how many front
/// runners a large election keeps (see BATON_LUA_FRONT_RUNNERS: a grant
/// leaves their list), above how many listening an election is large, and
/// the back runners' channel, whose listeners count with the channel's. A grant also writes the holder
/// record. A lease key holding a hand-over's reservation for our node id is
/// free to us (a new term); for another node it is held.
/// Returns {1, token}, or with "grant" {1, counter, 1 if the lease was free},
/// or with a replica requirement {1, token, replicas needed, 1 if the lease
/// was free} and no announcement (the caller announces the term once WAIT
/// counted the replicas); or, with a replica requirement, when the master has
/// fewer replicas connected than needed, {0, "", 0, token, "replicas",
/// connected, needed} and no grant; or {0, holder value, PTTL ms, holder
/// token or ""}, maybe followed by "", the µs until the lease is free, the
/// candidates listening on the channel, and in an election of more than
/// front runners + 3 listening "front" (the count then being the front
/// runners + 1) or "back", when
/// another node holds the lease; or, while the fence holds every acquisition
/// back, {0, holder value or "(store reset)", ms until both the fence and the
/// lease are gone (-1 = unknown), token, "fence"}, the last element being
/// "reset" when this very call found the token counter missing, re-seeded it
/// from TIME and set the fence for ttl ms ("failover" when, replicated, it
/// found the epoch key naming another server's run_id and the server did not
/// show that it followed that one live with every acknowledged write: it
/// then lifted the counter to TIME and set the fence); or {0, the record's value, ms
/// until its expiry, token, "vanished"} when the lease key is gone but the
/// holder record says another value's lease runs on; or {0, the node that
/// handed over, ms left of the window, token, "reserved", the node it is
/// reserved for} while a hand-over's reservation for another node holds.
/// Each of those refusals but "replicas" ends with two more elements,
/// "outranked" and how many live candidates of the registry, other than us
/// and the holder it names (none for a reservation or a bare fence), have a
/// higher priority than ours; without them when the registry could not be
/// read. With lease.failsafe peers (ARGV[13] "failsafe", then whether the
/// caller may win, the highest token it cleared, its peer address, its
/// promise as token, leader and ms left, the list number and the list a
/// grant writes; the failsafe record is the last key): a free lease is
/// refused with {0, value or leader, -1, counter, "failsafe", token, leader's
/// peer address, n, n times node and address} while the record holds
/// another value's term, or a live registration promises one, above the
/// cleared token (F6, F9); a caller that may not win gets {0, "", -1,
/// counter, "abstained"} (both followed by "outranked", n as the other
/// refusals, the first only when it came from the registry); a grant writes
/// the record.
const lua_script& acquire_script();
/// KEYS: token, fence. ARGV: ttl ms, text stored in the fence. Lifts the
/// counter to at least TIME in microseconds, makes the fence last at least
/// ttl ms (one without expiry is kept), returns the fence's PTTL.
const lua_script& fence_script();
/// The replicated kinds' check on reaching a server with another run_id than
/// the one talked to before. KEYS: token, fence, epoch, replicas, acked.
/// ARGV: ttl ms, the replica requirement ("all", or anything else), "acked"
/// to let a promotion that kept every acknowledged write go without a
/// hold-back (Sentinel with "all"; else ""). When the epoch key names another
/// server, the script takes this one's run_id there, lifts the counter to
/// TIME and, with "all", counts one replica fewer. Returns {verdict, the
/// fence's PTTL}: "same" (the record named this server already: another
/// candidate's check, or a write, came first; nothing changed), "promoted"
/// (no fence set), or "failover", "unrecorded" (no epoch) or "lost" (no
/// counter), each with the fence set for at least ttl ms.
const lua_script& switch_script();
/// KEYS: lease, holder record, candidates, (with a replica requirement) the
/// replicas key, and (Sentinel with "all") the acked key, set as a grant
/// sets it. ARGV: our value, ttl ms, our node id, our priority (registered
/// when the lease is ours), and optionally the replica requirement ("all" or
/// a number; "" = none). Returns 1 (renewed, record updated) or 0 (not ours);
/// with a requirement {1 or 0, 0, replicas needed}, or {2, connected, needed}
/// when the master has too few replicas (nothing extended). With
/// lease.failsafe peers (ARGV[6] "failsafe", then the term's token, the list
/// number, our peer address and the list; the failsafe record the last key)
/// a renewal also writes the record, unless it holds this term with a list
/// number at least as high (F1). ARGV[11] "list" (the arguments before it
/// padded with ""): a renewal answers {that answer, the registry's live
/// lines as candidates_script lists them}; a lease not ours, too few
/// replicas or an unreadable registry answer bare.
const lua_script& renew_script();
/// lease.failsafe peers: a leader's resume of its term after the store was
/// away (F8); see scripts.cpp for its keys and arguments. Answers as the
/// renew script: renewed only if nobody else holds the lease and the record
/// holds this term unreleased, or nothing. On a Redlock master (ARGV[12]
/// "term", the term key last) it lifts the term key to at least the token.
const lua_script& resume_script();
/// KEYS: lease, token, holder record, and optionally the failsafe record
/// (deleted with the lease). ARGV: our value, channel ("" = do not
/// announce: a grant given back, by a Redlock candidate whose acquire was
/// refused or after replicas did not acknowledge it), and optionally the
/// publish command (default PUBLISH), the released term's token ("" = the
/// counter's), and for a hand-over the node it is for (a node id: no white
/// space), the window in ms and our node id. Returns 1 (lease and record
/// deleted, announced as "released <value> <token>"; with a hand-over and a
/// window > 0 the lease key then holds `(reserved) <to> <by>` for the
/// window) or 0 (not ours; nothing changed).
const lua_script& release_script();

/// KEYS: candidates. Reads the registry (nothing written): a flat array of
/// node id, priority, ms registered without a gap, ms until the
/// registration lapses, the nonce of the process that registered (the end
/// of its lease value; "-" when it had none), ms left of its cool-down
/// (0 = none) and its peer address ("" = none), for each live registration.
const lua_script& candidates_script();

/// KEYS: candidates. ARGV: our node id, our value, the cool-down in ms.
/// Marks our live registration as cooling down for that long (see
/// BATON_LUA_REGISTER): 1, or 0 when there was none of ours to mark.
const lua_script& cooldown_script();
/// The registration argument of the scripts that register a candidate:
/// "<priority>", or "<priority>/<card>" with a card (BATON_LUA_LINE).
std::string registration_argument(int priority, const std::string& card);
/// A candidate that makes no attempts registers and looks who holds the
/// lease (standby_source).
const lua_script& standby_script();

/// The Redlock write-back. KEYS: lease, token, term, granted. ARGV: our value,
/// the token, channel, "1" to announce a new term. Sets the counter and the
/// term key to the token (and deletes the granted key if it names our value)
/// only when the lease is ours and the counter is smaller,
/// and then announces "acquired <value> <token>" if asked: {1, ""};
/// otherwise {0, why}. With lease.failsafe peers (ARGV[5] "failsafe", then
/// the list number, our peer address and the list; KEYS[5] the failsafe
/// record) it also writes the new term's record, in the same step.
const lua_script& write_back_script();

/// The Redlock renewal. KEYS: lease, token, fence, holder record, term.
/// ARGV: our value, ttl ms, our token. 1 = renewed (it was ours); 2 = taken
/// (it was free, not reserved by a hand-over, unfenced, not vanished early,
/// and no newer term wrote its token there: now ours, the counter raised to
/// our token if below it, the term key = our token); 0 = neither. With
/// lease.failsafe peers (ARGV[4] "failsafe", then the list number, our peer
/// address and the list; KEYS[6] the failsafe record) a renewal writes the
/// list when its number is above the record's, and a take the record of our
/// term.
const lua_script& renew_or_take_script();

/// KEYS: token. Creates the token counter from TIME in microseconds when it
/// is missing (returns 1), else changes nothing (returns 0).
const lua_script& create_record_script();

/// Why `to_node` cannot be a hand-over's target ("" = it can): the
/// reservation names it in the lease key between spaces, so it must hold no
/// white space or control characters. An empty one names nobody: the
/// hand-over is a plain release (as a window of 0 is).
std::string hand_over_target_problem(std::string_view to_node);

/// SHA1 of `data` as 40 lowercase hex digits.
std::string sha1_hex(std::string_view data);

}  // namespace baton::redis_detail
