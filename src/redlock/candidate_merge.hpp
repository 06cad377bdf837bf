// The Redlock store's candidates: every master keeps its own registry (each
// acquire attempt and renewal registers on every master it reaches), and
// the store's list merges what the masters that answered say. Pure: the
// store feeds in each master's live registrations.
//
// The merge is a union: a node any answering master lists has tried or
// renewed there within two ttls, by that master's clock, so it is alive; a
// master that restarted empty or missed an attempt must not hide it. A
// candidate that reaches only a minority of masters is listed too, though
// it cannot win: a switchover to it reserves the lease for nothing more than
// the window. A crashed candidate leaves every master's list within two ttls,
// so it leaves the union then too.
#pragma once

#include <vector>

#include "baton/lease_store.hpp"
#include "redis/redis_reply.hpp"

namespace baton::redlock_detail {

/// The union of `per_master` (the live registrations of each master that
/// answered), one entry per node id, sorted by node id. A node's most
/// recent registration (the longest time left) tells its current process
/// (the nonce) and priority; its live_for is the longest any master reports
/// for that process (the registration that began first without a gap: a
/// master that restarted empty saw less of it); its last attempt is that of
/// the most recent registration, and its cool-down the longest any master
/// holds for that process (one the cool-down did not reach shows none). A
/// master that still holds
/// an earlier process's line (the restarted one has not reached it) is
/// ignored: the restart began a new life.
std::vector<candidate_info> merge_candidates(
    const std::vector<std::vector<registered_candidate>>& per_master);

}  // namespace baton::redlock_detail
