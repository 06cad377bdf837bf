// Whether a session really is one server session: the check that catches a
// pooler in transaction mode (PgBouncer's pool_mode=transaction and the like).
//
// Such a pooler hands each transaction whichever server session is free, so
// LISTEN and the session settings stay behind on a server session that other
// clients then use. A lone client usually gets the same server session back
// every time (PgBouncer reuses the last one freed), so a probe notification
// does come back and the fault shows only later, under load. The check makes
// it show at once: when the server's pid for the session differs from the one
// libpq was told at connect (a proxy is in between), a second connection opens
// a transaction, which takes the server session just freed, and the session's
// next statement must still run in the same server process.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>

#include "baton/lease_store.hpp"
#include "pg_connection.hpp"

namespace baton::postgres_detail {

/// Runs the check on `session` (connected); `helper_options` connect the
/// second session when one is needed. `done` gets nullopt when the session is
/// pinned to one server session, else the error to report. The returned
/// function abandons the check (closing its second session); `done` then gets
/// an operation_aborted error.
std::function<void()> check_session_pinned(boost::asio::io_context& io, std::shared_ptr<connection> session,
                          connection_options helper_options,
                          std::function<void(std::optional<store_error>)> done);

}  // namespace baton::postgres_detail
