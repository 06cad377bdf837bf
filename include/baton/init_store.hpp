// `baton init-store`: create the election's record in the store the
// configuration names, so that its first start is not held back as a store
// that lost its data would be. A one-shot client of the store port.
#pragma once

#include <ostream>
#include <system_error>

#include "baton/config.hpp"

namespace baton {

/// Connects with `cfg`'s store settings, creates the record if it is missing,
/// and says what it did on `out` (errors on `err`, naming what to grant or
/// apply). A try that times out is made again, three tries in all (creating
/// the record is idempotent; the timeouts are sized for renewals, not for a
/// busy server's first statement). Returns the exit code: 0 created or already there, 1 the store
/// could not be reached (or did not answer in time), 3 it refused
/// (init_store_exit_code). A bad config is 2, before this runs.
int init_store(const config& cfg, std::ostream& out, std::ostream& err);

/// The exit code for a failed store call: 3 when the store answered with a
/// refusal (store_errc::auth or store_errc::refused: credentials, a missing
/// permission, a lease table it may not create), else 1 (unreachable).
int init_store_exit_code(std::error_code failure);

/// `baton init-store --print`: the schema `cfg`'s store needs (the postgres
/// DDL and grants) on `out`, exit 0; for a store that needs none, says so
/// and exits 0. Connects to nothing.
int print_store_schema(const config& cfg, std::ostream& out);

}  // namespace baton
