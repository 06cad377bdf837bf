// What the election machine is made with: its lease timing, read off the
// configuration (a SIGHUP later changes only the stop timing:
// election_machine::set_stop_timing), and the seed of the generator its
// jitter comes from, the one piece of system randomness it gets.
#pragma once

#include <cstdint>

#include "baton/config.hpp"
#include "baton/election_machine.hpp"

namespace baton {

/// The machine's timing from the validated `cfg`.
lease_timing lease_timing_of(const config& cfg);

/// A seed from std::random_device, different in every run.
std::uint64_t random_seed();

}  // namespace baton
