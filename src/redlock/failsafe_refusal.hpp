// lease.failsafe peers on Redlock: what the masters' failsafe holds make of
// a refused acquire round, as pure functions over the round's answers (no
// sockets, no clock). Part of the quorum combiner (quorum.hpp), kept apart
// because its rules are the mode's own (docs/stores/redlock.md, "Peer-
// confirmed leadership").
//
// A won term's record is on a majority of masters (its write-back), and
// each renewal's list is written where the renewal renewed, a majority for
// every renewal its leader counts. A master that missed some renewals (it
// was down) keeps an older list of the same term, and a peer listed only
// there may no longer be asked by the leader: clearing the term with it
// would prove nothing. So a record's hold names the newest list among the
// record holds of that term, and only once a majority of masters answered
// one: a majority meets every majority that acknowledged a list, so the
// newest list among them is one the leader still asks.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "quorum.hpp"

namespace baton::redlock_detail {

/// Turns `out`, the refusal of a round whose masters answered `answers`
/// (one per master, nullopt = no answer yet), into what the holds say:
/// - some master held a record of an unreleased term: the newest such term
///   (highest token) is a failsafe hold, with the newest list its masters
///   hold, when a majority of all masters answered that term's hold; when
///   fewer did, `out` stays held if another node holds the lease, and is
///   otherwise held back without a hold (`why` says so): refused, never
///   cleared on a list that may be stale;
/// - else some master held back for a registered promise: a failsafe hold
///   for the highest promised token, naming every candidate that promised
///   it on any master;
/// - else a master that only registered (may_win false) makes a held-back
///   answer say so (`why`).
void apply_failsafe_holds(const std::vector<std::optional<master_answer>>& answers,
                          acquire_answer& out);

/// True when a record's hold was heard from fewer than a majority of the
/// masters while some have yet to answer: their answers may make it one.
bool failsafe_hold_unsettled(const std::vector<std::optional<master_answer>>& answers);

}  // namespace baton::redlock_detail
