// The port between the election and whatever stores the lease (one Redis
// server, a Redlock quorum, PostgreSQL, ZooKeeper, etcd, ...: the registry of
// kinds lists them), all behind the same calls. The driver depends on this header alone and gets its store from
// make_lease_store (store_factory.hpp), which asks the registry of kinds
// (store_kind.hpp); nothing here names a store kind.
//
// Stores never decide leadership. They answer acquire / renew / release, say
// why an acquire was refused, report what they saw on one stream of events,
// and describe their own health in status(). Every call completes exactly
// once, through its handler, on the store's executor, never inline; after
// close() every pending and later call completes with operation_aborted, and
// after destruction no handler runs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include "baton/time.hpp"

namespace baton {

// --- errors ------------------------------------------------------------------

/// What kind of failure a store call met, whatever the store. Each store keeps
/// its own error codes and maps them onto these conditions, so
/// `ec == store_errc::auth` holds for a Redis AUTH refusal and a PostgreSQL
/// password failure alike. Metrics labels come from store_error_kind().
enum class store_errc {
  unavailable = 1,  ///< cannot connect, or the connection broke
  timeout,          ///< no answer within the command or connect timeout
  auth,             ///< credentials refused or missing
  protocol,         ///< the server's answer could not be understood
  no_quorum,        ///< a quorum store reached fewer members than it needs
  refused,          ///< the server understood and answered with an error
};

/// The category of store_errc conditions ("baton.store").
const std::error_category& store_category() noexcept;
std::error_condition make_error_condition(store_errc e) noexcept;

/// The store-neutral kind of `ec`: "unavailable", "timeout", "auth",
/// "protocol", "no_quorum", "refused", or "other" for codes no store maps
/// (operation_aborted, invalid_argument, ...).
const char* store_error_kind(std::error_code ec);
/// Every value store_error_kind() can return, so that metrics can start each
/// series at 0.
std::span<const char* const> store_error_kinds();

/// How one call failed: a code and a one-line detail for people (never a
/// secret), e.g. "connect 127.0.0.1:6390: Connection refused". Empty when the
/// call succeeded.
struct store_error {
  std::error_code code;
  std::string detail;

  explicit operator bool() const { return static_cast<bool>(code); }
  /// The detail, or the code's message when there is none.
  std::string message() const { return detail.empty() ? code.message() : detail; }
};

// --- identity and answers ----------------------------------------------------

/// Who a store works for; fixed when the store is made. Stores refuse (throw
/// std::invalid_argument) an empty election or node id and a ttl <= 0. All
/// candidates of an election must use the same ttl: a reset's hold-back lasts
/// the ttl of the store that found the reset.
struct store_identity {
  std::string election;  ///< candidates with the same election compete
  std::string node_id;   ///< this candidate
  milliseconds ttl{0};   ///< lifetime of an acquired or renewed lease; > 0
  /// What this candidate's registration says (candidate_info::priority):
  /// who an operator or a preemption prefers; 0 = no preference.
  int priority = 0;
  /// lease.failsafe peers: where the other candidates reach this one's peer
  /// port (HOST:PORT), which its registration publishes
  /// (candidate_info::peer_address); "" = the mode is off.
  std::string peer_address{};
  /// The rest of what its registration says: its candidate card
  /// (candidate_card.hpp: standing, advertise address), kept by the store as
  /// an opaque string (candidate_info::card). update_card changes it.
  std::string card{};
};

/// Throws std::invalid_argument, naming `store` ("redis_store"), for an empty
/// election or node id or a ttl <= 0: what every store's constructor checks.
void require_valid_identity(const store_identity& identity, const char* store);

enum class acquire_outcome {
  acquired,   ///< this candidate now holds the lease (new term, or it was ours)
  held,       ///< another node holds it
  held_back,  ///< refused while the store recovers from a reset (lost data,
              ///< a failover): nobody may acquire until `remaining` has passed
};

/// A candidate as the record of lease.failsafe peers names it: its node id
/// and where its peer port is ("" = unknown).
struct failsafe_peer {
  std::string node;
  std::string address;

  friend bool operator==(const failsafe_peer&, const failsafe_peer&) = default;
};

/// A failsafe hold (docs/safety.md, F6 and F9): the store refused a grant
/// because a term that ran with lease.failsafe peers may still run on its
/// peers' confirmations: the record holds it unreleased, or a candidate's
/// registration carries a live promise to it. Whoever takes must first
/// clear it with the leader or one of `peers`.
struct failsafe_hold_info {
  std::string leader;          ///< the term's leader (node id)
  std::uint64_t token = 0;     ///< its token
  std::string leader_address;  ///< its peer port, "" = unknown
  /// The record's list, or the candidates whose registrations promise.
  std::vector<failsafe_peer> peers;
};

/// The answer to an acquire.
struct acquire_answer {
  acquire_outcome outcome = acquire_outcome::held;
  /// Fencing token: ours when acquired; the holder's when held (0 = unknown);
  /// when held back, the store's counter (for information only).
  std::uint64_t token = 0;
  /// Node id of the holder when held; when held back, of a node that still
  /// holds a lease from before the reset ("" = none or unknown).
  std::string holder;
  /// Held: the holder's remaining lease. Held back: the time until both the
  /// hold-back and any such lease are over. Negative = unknown.
  milliseconds remaining{-1};
  /// Held, from stores that can tell to the microsecond: the time from the
  /// answer until the lease is free, so a standby can try right then rather
  /// than up to a millisecond late. Negative = unknown (use `remaining`).
  std::chrono::microseconds free_in{-1};
  /// Held, from stores that can tell: how many candidates of this election
  /// listen for its announcements, the holder included. Standbys spread
  /// their next attempt over a window that grows with it, so that a large
  /// herd does not hit the store (and the host's CPUs) at one instant.
  /// Negative = unknown.
  int contenders = -1;
  /// Held, from stores that keep a few front runners in a large election:
  /// this node is not one of them. It tries one step after the expiry or a
  /// release rather than at once, when a front runner has normally taken the
  /// lease, so that the herd's attempts do not compete with the winner's
  /// start. `contenders` is then the whole herd; for a front runner it is
  /// the front runners and the holder.
  bool back_runner = false;
  /// Held back: why, when it is not a store reset ("the lease key vanished
  /// before its expiry ..."); "" = a reset.
  std::string why;
  /// Held: the lease is reserved for this node by a switchover
  /// (async_hand_over) and nobody else may take it before `remaining` (the
  /// reservation's time left) has passed; `holder` is then the node that
  /// handed over, or "". "" = no reservation.
  std::string reserved_for;
  /// Held, from the registry of candidates (async_candidates): how many live
  /// candidates other than the holder have a higher priority than this
  /// store's identity. An outranked standby lets them try first after an
  /// expiry or a release. Negative = unknown.
  int outranked_by = -1;
  /// Held back by a failsafe hold (failsafe_calls::async_acquire only):
  /// the term to clear; `remaining` is then -1.
  std::optional<failsafe_hold_info> failsafe_hold;

  bool acquired() const { return outcome == acquire_outcome::acquired; }
};

enum class renew_answer {
  renewed,  ///< still ours; it now lives ttl from when the renewal was sent
  lost,     ///< no longer ours (expired, taken, or deleted): not the leader.
            ///< The error's detail, with no code, may say why (a Redlock
            ///< store: on which masters), for the log
};

enum class release_answer {
  released,  ///< it was ours; it is free now and the release was announced
  not_ours,  ///< it was no longer ours; nothing was changed
};

enum class record_answer {
  created,  ///< the election had no record; now it has one
  existed,  ///< it had one already; nothing was changed
};

/// A candidate as the store knows it (async_candidates): a store of this
/// election that tried to acquire, or renewed, within the last two ttls (a
/// kind whose candidates keep a session: while the session lives).
struct candidate_info {
  std::string node;  ///< its node id
  int priority = 0;  ///< its store_identity's
  /// How long it has been a candidate without a gap; negative = the store
  /// cannot tell.
  milliseconds live_for{-1};
  /// How long ago, at the store's answer, it last tried to acquire or
  /// renewed (a kind that registers at most so often: its last
  /// registration); negative = the store cannot tell (a kind whose
  /// candidates keep a session).
  milliseconds last_attempt_ago{-1};
  /// How much is left, at the store's answer, of the cool-down it registered
  /// after it gave the lease up (register_cooldown); 0 = none, or the kind
  /// does not record one.
  milliseconds cooling_down_for{0};
  /// lease.failsafe peers: where its peer port is, as its registration says
  /// ("" = none published).
  std::string peer_address{};
  /// Its store_identity's card, as its registration says ("" = none: a
  /// version before cards). Read with parse_candidate_card.
  std::string card{};
};

/// Who holds the lease, as a look without an attempt finds it
/// (lease_store::async_look).
struct lease_holder {
  std::string node;         ///< its node id; "" = nobody (free, or reserved)
  std::uint64_t token = 0;  ///< its term's fencing token; 0 = none
};

// --- events ------------------------------------------------------------------

namespace store_events {
/// Worth trying now: another node announced that it released the lease, or
/// announcements may have been missed (the store's watch reconnected).
/// This node's own releases are not reported to it.
struct released {};
/// A new term was announced (any node's, this one's too).
struct acquired {
  std::string holder;
  std::uint64_t token = 0;
};
/// This store found that the store lost data or changed servers (a restart,
/// a failover): every acquisition is held back for one ttl. Only stores that
/// detect it hear it; every other candidate meets the hold-back as held_back
/// answers.
struct reset {
  std::string why;
  /// The election's record was missing: a first start on this store cannot
  /// be told apart from lost data. False for a detected restart or failover.
  bool record_missing = false;
  /// For a store made of several servers: the one that reset (its redacted
  /// endpoint); only it holds its grants back, the others decide meanwhile.
  /// "" = the whole store.
  std::string member;
  /// What happened, said whole, when the store knows it was neither lost
  /// data nor a failover (a ZooKeeper session the ensemble expired: its data
  /// is intact). "" = lost data or a failover, as far as the store can tell.
  std::string what{};
};
/// Whether release and term announcements reach this node right now. While
/// false, a standby must not wait for an announcement it may never hear.
struct wakeups {
  bool trusted = false;
  /// Why not, when the store knows (the watch's failure): logged, so an
  /// operator learns that standbys fall back to their timers, and why.
  std::string why;
};
/// Something the store did or could not do on its own that decides nothing
/// and is worth a log line: a shortcut taken (a debug line), or one refused
/// and given up (a warning, said once).
struct note {
  bool warning = false;
  std::string text;
};
/// The election's live candidates, as async_candidates answers them, read by
/// a renewal of this store (a store whose lists_with_renewals() is true): a
/// leader then lists them with every renewal at no call of its own.
struct listed {
  std::vector<candidate_info> candidates;
};
}  // namespace store_events

using store_event =
    std::variant<store_events::released, store_events::acquired, store_events::reset,
                 store_events::wakeups, store_events::note, store_events::listed>;

// --- status ------------------------------------------------------------------

enum class link_state { disconnected, connecting, connected };
/// The announcements' subscription: not asked for, being set up, up, or down
/// and waiting to retry.
enum class wakeup_state { off, connecting, subscribed, disconnected };

const char* to_string(link_state s);
const char* to_string(wakeup_state s);

/// One server of a store that has several (a quorum's masters), or one that
/// tells it where its master is (a sentinel, a cluster's seed node).
struct store_member_status {
  std::string endpoint;  ///< redacted: no password
  link_state link = link_state::disconnected;
  bool holds_lease = false;
  std::string last_error;  ///< "" = none yet
  /// Why this server last held grants back for one ttl (it restarted, its
  /// record was missing); "" = not while this process ran.
  std::string fence;
  /// "master", "sentinel" or "seed": what the server is to the store.
  std::string role = "master";
};

/// What a store can say about itself, for `baton status`, /status and metrics.
struct store_status {
  std::string kind;      ///< "redis", ...: as store.kind spells it
  std::string label;     ///< for people, in log lines: "Redis", ...
  std::string endpoint;  ///< redacted description of where the lease lives
  /// Stores may connect lazily: disconnected before the first call.
  link_state link = link_state::disconnected;
  wakeup_state wakeups = wakeup_state::off;
  /// The most recent failure ("" = none yet); kept after later successes.
  std::string last_error;
  /// Its store_error_kind ("" = none yet).
  std::string last_error_kind;
  /// When it happened, on the monotonic clock.
  std::optional<time_point> last_error_at;
  /// Why the store last reset ("" = never, while this process ran).
  std::string last_reset;
  /// Per server, for stores made of several; empty otherwise.
  std::vector<store_member_status> members;
};

// --- peer-confirmed leadership ------------------------------------------------

/// What a grant, a renewal or a resume writes into the election's record
/// with lease.failsafe peers (docs/safety.md, F1): the live candidates,
/// this node aside, and the list's number, which rises with each write of
/// a term. The store keeps the list of the highest number it applied.
struct failsafe_list {
  std::uint64_t seq = 0;
  std::vector<failsafe_peer> peers;
};

/// The promise a candidate keeps (F9), as its registration carries it.
struct failsafe_promise {
  std::string leader;
  std::uint64_t token = 0;
  milliseconds remaining{0};  ///< from when the call is sent
};

/// An acquire with lease.failsafe peers.
struct failsafe_acquire {
  /// False: register only (this node keeps a promise or started less than a
  /// ttl ago, F7); the store grants nothing, and answers held_back with
  /// `why` set, or held, or a failsafe hold.
  bool may_win = true;
  /// The highest token this node cleared (F6): a record or a registered
  /// promise of a term up to it holds nothing back. 0 = none.
  std::uint64_t cleared_token = 0;
  /// What a grant writes into the record (list number 1 of the new term).
  failsafe_list list;
  /// The promise this node keeps, for its registration; none = no promise.
  std::optional<failsafe_promise> promise;
};

/// The calls of a store that carries out lease.failsafe peers
/// (lease_store::failsafe()). Each completes exactly once, never inline,
/// as the port's own calls.
class failsafe_calls {
 public:
  using acquire_handler = std::function<void(store_error, acquire_answer)>;
  using renew_handler = std::function<void(store_error, renew_answer)>;

  virtual ~failsafe_calls() = default;
  /// async_acquire, with the record of the mode: a grant writes the term,
  /// its token and `a.list` into it; a free lease is refused with a
  /// failsafe hold while the record holds another unreleased term, or a
  /// candidate registers a live promise, above `a.cleared_token`.
  virtual void async_acquire(const failsafe_acquire& a, acquire_handler handler) = 0;
  /// async_renew, writing `list` into the record when its number is above
  /// the record's (F1).
  virtual void async_renew(const failsafe_list& list, renew_handler handler) = 0;
  /// Takes this node's term `token` up again after the store was away (F8):
  /// renewed only if nobody else holds the lease and the record holds this
  /// node's unreleased term `token`, or nothing (the store lost its data).
  /// It writes the lease with the same value, lifts the token counter to at
  /// least `token`, writes the record as a renewal does, announces the term
  /// and passes a reset's hold-back. lost otherwise: another term exists.
  virtual void async_resume(std::uint64_t token, const failsafe_list& list,
                            renew_handler handler) = 0;
};

// --- the port ----------------------------------------------------------------

class lease_store {
 public:
  using acquire_handler = std::function<void(store_error, acquire_answer)>;
  using renew_handler = std::function<void(store_error, renew_answer)>;
  using release_handler = std::function<void(store_error, release_answer)>;
  using record_handler = std::function<void(store_error, record_answer)>;
  using candidates_handler = std::function<void(store_error, std::vector<candidate_info>)>;
  using look_handler = std::function<void(store_error, lease_holder)>;
  using event_listener = std::function<void(const store_event&)>;

  virtual ~lease_store() = default;

  virtual const store_identity& identity() const = 0;

  /// Take the lease for ttl if it is free or already ours. Every success
  /// takes the next fencing token (re-acquiring a lease this node already
  /// held too): tokens strictly increase across acquisitions. A new term
  /// (the lease was free) is announced to every watcher, this node's too.
  virtual void async_acquire(acquire_handler handler) = 0;
  /// Extend our lease to ttl from now, only if it is still ours.
  virtual void async_renew(renew_handler handler) = 0;
  /// Free the lease only if it is ours, and announce the release.
  virtual void async_release(release_handler handler) = 0;
  /// Free our lease for `to_node` alone (a switchover): as async_release
  /// does (only if ours; announced as a release; not_ours changes
  /// nothing), except that for `window` after it only a store whose node
  /// id is `to_node` may acquire it. Any other candidate's acquire answers
  /// held, with reserved_for = to_node and remaining = the time left of the
  /// window; after the window the lease is free for everyone. to_node's
  /// acquire starts a new term: the next token, announced as any is.
  virtual void async_hand_over(const std::string& to_node, milliseconds window,
                               release_handler handler) = 0;
  /// The live candidates of this election (see candidate_info), in no
  /// particular order. Every acquire attempt and every renewal registers its
  /// store (node id, priority) as they run: a candidate costs the store no
  /// call of its own. A crashed candidate stays listed for up to two ttls.
  virtual void async_candidates(candidates_handler handler) = 0;
  /// True: every renewal that succeeds also reads the live candidates and
  /// tells the watcher (store_events::listed), so a leader need not call
  /// async_candidates beside it. A store that cannot says false.
  virtual bool lists_with_renewals() const { return false; }
  /// This candidate makes no acquire attempt for `cooldown` from now (a
  /// resign, a switchover or a preemption ended its term): its registration
  /// says so (candidate_info::cooling_down_for) until its next attempt, so
  /// that a leader does not hand over to a node that would not take the
  /// lease. Best effort, as every registration is: nothing is answered. A
  /// kind that does not record it does nothing.
  virtual void register_cooldown(milliseconds cooldown) { (void)cooldown; }
  /// From now on this candidate's registration carries `card` (a drain or
  /// an undrain changed its standing): written with the next attempt or
  /// renewal, or by async_register.
  virtual void update_card(std::string card) = 0;
  /// Registers this candidate (node id, priority, card) without trying to
  /// take the lease, and answers who holds it: what a candidate that may not
  /// lead (drained, never leading) does instead of its attempts, so that it
  /// stays listed, as such, and knows its leader. The registration is best
  /// effort, as every one is (lease.failsafe peers on the Redis kinds: none,
  /// since every listed candidate there is a peer to ask).
  virtual void async_look(look_handler handler) = 0;
  /// Create the election's record if it has none (`baton init-store`), so
  /// that its first start is not held back as a store that lost its data
  /// would be. Creating it while a leader may be working on a store that did
  /// lose its data would skip that hold-back: only for a new election, or
  /// with every candidate stopped.
  virtual void async_create_record(record_handler handler) = 0;
  /// Start reporting events to `listener` (replacing any earlier one), and
  /// start listening for announcements. Events arrive on the store's
  /// executor; the listener may close or destroy the store.
  virtual void watch(event_listener listener) = 0;
  virtual store_status status() const = 0;
  /// The calls of lease.failsafe peers; nullptr (the default) for a kind
  /// that does not carry the mode out, which the config refuses for it
  /// (store_kind::peer_confirmed_leadership).
  virtual failsafe_calls* failsafe() { return nullptr; }
  /// Final: cancels everything in flight (handlers complete with
  /// operation_aborted, once each), stops the events; later calls complete
  /// with operation_aborted.
  virtual void close() = 0;
};

}  // namespace baton

template <>
struct std::is_error_condition_enum<baton::store_errc> : std::true_type {};
