// The last word of `baton once` (lease_timing::one_term) before its exit
// line: what became of the job on this node, with the holder's node id and
// token when another node has the lease. Pure, like narration.hpp, so that
// the words cron mails and tests grep are checked as a table.
#pragma once

#include <optional>

#include "baton/election_machine.hpp"
#include "narration.hpp"

namespace baton {

/// The line for a machine that ended its one term and exits with `code`,
/// read at `now`; nullopt for a machine that did not (`baton run`).
std::optional<log_line> one_term_line(const election_machine& m, int code, time_point now);

}  // namespace baton
