// What one Redlock master's script replies mean, as pure functions (no
// sockets): the acquire script in "grant" mode and the write-back script
// (src/redis/scripts.hpp). A reply of unexpected shape is an error with a
// detail, never a crash.
#pragma once

#include <string>

#include "quorum.hpp"
#include "redis/redis_reply.hpp"

namespace baton::redlock_detail {

struct grant_reply {
  master_answer answer;
  /// This very call found the master's token counter missing and raised its
  /// fence (the master lost its data, or the election is new there).
  bool found_reset = false;
};

/// `{1, counter, was_free}` = granted; anything the single-server acquire
/// script answers when busy = held / held_back (parse_acquire_reply), a
/// hand-over's reservation for another node being held with reserved_for.
/// With lease.failsafe peers a failsafe hold is held back with its hold and
/// list number, and a register-only attempt held back with its `why`.
parsed_reply<grant_reply> parse_grant_reply(const redis_reply& reply);

/// What the renew-or-take script did on one master.
enum class renewal { renewed, taken, not_ours };

/// 1 = renewed, 2 = taken, 0 = not ours.
parsed_reply<renewal> parse_renewal_reply(const redis_reply& reply);

/// `{1, ""}` = the token was written; `{0, why}` = not written (value false,
/// detail = why: the lease is not ours there, the counter is missing or
/// already as large).
parsed_reply<bool> parse_write_back_reply(const redis_reply& reply);

}  // namespace baton::redlock_detail
