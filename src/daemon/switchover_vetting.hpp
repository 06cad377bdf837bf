// Whether a leader may hand over to the node a switchover names, judged from
// what it knows of the election's candidates: pure, unit-tested as a table,
// and the driver only carries the verdict out. A switchover to a node that
// will not take the lease leaves the election leaderless for the window (a
// node not listed, frozen or stopped, or cooling down after it gave the lease
// up); one to a node that a live candidate outranks is undone by preemption
// once lease.preempt_delay has passed, so it is refused unless forced, and
// then accepted with a warning that says so.
#pragma once

#include <optional>
#include <string>

#include "baton/time.hpp"
#include "switchover.hpp"

namespace baton {

/// What the leader knows and was asked, besides the candidates' list.
struct switchover_question {
  std::string to;    ///< the node asked for
  std::string self;  ///< the leader's node id
  int own_priority = 0;
  time_point now;
  /// A list older than this cannot tell (two renew intervals and a margin:
  /// the leader lists them with every renewal).
  milliseconds list_max_age{0};
  /// The longest a live candidate goes between acquire attempts (a standby
  /// tries again just after the lease could end: the ttl, plus its stagger,
  /// plus a margin); a target whose last attempt is older is frozen, stopped
  /// or cut off from the store.
  milliseconds attempt_gap{0};
  /// lease.preempt_delay: how long after it takes the lease a leader hands
  /// it to a live candidate of a higher priority.
  milliseconds preempt_delay{0};
  /// Hand over to an outranked target anyway (`baton switchover --force`).
  bool force = false;
};

enum class switchover_decision {
  accept,     ///< hand over
  warn,       ///< hand over, and tell the operator `why`
  refuse,     ///< do not; `why` says why
};

struct switchover_verdict {
  switchover_decision decision = switchover_decision::accept;
  /// The refusal or the warning, in words for the operator; "" to accept.
  std::string why;
  /// A refusal's: how soon the target could take the lease (the rest of its
  /// cool-down); nullopt = not known (it must first be heard from again).
  std::optional<milliseconds> ready_in;
};

/// Judges the switchover `q` against `known`, in this order: the leader
/// itself, a list too old to tell, a target not listed, a target cooling
/// down, a target with no attempt within `attempt_gap` (each refused), then a
/// target a live candidate outranks (the leader included): refused, or with
/// `force` accepted with a warning. A candidate that is itself past the
/// attempt gap outranks nobody: it will not take the lease back.
switchover_verdict vet_switchover(const switchover_question& q, const candidate_snapshot& known);

}  // namespace baton
