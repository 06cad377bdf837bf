// `baton init-store`: create the election's record in the store the
// configuration names, so that its first start is not held back as a store
// that lost its data would be. A one-shot client of the store port.
#pragma once

#include <ostream>

#include "baton/config.hpp"

namespace baton {

/// Connects with `cfg`'s store settings, creates the record if it is missing,
/// and says what it did on `out` (errors on `err`). Returns the exit code:
/// 0 created or already there, 1 the store could not be reached or refused.
int init_store(const config& cfg, std::ostream& out, std::ostream& err);

/// `baton init-store --print`: the schema `cfg`'s store needs (the postgres
/// DDL and grants) on `out`, exit 0; for a store that needs none, says so
/// and exits 0. Connects to nothing.
int print_store_schema(const config& cfg, std::ostream& out);

}  // namespace baton
