// The store's side of the loop: the machine's acquire, renew and release
// carried out on the store port (baton/lease_store.hpp), and what comes back
// turned into machine events, both each call's answer and the store's own
// events (a release or a new term announced, a reset, whether announcements
// reach this node). With them go the lines each answer calls for
// (narration.hpp), the records the operator's views keep of the store
// (operator_views.hpp) and the moments of a handover (handover_timing.hpp).
//
// It decides nothing: an answer goes to the machine as the store gave it,
// or as the rules of lease.failsafe peers read it (failsafe_side.hpp), and
// one cancelled by the store's close() is dropped. Events are handed to
// the driver, which steps them in order.
#pragma once

#include <functional>

#include "baton/config.hpp"
#include "baton/election_machine.hpp"
#include "baton/lease_store.hpp"
#include "failsafe_side.hpp"
#include "handover_timing.hpp"
#include "narration.hpp"
#include "operator_views.hpp"

namespace baton {

class store_side {
 public:
  struct hooks {
    /// Hands an event to the driver.
    std::function<void(event)> post;
    /// An acquire was won, after the machine heard it.
    std::function<void()> won;
    /// Another node's new term was announced, after the machine heard it:
    /// no transition follows, so whatever shows who leads is told here.
    std::function<void()> term_announced;
    /// The candidates as last listed (the record's list, lease.failsafe peers).
    std::function<const candidate_snapshot&()> candidates;
    /// The candidates a renewal read (store_events::listed).
    std::function<void(std::vector<candidate_info>)> listed;
  };

  /// `cfg` is read at each use (node id, election, ttl); every reference
  /// must outlive this object.
  store_side(const config& cfg, lease_store& store, operator_views& views, narrator& narration,
             handover_timing& timing, hooks h);

  /// lease.failsafe peers: its calls go through `side` and the store's
  /// failsafe calls from now on (both must outlive this object).
  void use_failsafe(failsafe_side& side, failsafe_calls& calls) {
    failsafe_ = &side;
    failsafe_calls_ = &calls;
  }

  /// Listens to the store's events from now on.
  void watch();
  /// actions::acquire, actions::renew and actions::release.
  void acquire();
  /// A node that may not lead: registers and learns who holds the lease
  /// (lease_store::async_look), posted as events::peer_acquired.
  void look();
  void renew();
  void release(const actions::release& a);

  /// When the store last answered that this node's release freed the lease;
  /// {} = never.
  time_point released_at() const { return released_at_; }

 private:
  void on_event(const store_events::released& e);
  void on_event(const store_events::acquired& e);
  void on_event(const store_events::reset& e);
  void on_event(const store_events::wakeups& e);
  void on_event(const store_events::note& e);
  void on_event(const store_events::listed& e);
  void on_acquire_answer(time_point sent, store_error e, const acquire_answer& r);
  void on_renew_answer(time_point sent, std::uint64_t seq, store_error e, renew_answer r);
  void resume(time_point lost_at);
  void post_renew_failed(const store_error& e);
  void post_lost(const std::string& detail);
  events::busy held_back_until(time_point sent, time_point now, const acquire_verdict& verdict,
                               const acquire_answer& r) const;

  const config& cfg_;
  lease_store& store_;
  operator_views& views_;
  narrator& narration_;
  handover_timing& timing_;
  hooks hooks_;
  // The store's latest word on whether its announcements reach this node
  // (store_events::wakeups): a standby waits for one only while they do.
  bool wakeups_trusted_ = false;
  time_point released_at_{};
  failsafe_side* failsafe_ = nullptr;
  failsafe_calls* failsafe_calls_ = nullptr;
};

}  // namespace baton
