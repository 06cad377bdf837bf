// The stop gate: decides when the election machine may hear that the app has
// stopped (events::app_stopped), which is what lets it release the lease and
// so lets the next leader start.
//
// Without socket.require_ack the gate passes the app controller's report
// straight through. With it, a stop is complete only when BOTH the app
// controller reported that the hooks and child have stopped AND one of:
// - a client acknowledged the stop ({"cmd":"stopped","token":N}) for this
//   term's token (one acknowledgement is enough, from any allowed client);
// - no client heard of this term (none was subscribed when its start,
//   renewed or stop event went out, and none read a status saying this node
//   leads), so no socket app can have been told to work: nobody to wait for;
// - the stop's kill deadline (kill_at, which the machine may move) passed, or
//   the machine sent the kill anyway (the operator's second signal), AND the
//   latest lease deadline any subscriber was given (valid_until of a start or
//   renewed event, or of a status read) passed too: a client that missed the
//   stop (its connection dropped) works on until that deadline, which is
//   never past the lease's validity.
// A subscriber that disconnects does not count as an acknowledgement: it may
// still be working until the deadline it was last given.
//
// Pure: inputs carry the time, outputs are "release now" booleans (each stop
// releases exactly once) and the next time worth a look (wake_at). No I/O, no
// clock reads, so it is unit-tested with a fake clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "baton/time.hpp"

namespace baton {

class stop_gate {
 public:
  /// `require_ack`: socket.require_ack.
  explicit stop_gate(bool require_ack) : require_ack_(require_ack) {}

  /// Whether stops of this daemon wait for an acknowledgement (the stop
  /// event's "ack_required").
  bool ack_required() const { return require_ack_; }

  /// A term began (start_app) with fencing token `token`: forget the
  /// previous stop and who heard what.
  void on_term(std::uint64_t token);
  /// An event of the term (start or renewed) went out to `subscribers`
  /// clients, or (with 1) a client read a status saying this node leads;
  /// `deadline` is the lease validity it carried (a client may work until
  /// then unless it hears the stop). Ignored while a stop is under way.
  void on_published(std::size_t subscribers, time_point deadline = {});
  /// A client read a status: `says_leading` is its is_leader, `deadline`
  /// the lease validity it showed. Only a status saying this node leads
  /// counts as telling (as on_published(1, deadline)).
  void on_status_read(bool says_leading, time_point deadline);
  /// The app is told to stop (stop_app) at `now`, to be done by `kill_at`;
  /// the stop event goes out to `subscribers` clients.
  void on_stop(time_point kill_at, std::size_t subscribers, time_point now);
  /// The machine moved the kill deadline of the stop under way.
  void on_kill_at(time_point kill_at);

  /// The machine sent SIGKILL (kill_app). True: deliver app_stopped now.
  bool on_kill(time_point now);
  /// The app controller reported that the hooks and child stopped. True:
  /// deliver app_stopped now. Outside a stop it always passes (true).
  bool on_app_stopped(time_point now);
  /// The gate's timer (armed at wake_at()) fired. True: deliver now.
  bool on_timer(time_point now);

  /// Outcome of an acknowledgement.
  struct ack_result {
    /// "" when accepted; else the error to send back ("nothing to
    /// acknowledge", "token 4 is not the stopping term's (5)").
    std::string error;
    /// True: deliver app_stopped now.
    bool release = false;
  };
  /// A client sent {"cmd":"stopped"} with `token` (nullopt = none given,
  /// meaning the stop under way) at `now`.
  ack_result on_ack(std::optional<std::uint64_t> token, time_point now);

  /// When on_timer() should be called next while the app has stopped and
  /// only the acknowledgement is missing: the later of the kill deadline
  /// (unless the kill was sent) and the latest deadline a subscriber was
  /// given; nullopt otherwise.
  std::optional<time_point> wake_at() const;

  /// A stop is under way and app_stopped was not delivered yet.
  bool stopping() const { return phase_ == phase::stopping; }
  /// The hooks and child have stopped; only the acknowledgement is missing.
  bool waiting_for_ack_only() const;
  /// An acknowledgement for the stop under way (or the last one) arrived.
  bool acknowledged() const { return acked_; }
  /// The token of the current term.
  std::uint64_t token() const { return token_; }

 private:
  enum class phase { idle, stopping, released };

  // True (once) when every condition holds; moves to `released`.
  bool try_release(time_point now);

  bool require_ack_;
  phase phase_ = phase::idle;
  std::uint64_t token_ = 0;
  bool told_ = false;  // a subscriber heard an event of this term
  time_point told_until_{};  // the latest deadline such an event carried
  time_point kill_at_{};
  bool app_down_ = false;
  bool acked_ = false;
  bool deadline_passed_ = false;
};

}  // namespace baton
