// The daemon's side of peer-confirmed leadership (lease.failsafe peers;
// docs/safety.md, rules F1 to F9): the pure rules of src/failsafe/ carried
// out on this node, whichever role it has at the moment.
//
// - As a leader: every grant, renewal and resume carries the live
//   candidates as the record's list, with a number that rises in the term
//   (peer_list follows them). When a renewal fails because the store cannot
//   be reached, it asks every listed peer to confirm, at once and every
//   renew interval while the store stays away; a round every peer confirmed
//   reaches the machine as events::confirmed. A renewal answered "lost"
//   while rounds run is tried again as a resume.
// - As a peer: the peer port's requests, answered from peer_promises.
// - As a would-be taker: acquires that can win only when it keeps no
//   promise and started a ttl ago, a grant given back unused otherwise, and
//   a failsafe hold cleared (clearance) before the next attempt names it.
//
// It decides nothing the rules do not: it feeds them answers and times, and
// hands their verdicts to the machine as events (through `post`) and to the
// store as call arguments. Requests go out through `send`, the round's
// timer through `arm_round`, so tests drive it without sockets or time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/config.hpp"
#include "baton/election_machine.hpp"
#include "baton/failsafe_leader.hpp"
#include "baton/failsafe_peer.hpp"
#include "baton/failsafe_taker.hpp"
#include "baton/lease_store.hpp"
#include "baton/metrics.hpp"
#include "baton/peer_port.hpp"
#include "baton/peer_wire.hpp"
#include "switchover.hpp"

namespace baton {

/// Whether a renewal that failed with `ec` starts (or keeps up) rounds of
/// confirmations: the store could not be reached (unavailable, timeout,
/// no_quorum), never an answer (lost, refused, auth, protocol).
bool store_unreachable(std::error_code ec);

/// The candidates a leader lists in the record (F1): every one the store
/// listed as live, and every one that answered this node, within the last
/// `horizon` (two ttls, as long as a registration lives), `self` aside. A
/// store that came back empty lists nobody until its candidates have tried
/// again, and the peers that confirmed the rounds a moment ago are alive:
/// listing them keeps the next outage's rounds possible. Listing more
/// peers than the registry is safe (a round needs every listed one).
class recent_peers {
 public:
  recent_peers(std::string self, milliseconds horizon)
      : self_(std::move(self)), horizon_(horizon) {}

  /// The store's listing `known` (made at known.at), read at `now`.
  void listed(const candidate_snapshot& known, time_point now);
  /// `node` answered at `now` (a confirmation, a refusal: it is alive).
  void answered(const std::string& node, time_point now);
  /// The list at `now`, sorted by node id.
  std::vector<failsafe_peer> list(time_point now) const;

 private:
  struct seen {
    std::string address;
    time_point at{};
  };
  std::string self_;
  milliseconds horizon_;
  std::map<std::string, seen> seen_;
};

/// What the machine is told instead of an acquire's own answer, when the
/// failsafe rules change it: a busy answer held back until `until`, `why`.
struct acquire_verdict {
  bool give_back = false;  ///< a grant won while this node may not take: release it unused
  time_point retry_at{};
  std::string why;
};

class failsafe_side {
 public:
  struct hooks {
    /// Hands an event to the driver.
    std::function<void(event)> post;
    /// Call on_round_due() at this time (replacing any earlier one).
    std::function<void(time_point)> arm_round;
    /// POSTs one signed line to a peer's address; the answer comes back once.
    std::function<void(const std::string& address, std::string line, milliseconds timeout,
                       peer_client::handler done)>
        send;
    /// The monotonic clock (tests give their own).
    std::function<time_point()> now = [] { return mono_clock::now(); };
  };

  /// `cfg` is read at each use; `secret` is the peer channel's (checked by
  /// the config); `started` is when this process started (F7).
  failsafe_side(const config& cfg, std::string secret, const election_machine& machine,
                hooks h, time_point started);

  // --- the store's calls and answers ----------------------------------------

  /// The arguments of the next acquire at `now`: may it win, the highest
  /// token cleared, the list a grant writes, the promise kept.
  failsafe_acquire acquire_args(const candidate_snapshot& known, time_point now);
  /// The acquire sent at `sent` was granted `token` at `now`: the term
  /// begins, unless this node may not take (a promise made meanwhile):
  /// then the verdict says to give it back.
  std::optional<acquire_verdict> granted(std::uint64_t token, time_point now);
  /// An acquire that did not win: what the machine hears instead of its
  /// own answer (a hold to clear, a register-only attempt), or nullopt.
  std::optional<acquire_verdict> refused(const acquire_answer& a, time_point now);
  /// Whether this node keeps a promise now (F9: its failed acquires retry
  /// every retry_interval).
  bool keeps_promise(time_point now) const { return promises_.kept(now).has_value(); }
  /// A term the store named (a held answer, an announcement).
  void saw_term(const std::string& leader, std::uint64_t token);

  /// The list the next renewal or resume writes (numbered, and noted as
  /// sent): recent_peers after the listing `known`.
  failsafe_list next_list(const candidate_snapshot& known);
  /// The write numbered `seq` succeeded (a renewal or a resume): the store
  /// answers again.
  void written(std::uint64_t seq, time_point now);
  /// A renewal failed with `e` at `now`: rounds start or go on when the
  /// store could not be reached, and end when it answered otherwise.
  void renew_failed(const store_error& e, time_point now);
  /// A renewal answered lost at `now`: whether to try a resume instead
  /// (rounds run and their deadline has not passed, F8).
  bool resume_instead(time_point now);
  /// The resume answered lost: another term exists.
  void resume_lost();
  /// The token of the term this node leads (0 = none).
  std::uint64_t term_token() const { return rounds_term_.token; }

  // --- rounds -----------------------------------------------------------------

  /// The round timer fired at `now`.
  void on_round_due(time_point now);

  // --- the peer port ------------------------------------------------------------

  /// One request's body, received at `now`.
  peer_answer on_request(std::string_view body, time_point now);
  /// Requests refused by the peer port so far (its own count).
  void set_port_refusals(std::size_t n) { port_refusals_ = n; }

  // --- what operators see -------------------------------------------------------

  /// The status object's "failsafe" part at `now`.
  nlohmann::json report(time_point now) const;
  /// The metrics' part at `now`.
  metrics::failsafe_gauges gauges(time_point now) const;

 private:
  void begin_round(time_point now);
  void on_confirm_answer(const std::string& peer, const peer_wire::message& request,
                         const std::string& error, const std::string& body);
  void ask_to_clear(const std::vector<std::string>& whom, time_point now);
  void on_clear_answer(const peer_wire::message& request, const std::string& error,
                       const std::string& body);
  std::string address_of(const std::string& node) const;
  bool leads_now() const;
  std::optional<time_point> own_app_until() const;
  milliseconds request_timeout() const;
  std::string signed_line(const peer_wire::message& m) const;
  peer_wire::message request_to(peer_wire::kind what, const std::string& to,
                                const failsafe::term_id& term, time_point now) const;
  void note_round_shortfall();

  const config& cfg_;
  std::string secret_;
  const election_machine& machine_;
  hooks hooks_;
  failsafe::timing timing_;
  failsafe::peer_promises promises_;

  // Where each node's peer port is, from every list sent and every hold.
  std::map<std::string, std::string> addresses_;
  // Whom the record's lists name.
  recent_peers recent_;
  // The leader's side: the lists of the term (or of the acquire in flight),
  // its rounds while the store is away.
  failsafe::peer_list lists_;
  std::uint64_t next_seq_ = 1;
  failsafe::term_id rounds_term_;
  std::optional<failsafe::confirmation_rounds> rounds_;
  bool store_away_ = false;
  std::optional<time_point> round_begun_;
  // Why peers of the current round did not confirm (transport errors, no
  // address, refusals): the status and the shortfall's log line.
  std::map<std::string, std::string> round_trouble_;
  std::uint64_t rounds_counted_ = 0;
  bool said_on_confirmations_ = false;
  std::string shortfall_said_;
  // The taker's side.
  std::optional<failsafe::clearance> clearance_;
  std::uint64_t cleared_token_ = 0;
  bool last_may_win_ = true;
  // What was said once per term or hold.
  failsafe::term_id confirmed_said_;
  std::size_t port_refusals_ = 0;
};

}  // namespace baton
