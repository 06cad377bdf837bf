// Succession: who leads after this node, and when it hands over. The leader
// keeps the election's candidates listed (with every renewal), hands over to
// a live candidate of a higher priority once lease.preempt_delay has passed
// (preemption), and answers the socket's `switchover` and `resign` commands;
// each step down reaches the machine as an events::resign, whose release is
// reserved for the successor for its hand-over window.
//
// It reads the machine through a narrow, read-only view and posts its
// events to the driver, which steps them in order: it never steps the
// machine itself. What it decides is pure and tested as tables
// (tests/unit/daemon/succession_test.cpp): the preemption due now, and the
// question a switchover is vetted with (switchover_vetting.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "baton/app_socket.hpp"
#include "baton/config.hpp"
#include "baton/election_machine.hpp"
#include "baton/lease_store.hpp"
#include "switchover.hpp"
#include "switchover_vetting.hpp"

namespace baton {

/// What succession may read of the election machine, and nothing else.
class leadership_view {
 public:
  explicit leadership_view(const election_machine& m) : m_(m) {}
  bool can_resign() const { return m_.can_resign(); }
  state current() const { return m_.current(); }
  const std::string& handing_over_to() const { return m_.handing_over_to(); }
  time_point term_started() const { return m_.term_started(); }
  std::uint64_t token() const { return m_.token(); }

 private:
  const election_machine& m_;
};

/// The options succession reads, as of now (a SIGHUP may change the
/// cool-down and the preemption delay).
struct succession_settings {
  std::string self;  ///< node_id
  int priority = 0;
  milliseconds ttl{0};
  milliseconds renew_interval{0};
  milliseconds preempt_delay{0};
  milliseconds resign_cooldown{0};
};
succession_settings succession_settings_of(const config& cfg);

/// The preemption due at `now`: the candidate a leader (`can_resign`, not
/// already handing over) that has led since `term_started` should hand over
/// to (preemption_target, settled for the longer of preempt_delay and the
/// cool-down); nullopt when none.
std::optional<candidate_info> preemption_due(bool can_resign, bool handing_over,
                                             time_point term_started,
                                             const candidate_snapshot& known,
                                             const succession_settings& s, time_point now);

/// What a switchover request is vetted with at `now` (switchover_vetting.hpp).
switchover_question switchover_question_for(const switchover_request& r,
                                            const succession_settings& s, time_point now);

class succession {
 public:
  /// `cfg` is read at each use (it may be reloaded); `store` lists the
  /// candidates; `post` hands an event to the driver; `count_switchover`
  /// counts a hand-over for the metrics.
  succession(const config& cfg, lease_store& store, leadership_view machine,
             std::function<void(event)> post, std::function<void()> count_switchover);

  /// Lists the candidates now (the leader's renewal and won acquire), unless
  /// a listing is in flight; a new list may call for preemption.
  void refresh_candidates();
  /// The leader's renewal: lists the candidates, unless the store lists
  /// them with every renewal (lease_store::lists_with_renewals; listed()
  /// then hears them).
  void refresh_with_renewal();
  /// A list the store read on its own (store_events::listed).
  void listed(std::vector<candidate_info> list);
  /// Lists them when the list is older than a ttl (a standby's status).
  void refresh_stale_candidates();
  /// Lists them when the list lacks `leader` (the known leader, whose
  /// advertise address the status and /leader show; "" = none known), at
  /// most once per tenth of a ttl whatever comes of it: a probe of /leader
  /// costs the store nothing once the leader is listed.
  void refresh_for_leader(const std::string& leader);
  /// The candidates as last listed, for the status.
  const candidate_snapshot& candidates() const { return candidates_; }

  /// The socket's `switchover` from `peer`: the reply, or throws
  /// std::runtime_error with what to send back.
  nlohmann::json switchover(const nlohmann::json& request, const peer_info& peer);
  /// The socket's `resign` from `peer`: the reply, or throws.
  nlohmann::json resign(const peer_info& peer);
  /// A leader being drained: the live candidate a switchover to which would
  /// be accepted (eligible, live, not cooling down, not overdue; this node,
  /// which will not come back, outranks nobody), the highest priority first,
  /// then the longest live, then the smallest node id. Throws
  /// std::runtime_error saying why none can take over.
  candidate_info drain_successor() const;
  /// Steps down for a drain, the lease reserved for `to` (drain_successor's)
  /// for a ttl; `peer` asked for it.
  void hand_over_for_drain(const candidate_info& to, const peer_info& peer);

 private:
  void consider_preemption();

  const config& cfg_;
  lease_store& store_;
  leadership_view machine_;
  std::function<void(event)> post_;
  std::function<void()> count_switchover_;
  candidate_snapshot candidates_;
  bool candidates_in_flight_ = false;
  std::optional<time_point> leader_refresh_at_;
};

}  // namespace baton
