// Where each option's value came from, kept beside a config while it is
// built so that a message can point at the right place: the loader records
// it, and a kind's derived defaults and secret rules read and add to it.
#pragma once

#include <map>
#include <string>

namespace baton {

/// By dotted name: "--ttl", "BATON_LEASE_TTL", the file path, or
/// "default: ..." for derived ones.
using option_origins = std::map<std::string, std::string>;

}  // namespace baton
